"""HTTP/2 on the socket door, through real clients: curl (--http2-prior-knowledge, --http2's
Upgrade: h2c, ALPN h2 over TLS) and the `h2` library (several streams on one connection, delays,
SSE as DATA frames, faults as RST_STREAM), then hostile peers: rapid reset, a CONTINUATION flood,
a shut flow-control window and too many streams, each ending with the server serving others."""
from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import textwrap
import time

import h2.config
import h2.connection
import h2.events
import h2.settings
import hpack
import moonmock
import pytest

BINARY = os.environ.get("MOONMOCK_BIN")

SCRIPT = textwrap.dedent(
    """
    mock.get("/hello", { hello = "world" })
    mock.post("/echo", function(req)
      return mock.json({ got = req.json, method = req.method, host = req.headers.host,
                         scheme = req.scheme, agent = req.headers["user-agent"] }, { status = 201, headers = { ["x-moon"] = "yes" } })
    end)
    mock.get("/slow", mock.json({ slow = true }, { delay = 400 }))
    mock.get("/fast", { fast = true })
    mock.get("/events", mock.sse({ { data = "one" }, { data = "two" }, { data = "three" } }, { interval = 150 }))
    mock.get("/reset", mock.fault("connection_reset"))
    mock.get("/held", mock.fault("timeout"))
    mock.get("/big", function() return mock.text(string.rep("x", 1000000)) end)
    mock.get("/wait", function() mock.sleep(100); return { waited = true } end)
    mock.get("/nothing", mock.text("", { status = 204 }))
    mock.get("/upstream/*", mock.proxy("http://127.0.0.1:UPSTREAM"))
    """
)


@pytest.fixture(scope="module")
def upstream():
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"upstream": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory, upstream):
    folder = tmp_path_factory.mktemp("h2")
    (folder / "mocks.lua").write_text(SCRIPT.replace("UPSTREAM", str(upstream)))
    with moonmock.serve(folder / "mocks.lua", binary=BINARY, args=["--send-timeout", "2", "--threads", "1", "--max-pending-output", "60000000"]) as mm:
        yield mm


def port_of(server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def curl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-s", "--max-time", "10", *args], capture_output=True, text=True, timeout=20)


# MARK: curl

def test_curl_prior_knowledge_gets_the_rule_over_http2(server):
    out = curl("--http2-prior-knowledge", "-D", "-", "-w", "\nversion=%{http_version}", server.url + "/hello")
    assert out.stdout.startswith("HTTP/2 200"), out.stdout
    assert "version=2" in out.stdout
    assert re.search(r"^content-type: application/json", out.stdout, re.M)
    assert re.search(r"^date: ", out.stdout, re.M)
    assert '{"hello":"world"}' in out.stdout


def test_curl_upgrade_h2c_switches_and_answers_the_first_request_as_stream_1(server):
    out = curl("--http2", "-D", "-", "-w", "\nversion=%{http_version}", "-H", "content-type: application/json",
               "-d", '{"n":1}', server.url + "/echo")
    assert "101 Switching Protocols" in out.stdout, out.stdout
    assert "HTTP/2 201" in out.stdout and "version=2" in out.stdout
    body = json.loads(out.stdout.split("\n\n")[-1].split("\nversion=")[0])
    assert body["got"] == {"n": 1} and body["method"] == "POST" and body["agent"].startswith("curl/")
    assert body["host"] == f"127.0.0.1:{port_of(server)}"


def test_request_body_method_and_headers_reach_the_rule_as_over_http1(server):
    out = curl("--http2-prior-knowledge", "-D", "-", "-H", "content-type: application/json", "-d", '{"a":[1,2]}', server.url + "/echo")
    assert out.stdout.startswith("HTTP/2 201")
    assert re.search(r"^x-moon: yes", out.stdout, re.M)
    body = json.loads(out.stdout.split("\n\n", 1)[1])
    assert body == {"got": {"a": [1, 2]}, "method": "POST", "host": f"127.0.0.1:{port_of(server)}", "scheme": "http",
                    "agent": body["agent"]}


def test_admin_api_and_journal_over_http2(server):
    curl("--http2-prior-knowledge", server.url + "/hello")
    out = curl("--http2-prior-knowledge", server.url + "/__moonmock/requests?limit=50")
    entries = json.loads(out.stdout)
    entries = entries.get("requests", entries) if isinstance(entries, dict) else entries
    assert any(e.get("url", "").endswith("/hello") for e in entries), out.stdout[:500]


def test_tls_alpn_h2_with_curl(tmp_path):
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, args=["--tls", "self-signed"]) as mm:
        out = curl("--http2", "--cacert", str(mm.ca_file), "-w", "\nversion=%{http_version}", mm.url + "/hello")
        assert out.stdout.endswith("version=2"), out.stdout + out.stderr
        assert '{"hello":"world"}' in out.stdout
        out = curl("--http1.1", "--cacert", str(mm.ca_file), "-w", "\nversion=%{http_version}", mm.url + "/hello")
        assert out.stdout.endswith("version=1.1")


def test_http2_off_refuses_prior_knowledge_and_ignores_upgrade(tmp_path):
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, args=["--http2", "off"]) as mm:
        assert curl("--http2-prior-knowledge", mm.url + "/hello").returncode != 0
        out = curl("--http2", "-w", "\nversion=%{http_version}", mm.url + "/hello")
        assert out.stdout.endswith("version=1.1") and '{"hello":"world"}' in out.stdout
        # And the server still serves HTTP/1.1 after the refused preface.
        assert '{"hello":"world"}' in curl(mm.url + "/hello").stdout


# MARK: the h2 library

class Client:
    """A minimal HTTP/2 client on a raw socket, with the h2 library's state machine."""

    def __init__(self, port: int, settings: dict | None = None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.sock.sendall(self.conn.data_to_send())
        self.events: list = []

    def get(self, path: str, end: bool = True) -> int:
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(sid, [(":method", "GET"), (":path", path), (":scheme", "http"), (":authority", "mock.test")], end_stream=end)
        self.sock.sendall(self.conn.data_to_send())
        return sid

    def pump(self, until, timeout: float = 10) -> list:
        deadline = time.monotonic() + timeout
        while not until(self.events):
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = self.sock.recv(65536)
            if not data:
                break
            for event in self.conn.receive_data(data):
                self.events.append((time.monotonic(), event))
                if isinstance(event, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            out = self.conn.data_to_send()
            if out:
                self.sock.sendall(out)
            if time.monotonic() > deadline:
                break
        return self.events

    def ended(self, sid: int):
        return lambda events: any(isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)) and e.stream_id == sid for _, e in events)

    def body(self, sid: int) -> bytes:
        return b"".join(e.data for _, e in self.events if isinstance(e, h2.events.DataReceived) and e.stream_id == sid)

    def status(self, sid: int) -> str | None:
        for _, e in self.events:
            if isinstance(e, h2.events.ResponseReceived) and e.stream_id == sid:
                return dict(e.headers)[":status"]
        return None

    def close(self):
        self.sock.close()


def test_streams_on_one_connection_answer_independently(server):
    c = Client(port_of(server))
    slow = c.get("/slow")
    fast = c.get("/fast")
    c.pump(lambda ev: c.ended(slow)(ev) and c.ended(fast)(ev))
    ends = {e.stream_id: t for t, e in c.events if isinstance(e, h2.events.StreamEnded)}
    assert json.loads(c.body(fast)) == {"fast": True} and json.loads(c.body(slow)) == {"slow": True}
    assert ends[fast] < ends[slow] - 0.2, "the delayed stream held back the fast one"
    c.close()


def test_sse_events_arrive_as_data_frames_over_time(server):
    c = Client(port_of(server))
    sid = c.get("/events")
    c.pump(c.ended(sid))
    frames = [(t, e.data) for t, e in c.events if isinstance(e, h2.events.DataReceived) and e.stream_id == sid and e.data]
    text = b"".join(d for _, d in frames).decode()
    assert "data: one" in text and "data: three" in text
    assert frames[-1][0] - frames[0][0] >= 0.2, "the events came at once"
    c.close()


def test_fault_resets_only_its_stream(server):
    c = Client(port_of(server))
    broken = c.get("/reset")
    fine = c.get("/hello")
    c.pump(lambda ev: c.ended(broken)(ev) and c.ended(fine)(ev))
    resets = [e for _, e in c.events if isinstance(e, h2.events.StreamReset) and e.stream_id == broken]
    assert resets and resets[0].error_code == 2   # INTERNAL_ERROR
    assert json.loads(c.body(fine)) == {"hello": "world"}
    c.close()


def test_waiting_handler_and_large_body_and_no_content(server):
    c = Client(port_of(server))
    wait, big, none = c.get("/wait"), c.get("/big"), c.get("/nothing")
    c.pump(lambda ev: all(c.ended(s)(ev) for s in (wait, big, none)))
    assert json.loads(c.body(wait)) == {"waited": True}
    assert c.body(big) == b"x" * 1000000
    assert c.status(none) == "204" and c.body(none) == b""
    c.close()


def test_proxied_streams_come_back_on_their_own_streams(server):
    c = Client(port_of(server))
    first, second = c.get("/upstream/a"), c.get("/upstream/b")
    c.pump(lambda ev: c.ended(first)(ev) and c.ended(second)(ev))
    assert json.loads(c.body(first)) == {"upstream": "/upstream/a"} and json.loads(c.body(second)) == {"upstream": "/upstream/b"}
    c.close()


def test_unknown_route_gets_the_near_miss_404(server):
    c = Client(port_of(server))
    sid = c.get("/nowhere")
    c.pump(c.ended(sid))
    assert c.status(sid) == "404"
    c.close()


# MARK: hostile peers

def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"")


def read_until_closed(sock: socket.socket, timeout: float = 10) -> bytes:
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    return data


def goaway_codes(data: bytes) -> list[int]:
    codes, i = [], 0
    while i + 9 <= len(data):
        length = int.from_bytes(data[i:i + 3], "big")
        if data[i + 3] == 7 and i + 9 + 8 <= len(data):
            codes.append(int.from_bytes(data[i + 13:i + 17], "big"))
        i += 9 + length
    return codes


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s*(\d+) kB", f.read()).group(1))


def server_pid(port: int) -> int:
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    return int(re.search(r"pid=(\d+)", out).group(1))


def flood(server, payload: bytes) -> bytes:
    """Sends a hostile client's bytes in one go and reads what comes back until the server closes."""
    s = socket.create_connection(("127.0.0.1", port_of(server)), timeout=10)
    try:
        s.sendall(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass
    data = read_until_closed(s)
    s.close()
    return data


def still_serves(server) -> None:
    out = curl("--http2-prior-knowledge", server.url + "/hello")
    assert out.stdout == '{"hello":"world"}', out


def test_rapid_reset_gets_goaway_and_the_server_serves_others(server):
    pid = server_pid(port_of(server))
    before = rss_kb(pid)
    encoder = hpack.Encoder()
    block = encoder.encode([(":method", "GET"), (":path", "/slow"), (":scheme", "http"), (":authority", "x")])
    payload = bytearray(PREFACE)
    for n in range(5000):
        sid = 2 * n + 1
        payload += frame(1, 0x5, sid, block) + frame(3, 0, sid, struct.pack(">I", 8))   # HEADERS, then RST_STREAM CANCEL
    data = flood(server, bytes(payload))
    assert 11 in goaway_codes(data), goaway_codes(data)   # ENHANCE_YOUR_CALM
    still_serves(server)
    assert rss_kb(pid) - before < 50_000, (before, rss_kb(pid))


def test_continuation_flood_is_cut_off(server):
    pid = server_pid(port_of(server))
    before = rss_kb(pid)
    encoder = hpack.Encoder()
    block = encoder.encode([(":method", "GET"), (":path", "/hello"), (":scheme", "http"), (":authority", "x")])
    payload = bytearray(PREFACE) + frame(1, 0x1, 1, block)   # HEADERS without END_HEADERS
    filler = encoder.encode([("x-filler", "a" * 100)])
    for _ in range(2000):
        payload += frame(9, 0, 1, filler)
    data = flood(server, bytes(payload))
    assert goaway_codes(data), "no GOAWAY"
    still_serves(server)
    assert rss_kb(pid) - before < 50_000, (before, rss_kb(pid))


def test_too_many_streams_are_refused_beyond_the_limit(server):
    c = Client(port_of(server))
    c.pump(lambda ev: any(isinstance(e, h2.events.RemoteSettingsChanged) for _, e in ev))
    assert c.conn.remote_settings.max_concurrent_streams == 100
    # The h2 library keeps to the limit: frames are written by hand past it.
    encoder = hpack.Encoder()
    block = encoder.encode([(":method", "GET"), (":path", "/held"), (":scheme", "http"), (":authority", "x")])
    raw = b"".join(frame(1, 0x5, 2 * n + 1, block) for n in range(150))
    s = socket.create_connection(("127.0.0.1", port_of(server)), timeout=10)
    s.sendall(PREFACE + frame(4, 1, 0, b""))
    time.sleep(0.2)
    s.sendall(raw)
    data = read_until_closed(s, timeout=3)
    s.close()
    # Past 100 open streams: the stream is refused (RST_STREAM) or the connection ends (GOAWAY).
    kinds = set()
    i = 0
    while i + 9 <= len(data):
        kinds.add(data[i + 3])
        i += 9 + int.from_bytes(data[i:i + 3], "big")
    assert 3 in kinds or 7 in kinds, kinds
    c.close()
    still_serves(server)


def test_shut_window_holds_memory_bounded_and_drops_the_connection(server):
    pid = server_pid(port_of(server))
    before = rss_kb(pid)
    clients = []
    for _ in range(10):
        c = Client(port_of(server), settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        for _ in range(20):
            c.get("/big")
        clients.append(c)
    time.sleep(0.5)
    still_serves(server)
    during = rss_kb(pid)
    # 200 answers of 1 MB each wait for windows that never open: nothing of them has been sent,
    # and the send timeout (2 s here) drops the connections.
    assert during - before < 150_000, (before, during)
    for c in clients:
        data = read_until_closed(c.sock, timeout=8)
        assert len(data) < 100_000
        c.close()
    still_serves(server)

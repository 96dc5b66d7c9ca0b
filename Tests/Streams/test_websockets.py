"""WebSockets on the socket server, driven by the `websockets` client (and raw sockets for
what a well-behaved client never sends): echo, JSON, binary, broadcasts, timers, pushes from
the admin API, ping, fragments, the close handshake both ways, protocol errors, the journal."""
from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import textwrap
import time

import moonmock
import pytest
import websockets

SCRIPT = textwrap.dedent(
    """
    mock.websocket("/chat/:room", {
      on_open = function(ws, req) ws:send { hello = req.params.room, id = ws.id } end,
      on_message = function(ws, msg)
        if msg.binary then return ws:send_binary(msg.binary:reverse()) end
        if msg.text == "bye" then return ws:close(4000, "see you") end
        if msg.text == "broadcast" then
          for _, other in ipairs(mock.websockets("/chat/:room")) do other:send("to all") end
          return
        end
        if msg.text == "later" then return ws:after(100, function(w) w:send("later!") end) end
        local ok, value = pcall(mock.json.decode, msg.text)
        if ok and type(value) == "table" then return ws:send { got = value } end
        ws:send("echo: " .. msg.text)
      end,
      on_close = function(ws, code, reason) mock.state:set("closed:" .. ws.id, code .. " " .. reason) end,
    })
    """
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("websockets")
    (folder / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(folder / "mocks.lua", binary=os.environ.get("MOONMOCK_BIN"), args=["--max-body", "4096"]) as mm:
        yield mm


def ws_url(server, path: str) -> str:
    return server.url.replace("http://", "ws://") + path


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 20))


def test_echo_json_binary_and_the_greeting(server) -> None:
    async def scenario():
        async with websockets.connect(ws_url(server, "/chat/lobby")) as ws:
            hello = json.loads(await ws.recv())
            assert hello["hello"] == "lobby" and isinstance(hello["id"], int)
            await ws.send("hi")
            assert await ws.recv() == "echo: hi"
            await ws.send(json.dumps({"n": 1}))
            assert json.loads(await ws.recv()) == {"got": {"n": 1}}
            await ws.send(b"\x01\x02\x03")
            assert await ws.recv() == b"\x03\x02\x01"
            await ws.ping()   # answered with a pong: the library checks it
            await ws.send(iter(["frag", "mented"]))   # one message in three frames
            assert await ws.recv() == "echo: fragmented"
            return hello["id"]
    socket_id = run(scenario())
    entry = next(e for e in server.requests() if e["id"] == socket_id)
    assert entry["status"] == 101
    sent = entry["websocket"]["sent"]
    assert any(m["direction"] == "in" and m["text"] == "hi" for m in sent)
    assert any(m["direction"] == "out" and m["text"] == "echo: hi" for m in sent)


def test_broadcast_timer_and_a_push_from_the_admin_api(server) -> None:
    async def scenario():
        async with websockets.connect(ws_url(server, "/chat/a")) as a, websockets.connect(ws_url(server, "/chat/b")) as b:
            await a.recv(); b_hello = json.loads(await b.recv())
            await a.send("broadcast")
            assert await a.recv() == "to all" and await b.recv() == "to all"
            started = time.monotonic()
            await a.send("later")
            assert await a.recv() == "later!"
            assert time.monotonic() - started >= 0.09
            listed = server._call("GET", "/__moonmock/websockets")
            assert b_hello["id"] in [s["id"] for s in listed]
            server._call("POST", f"/__moonmock/websockets/{b_hello['id']}/send", {"json": {"pushed": True}})
            assert json.loads(await b.recv()) == {"pushed": True}
            server._call("POST", f"/__moonmock/websockets/{b_hello['id']}/send", {"binary_base64": base64.b64encode(b"\x00\xff").decode()})
            assert await b.recv() == b"\x00\xff"
    run(scenario())


def test_close_handshake_both_ways(server) -> None:
    async def scenario():
        async with websockets.connect(ws_url(server, "/chat/x")) as ws:
            first = json.loads(await ws.recv())
            await ws.send("bye")
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd.code == 4000 and closed.value.rcvd.reason == "see you"
        async with websockets.connect(ws_url(server, "/chat/y")) as ws:
            second = json.loads(await ws.recv())
            await ws.close(code=4321, reason="done here")
        return first["id"], second["id"]
    first, second = run(scenario())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and server._call("GET", "/__moonmock/state").get(f"closed:{second}") is None:
        time.sleep(0.05)
    state = server._call("GET", "/__moonmock/state")
    assert state[f"closed:{second}"] == "4321 done here"
    assert state[f"closed:{first}"].startswith("4000")


def raw_upgrade(server, path: str = "/chat/raw") -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def read_frame(sock: socket.socket) -> tuple[int, bytes]:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data
    b0, b1 = exactly(2)
    length = b1 & 0x7F
    if length == 126:
        length = struct.unpack(">H", exactly(2))[0]
    elif length == 127:
        length = struct.unpack(">Q", exactly(8))[0]
    return b0 & 0x0F, exactly(length)


def masked(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    mask = os.urandom(4)
    header = bytes([(0x80 if fin else 0) | opcode])
    if len(payload) < 126:
        header += bytes([0x80 | len(payload)])
    else:
        header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


@pytest.mark.parametrize("frame, code", [
    (bytes([0x81, 0x02]) + b"hi", 1002),                 # not masked
    (masked(0x1, b"\xff\xfe"), 1007),                    # text that is not UTF-8
    (masked(0x2, b"x" * 5000), 1009),                    # larger than the limit (4096)
    (masked(0x9, b"p", fin=False), 1002),                # a fragmented control frame
    (masked(0x0, b"orphan"), 1002),                      # a continuation outside a message
])
def test_protocol_errors_close_with_the_right_code(server, frame: bytes, code: int) -> None:
    with raw_upgrade(server) as sock:
        opcode, _ = read_frame(sock)   # the greeting
        assert opcode == 1
        sock.sendall(frame)
        opcode, payload = read_frame(sock)
        assert opcode == 8
        assert struct.unpack(">H", payload[:2])[0] == code
        assert sock.recv(10) == b""   # then the server closes


def test_a_plain_request_gets_426(server) -> None:
    import urllib.error
    import urllib.request
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(server.url + "/chat/plain", timeout=10)
    assert refused.value.code == 426
    assert refused.value.headers["Upgrade"] == "websocket"


def test_wss_over_the_self_signed_certificate(tmp_path) -> None:
    import ssl
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    home = tmp_path / "home"
    home.mkdir()
    with moonmock.serve(tmp_path / "mocks.lua", binary=os.environ.get("MOONMOCK_BIN"), args=["--tls", "self-signed"],
                        env={"HOME": str(home)}) as mm:
        context = ssl.create_default_context(cafile=mm.ca_file)

        async def scenario():
            async with websockets.connect(mm.url.replace("https://", "wss://") + "/chat/secure", ssl=context) as ws:
                assert json.loads(await ws.recv())["hello"] == "secure"
                await ws.send("over TLS")
                assert await ws.recv() == "echo: over TLS"
        run(scenario())

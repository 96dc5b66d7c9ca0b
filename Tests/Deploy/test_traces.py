"""OpenTelemetry traces: `moonmock serve` with OTEL_EXPORTER_OTLP_ENDPOINT set exports a span per
request to a small OTLP/HTTP receiver on loopback (decoded with opentelemetry-proto's messages):
names after the rule, parents from `traceparent`, attributes, client spans for mock.fetch,
mock.proxy and webhooks with `traceparent` sent on, JSON and gzip, and a server that keeps serving
— and counts what it dropped — when the receiver is gone or hangs."""
from __future__ import annotations

import gzip
import http.server
import json
import os
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import moonmock
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from prometheus_client.parser import text_string_to_metric_families

BINARY = os.environ.get("MOONMOCK_BIN")
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
SERVER, CLIENT = 2, 3


class Receiver:
    """An OTLP/HTTP collector on loopback: every span posted to /v1/traces, as a dict."""

    def __init__(self, port: int = 0, hang: bool = False, refuse: int = 0):
        self.spans: list[dict] = []
        self.refuse = refuse   # answer this many exports 503 first
        self.posts = 0
        self.resources: list[dict] = []
        self.encodings: set[str] = set()
        self.hang = hang
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts += 1
                if receiver.hang:
                    time.sleep(3)
                    return
                if receiver.refuse > 0:
                    receiver.refuse -= 1
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.encodings.add(f'{self.headers.get("Content-Type")} {self.headers.get("Content-Encoding", "")}'.strip())
                if self.headers["Content-Type"] == "application/json":
                    receiver.take_json(json.loads(body))
                else:
                    request = trace_service_pb2.ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    receiver.take_protobuf(request)
                answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", self.headers["Content-Type"])
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def take_protobuf(self, request):
        def value(v):
            return getattr(v, v.WhichOneof("value"))
        for rs in request.resource_spans:
            self.resources.append({a.key: value(a.value) for a in rs.resource.attributes})
            for ss in rs.scope_spans:
                for s in ss.spans:
                    self.spans.append({
                        "trace": s.trace_id.hex(), "id": s.span_id.hex(), "parent": s.parent_span_id.hex(), "name": s.name,
                        "kind": s.kind, "start": s.start_time_unix_nano, "end": s.end_time_unix_nano, "flags": s.flags,
                        "attributes": {a.key: value(a.value) for a in s.attributes},
                        "error": s.status.message if s.status.code == 2 else None, "scope": ss.scope.name,
                    })

    def take_json(self, request):
        def value(v):
            (kind, x), = v.items()
            return int(x) if kind == "intValue" else x
        for rs in request["resourceSpans"]:
            self.resources.append({a["key"]: value(a["value"]) for a in rs["resource"]["attributes"]})
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    self.spans.append({
                        "trace": s["traceId"], "id": s["spanId"], "parent": s.get("parentSpanId", ""), "name": s["name"],
                        "kind": s["kind"], "start": int(s["startTimeUnixNano"]), "end": int(s["endTimeUnixNano"]),
                        "flags": s["flags"], "attributes": {a["key"]: value(a["value"]) for a in s["attributes"]},
                        "error": s["status"]["message"] if s.get("status", {}).get("code") == 2 else None, "scope": ss["scope"]["name"],
                    })

    def wait_for(self, predicate, what: str, timeout: float = 10.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [s for s in list(self.spans) if predicate(s)]
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no span {what} within {timeout} s; got {[s['name'] for s in self.spans]}")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Upstream:
    """A service the handlers call: records each request's path and `traceparent`."""

    def __init__(self):
        self.seen: list[tuple[str, str | None]] = []
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                upstream.seen.append((self.path, self.headers.get("traceparent")))
                time.sleep(0.05)
                body = b'{"ok":true}'
                self.send_response(203)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = answer

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def script(upstream: str) -> str:
    return f"""
local UP = "{upstream}"
mock.get("/users/:id", function(req) return {{ id = tonumber(req.params.id) }} end)
mock.get("/boom", function() error("kaboom") end)
mock.get("/flaky", {{ ok = true }}, {{ chaos = {{ fault = "connection_reset", fault_rate = 1 }} }})
mock.get("/slow", mock.json({{ ok = true }}, {{ delay = 150 }}))
mock.get("/fetch", function(req)
  local res = mock.fetch(UP .. "/data")
  mock.webhook {{ url = UP .. "/hook", json = {{ done = true }} }}
  return {{ upstream = res.status }}
end)
mock.any("/up/*rest", mock.proxy(UP))
"""


def env(receiver: Receiver, **extra: str) -> dict:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": "mocks-under-test",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci,team=pay%20ments", **extra}


def get(url: str, headers: dict | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def scrape(url: str) -> dict:
    with urllib.request.urlopen(url + "/__moonmock/metrics", timeout=5) as r:
        text = r.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text) for s in f.samples}


@pytest.fixture
def upstream():
    u = Upstream()
    yield u
    u.close()


def serve(tmp_path: Path, upstream: Upstream, environment: dict):
    (tmp_path / "mocks.lua").write_text(script(upstream.url))
    return moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, env=environment)


def test_request_spans_named_after_rules_children_of_traceparent(tmp_path, upstream):
    receiver = Receiver()
    try:
        with serve(tmp_path, upstream, env(receiver)) as mm:
            incoming = f"00-{TRACE}-{PARENT}-01"
            assert get(mm.url + "/users/7?full=1", {"traceparent": incoming, "tracestate": "vendor=x1", "User-Agent": "trace-test"}) == 200
            assert get(mm.url + "/nowhere") == 404
            assert get(mm.url + "/boom") == 500
            with pytest.raises(Exception):
                get(mm.url + "/flaky")
            started = time.monotonic()
            assert get(mm.url + "/slow") == 200
            assert time.monotonic() - started >= 0.14

            user, = receiver.wait_for(lambda s: s["name"] == "GET /users/:id", "for the rule")
            assert user["kind"] == SERVER and user["trace"] == TRACE and user["parent"] == PARENT
            assert user["flags"] & 0x301 == 0x301   # sampled, and the parent is remote
            a = user["attributes"]
            assert a["http.request.method"] == "GET" and a["http.route"] == "/users/:id" and a["url.path"] == "/users/7"
            assert a["url.query"] == "full=1" and a["http.response.status_code"] == 200 and a["user_agent.original"] == "trace-test"
            assert a["moonmock.rule"] == "GET /users/:id" and a["moonmock.rule.location"] == "mocks.lua:3"
            assert a["code.file.path"] == "mocks.lua" and a["code.line.number"] == 3 and a["moonmock.matched"] is True
            assert a["moonmock.door"] == "socket" and a["moonmock.request_id"] >= 1
            assert user["error"] is None and user["end"] > user["start"] and user["scope"] == "moonmock"

            unmatched, = receiver.wait_for(lambda s: s["attributes"].get("url.path") == "/nowhere", "for the unmatched request")
            assert unmatched["name"] == "GET" and unmatched["attributes"]["moonmock.matched"] is False
            assert unmatched["attributes"]["http.response.status_code"] == 404 and unmatched["parent"] == ""
            assert unmatched["trace"] != TRACE and len(unmatched["trace"]) == 32 and unmatched["error"] is None

            boom, = receiver.wait_for(lambda s: s["name"] == "GET /boom", "for the failing handler")
            assert boom["attributes"]["http.response.status_code"] == 500 and "kaboom" in boom["attributes"]["moonmock.handler_error"]
            assert "kaboom" in boom["error"]

            flaky, = receiver.wait_for(lambda s: s["name"] == "GET /flaky", "for the chaos rule")
            assert flaky["attributes"]["moonmock.chaos"] == "fault" and flaky["attributes"]["moonmock.fault"] == "connection_reset"
            assert flaky["error"] == "fault: connection_reset" and "http.response.status_code" not in flaky["attributes"]

            slow, = receiver.wait_for(lambda s: s["name"] == "GET /slow", "for the delayed answer")
            assert slow["attributes"]["moonmock.delay_ms"] == 150 and slow["end"] - slow["start"] >= 150_000_000

            resource = receiver.resources[0]
            assert resource["service.name"] == "mocks-under-test" and resource["deployment.environment"] == "ci"
            assert resource["team"] == "pay ments" and resource["telemetry.sdk.language"] == "swift"
            assert receiver.encodings == {"application/x-protobuf"}
            m = scrape(mm.url)
            assert m[("moonmock_trace_spans_exported_total", ())] >= 5
            assert m[("moonmock_trace_spans_dropped_total", (("reason", "queue_full"),))] == 0
    finally:
        receiver.close()


def test_fetch_proxy_and_webhook_are_client_spans_that_send_traceparent(tmp_path, upstream):
    receiver = Receiver()
    try:
        with serve(tmp_path, upstream, env(receiver)) as mm:
            assert get(mm.url + "/fetch", {"traceparent": f"00-{TRACE}-{PARENT}-01"}) == 200
            assert get(mm.url + "/up/items?x=1", {"traceparent": f"00-{TRACE}-{PARENT}-01"}) == 203
            # An unsampled parent: nothing is exported, and the upstream is told so.
            other = "0af7651916cd43dd8448eb211c80319c"
            assert get(mm.url + "/up/quiet", {"traceparent": f"00-{other}-b7ad6b7169203331-00"}) == 203

            server, = receiver.wait_for(lambda s: s["name"] == "GET /fetch", "for the request")
            fetch, = receiver.wait_for(lambda s: s["attributes"].get("moonmock.call") == "fetch", "for mock.fetch")
            hook, = receiver.wait_for(lambda s: s["attributes"].get("moonmock.call") == "webhook", "for the webhook")
            assert server["parent"] == PARENT and server["trace"] == TRACE
            for client, method, path in [(fetch, "GET", "/data"), (hook, "POST", "/hook")]:
                assert client["kind"] == CLIENT and client["name"] == method and client["trace"] == TRACE
                assert client["parent"] == server["id"] and client["flags"] & 0x300 == 0x100   # a local parent
                assert client["attributes"]["url.full"] == upstream.url + path and client["attributes"]["http.response.status_code"] == 203
                assert client["attributes"]["server.address"] == "127.0.0.1"
                assert (path, f"00-{TRACE}-{client['id']}-01") in upstream.seen
            assert fetch["start"] >= server["start"] and fetch["end"] <= server["end"]

            proxied, = receiver.wait_for(lambda s: s["name"] == "GET /up/*rest", "for the proxied request")
            forward, = receiver.wait_for(lambda s: s["attributes"].get("moonmock.call") == "proxy", "for mock.proxy")
            assert proxied["parent"] == PARENT and proxied["attributes"]["http.response.status_code"] == 203
            assert forward["parent"] == proxied["id"] and forward["attributes"]["url.full"] == upstream.url + "/up/items?x=1"
            assert ("/up/items?x=1", f"00-{TRACE}-{forward['id']}-01") in upstream.seen
            # The request's span lasts until the upstream answered (it waits 50 ms).
            assert proxied["end"] >= forward["end"] and proxied["end"] - proxied["start"] >= 50_000_000

            quiet = [p for p in upstream.seen if p[0] == "/up/quiet"]
            assert quiet and quiet[0][1].startswith(f"00-{other}-") and quiet[0][1].endswith("-00")
            assert not quiet[0][1].startswith(f"00-{other}-b7ad6b7169203331")
            time.sleep(0.5)
            assert not [s for s in receiver.spans if s["trace"] == other]
    finally:
        receiver.close()


def test_json_gzip_and_rpc_names(tmp_path, upstream):
    receiver = Receiver()
    shutil.copy(Path(__file__).parent.parent / "GRPC" / "shop.proto", tmp_path / "shop.proto")
    (tmp_path / "mocks.lua").write_text('mock.proto("shop.proto")\nmock.grpc("shop.v1.Orders/GetOrder", { id = "1" })\n')
    try:
        environment = env(receiver, OTEL_EXPORTER_OTLP_PROTOCOL="http/json", OTEL_EXPORTER_OTLP_COMPRESSION="gzip")
        with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, env=environment) as mm:
            request = urllib.request.Request(mm.url + "/shop.v1.Orders/GetOrder", data=b"\x00\x00\x00\x00\x00", method="POST",
                                             headers={"Content-Type": "application/grpc-web+proto"})
            with urllib.request.urlopen(request, timeout=5) as r:
                r.read()
            span, = receiver.wait_for(lambda s: s["name"] == "shop.v1.Orders/GetOrder", "for the gRPC-Web call")
            a = span["attributes"]
            assert a["rpc.system"] == "grpc" and a["rpc.service"] == "shop.v1.Orders" and a["rpc.method"] == "GetOrder"
            assert a["rpc.grpc.status_code"] == 0 and span["kind"] == SERVER and len(span["id"]) == 16
            assert receiver.encodings == {"application/json gzip"}
    finally:
        receiver.close()


def test_a_refused_export_is_tried_again(tmp_path, upstream):
    receiver = Receiver(refuse=2)
    try:
        with serve(tmp_path, upstream, env(receiver)) as mm:
            assert get(mm.url + "/users/5") == 200
            receiver.wait_for(lambda s: s["attributes"].get("url.path") == "/users/5", "after two 503s")
            assert receiver.posts == 3
            m = scrape(mm.url)
            assert m[("moonmock_trace_export_failures_total", ())] == 0
            assert m[("moonmock_trace_spans_dropped_total", (("reason", "export_failed"),))] == 0
            assert m[("moonmock_trace_spans_exported_total", ())] == 1
    finally:
        receiver.close()


def test_spans_waiting_at_the_stop_are_sent(tmp_path, upstream):
    receiver = Receiver()
    try:
        # A batch would wait a minute: only the stop's flush can send it.
        mm = serve(tmp_path, upstream, env(receiver, OTEL_BSP_SCHEDULE_DELAY="60000"))
        assert get(mm.url + "/users/77") == 200
        time.sleep(0.3)
        assert not receiver.spans
        assert mm.stop() == 0
        receiver.wait_for(lambda s: s["attributes"].get("url.path") == "/users/77", "after the stop", timeout=1)
    finally:
        receiver.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_collector_gone_or_hanging_the_server_keeps_serving_and_counts(tmp_path, upstream):
    port = free_port()
    receiver = Receiver(port)
    environment = env(receiver, OTEL_EXPORTER_OTLP_TIMEOUT="300", OTEL_BSP_MAX_QUEUE_SIZE="20", OTEL_BSP_MAX_EXPORT_BATCH_SIZE="5")
    with serve(tmp_path, upstream, environment) as mm:
        assert get(mm.url + "/users/1") == 200
        receiver.wait_for(lambda s: s["attributes"].get("url.path") == "/users/1", "before the collector goes")
        receiver.close()
        # Away: every request still answered at once; the spans are dropped and counted.
        for i in range(30):
            started = time.monotonic()
            assert get(mm.url + f"/users/{i}") == 200
            assert time.monotonic() - started < 0.5
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            m = scrape(mm.url)
            if m[("moonmock_trace_export_failures_total", ())] >= 1 and m[("moonmock_trace_spans_dropped_total", (("reason", "export_failed"),))] >= 5:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"no failed export counted: {m}")
        # Hanging: the exports time out (300 ms); the queue fills and drops the rest; requests stay fast.
        hanging = Receiver(port, hang=True)
        try:
            for i in range(60):
                started = time.monotonic()
                assert get(mm.url + f"/users/{i}") == 200
                assert time.monotonic() - started < 0.5
            m = scrape(mm.url)
            assert m[("moonmock_trace_spans_dropped_total", (("reason", "queue_full"),))] >= 1
            assert m[("moonmock_trace_spans_queued", ())] <= 20
        finally:
            hanging.close()
        # Back: spans arrive again.
        back = Receiver(port)
        try:
            time.sleep(1)
            assert get(mm.url + "/users/4242") == 200
            back.wait_for(lambda s: s["attributes"].get("url.path") == "/users/4242", "once the collector is back")
        finally:
            back.close()
        log = "\n".join(mm.output)
        assert f"traces: export to {receiver.url}/v1/traces failed" in log and "spans are dropped and counted" in log
        assert f"traces: {receiver.url}/v1/traces takes spans again" in log
        assert f"traces: OTLP http/protobuf to {receiver.url}/v1/traces as mocks-under-test" in log


def test_no_endpoint_no_traces_and_bad_settings_warn(tmp_path, upstream):
    receiver = Receiver()
    try:
        with serve(tmp_path, upstream, {"OTEL_BSP_SCHEDULE_DELAY": "100"}) as mm:
            assert get(mm.url + "/users/1") == 200
            assert not any(k[0].startswith("moonmock_trace") for k in scrape(mm.url))
        environment = env(receiver, OTEL_TRACES_SAMPLER="sometimes", OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
        (tmp_path / "mocks.lua").write_text(script(upstream.url))
        server = moonmock.Server(tmp_path / "mocks.lua", binary=BINARY, env=environment)
        try:
            assert get(server.url + "/users/2") == 200
            receiver.wait_for(lambda s: s["attributes"].get("url.path") == "/users/2", "with the defaults kept")
        finally:
            server.stop()
        errors = "\n".join(server.errors)
        assert "OTEL_TRACES_SAMPLER=sometimes: not always_on" in errors and "using parentbased_always_on" in errors
        assert "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: spans are exported over OTLP/HTTP only" in errors
    finally:
        receiver.close()

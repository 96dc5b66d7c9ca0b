"""Handlers that call out, against the real binary: webhooks reach a receiver this test runs
(after the answer, delayed, retried, in order), mock.after changes state later, and
verify_outbound / flush_webhooks see it all."""
import http.server
import json
import threading
import time
import urllib.request

import pytest

import moonmock


class Receiver:
    """A webhook receiver on loopback: records each POST (path, body, when); answers 503 to the
    first ``failures`` requests of a path."""

    def __init__(self, failures=None):
        self.calls = []
        self.failures = dict(failures or {})
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.calls.append((self.path, body.decode(), time.monotonic(), self.headers.get("X-Signature")))
                if receiver.failures.get(self.path, 0) > 0:
                    receiver.failures[self.path] -= 1
                    self.send_response(503)
                else:
                    self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver(failures={"/flaky": 2})
    yield r
    r.close()


def script(tmp_path, receiver):
    path = tmp_path / "mocks.lua"
    path.write_text(f"""
mock.post("/payments", function(req)
  local id = mock.uuid()
  mock.webhook {{ url = "{receiver.url}/hooks", json = {{ type = "payment.created", id = id }}, headers = {{ ["X-Signature"] = "s1" }} }}
  mock.webhook {{ url = "{receiver.url}/hooks", json = {{ type = "payment.succeeded", id = id }}, delay = 300 }}
  mock.after(200, function() mock.state:set("payment:" .. id, "succeeded") end)
  return mock.json({{ id = id, status = "pending" }}, {{ status = 202 }})
end)
mock.get("/payments/:id", function(req) return {{ status = mock.state:get("payment:" .. req.params.id) or "pending" }} end)
mock.post("/flaky", function() mock.webhook {{ url = "{receiver.url}/flaky", body = "x", retries = 3, backoff = 50 }}; return "ok" end)
mock.post("/dead", function() mock.webhook {{ url = "http://127.0.0.1:1/x", retries = 1, backoff = 10 }}; return "ok" end)
""")
    return str(path)


def post(url):
    request = urllib.request.Request(url, data=b"{}", method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read()
        return response.status, json.loads(raw) if raw.startswith(b"{") else raw.decode(), time.monotonic()


def test_webhooks_go_after_the_answer_delayed_and_in_order(tmp_path, receiver):
    with moonmock.serve(script(tmp_path, receiver)) as mm:
        status, body, answered = post(mm.url + "/payments")
        assert status == 202 and body["status"] == "pending"
        assert mm.flush_webhooks()["pending"] == 0
        assert [json.loads(c[1])["type"] for c in receiver.calls] == ["payment.created", "payment.succeeded"]
        assert all(json.loads(c[1])["id"] == body["id"] for c in receiver.calls)
        assert receiver.calls[0][3] == "s1"
        assert receiver.calls[0][2] >= answered - 0.25            # not long before the client had its answer
        assert receiver.calls[1][2] - answered >= 0.25            # its delay of 300 ms
        with urllib.request.urlopen(mm.url + "/payments/" + body["id"], timeout=10) as later:
            assert json.loads(later.read())["status"] == "succeeded"   # mock.after ran
        assert mm.verify_outbound(receiver.url + "/hooks", method="POST", times=2) == 2
        assert mm.verify_outbound(path="/hooks", kind="webhook") == 2
        with pytest.raises(AssertionError) as missing:
            mm.verify_outbound(receiver.url + "/other", times=1)
        assert "got 0" in str(missing.value) and "/hooks" in str(missing.value)
        entry = next(e for e in mm.requests() if e["url"].endswith("/payments"))
        assert [c["kind"] for c in entry["outbound"]] == ["webhook", "webhook"] and entry["outbound"][0]["status"] == 204


def test_retries_on_5xx_and_connection_errors(tmp_path, receiver):
    with moonmock.serve(script(tmp_path, receiver)) as mm:
        post(mm.url + "/flaky")
        post(mm.url + "/dead")
        counts = mm.flush_webhooks()
        assert counts["pending"] == 0 and counts["sent"] == 1 and counts["failed"] == 1
        assert [c[0] for c in receiver.calls] == ["/flaky"] * 3      # two 503s, then it went through
        calls = {c["url"]: c for e in mm.requests() for c in e.get("outbound", [])}
        assert calls[receiver.url + "/flaky"]["attempts"] == 3 and calls[receiver.url + "/flaky"]["status"] == 204
        dead = calls["http://127.0.0.1:1/x"]
        assert dead["attempts"] == 2 and dead["status"] is None and "onnect" in dead["error"]


def test_a_thousand_handlers_sleeping_at_once_on_one_worker(tmp_path):
    import asyncio
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    path = tmp_path / "mocks.lua"
    path.write_text('mock.get("/nap", function() mock.sleep(200); return "rested" end)\n')

    async def one(port):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /nap HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await writer.drain()
        data = await reader.read()
        writer.close()
        return data.startswith(b"HTTP/1.1 200") and data.endswith(b"rested")

    async def all_at_once(port):
        started = time.monotonic()
        results = await asyncio.gather(*[one(port) for _ in range(1000)])
        return results, time.monotonic() - started

    with moonmock.serve(str(path), args=["--threads", "1"]) as mm:
        port = int(mm.url.rsplit(":", 1)[1])
        results, elapsed = asyncio.run(all_at_once(port))
        assert all(results) and len(results) == 1000
        assert 0.2 <= elapsed < 1.5, f"1,000 sleeping handlers took {elapsed:.2f} s"

"""GET /__moonmock/metrics scraped after known traffic and parsed with prometheus_client's
own parser: the counters match what was sent; the histogram counts every answer; gauges follow
open connections and streams; reloads and their failures are counted; --metrics off hides it."""
from __future__ import annotations

import http.client
import subprocess
import os
import socket
import time
import urllib.error
import urllib.request

import moonmock
import pytest
from prometheus_client.parser import text_string_to_metric_families

BINARY = os.environ.get("MOONMOCK_BIN")
SCRIPT = """
mock.get("/users/:id", function(req) return { id = tonumber(req.params.id) } end)
mock.post("/orders", mock.json({ ok = true }, { status = 201 }))
mock.get("/boom", function() error("kaboom") end)
mock.get("/events", mock.sse({ { data = "a" }, { data = "b" } }, { interval = 2000 }))
"""


def scrape(url: str) -> dict:
    with urllib.request.urlopen(url + "/__moonmock/metrics", timeout=5) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def get(url: str, path: str, method: str = "GET", body: bytes | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url + path, data=body, method=method), timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_counters_match_known_traffic(tmp_path):
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, watch=True) as mm:
        for i in range(7):
            assert get(mm.url, f"/users/{i}") == 200
        for _ in range(3):
            assert get(mm.url, "/orders", "POST", b"{}") == 201
        for _ in range(2):
            assert get(mm.url, "/nowhere") == 404
        assert get(mm.url, "/boom") == 500
        m = scrape(mm.url)
        key = lambda rule, method, status: ("moonmock_requests_total", (("door", "socket"), ("method", method), ("rule", rule), ("status", status)))
        assert m[key("GET /users/:id", "GET", "200")] == 7
        assert m[key("POST /orders", "POST", "201")] == 3
        assert m[key("", "GET", "404")] == 2
        assert m[("moonmock_unmatched_requests_total", ())] == 2
        assert m[("moonmock_handler_errors_total", (("rule", "GET /boom"),))] == 1
        hist = ("moonmock_request_duration_seconds_count", (("door", "socket"), ("rule", "GET /users/:id")))
        assert m[hist] == 7
        assert m[("moonmock_request_duration_seconds_bucket", (("door", "socket"), ("le", "+Inf"), ("rule", "GET /users/:id")))] == 7
        assert m[("moonmock_request_duration_seconds_sum", (("door", "socket"), ("rule", "GET /users/:id")))] > 0
        assert m[("moonmock_reloads_total", ())] == 0 and m[("moonmock_reload_failures_total", ())] == 0

        # Gauges: a stream held open, and a second connection.
        conn = http.client.HTTPConnection("127.0.0.1", int(mm.url.rsplit(":", 1)[1]), timeout=5)
        conn.request("GET", "/events")
        response = conn.getresponse()
        assert response.status == 200
        response.fp.readline()
        idle = socket.create_connection(("127.0.0.1", int(mm.url.rsplit(":", 1)[1])), timeout=5)
        time.sleep(0.2)
        m = scrape(mm.url)
        assert m[("moonmock_open_streams", ())] == 1
        assert m[("moonmock_open_connections", ())] >= 2
        conn.close()
        idle.close()

        # A reload that fails, then one that succeeds.
        (tmp_path / "mocks.lua").write_text("mock.get(")
        with pytest.raises(moonmock.MoonmockError):
            mm.reload()
        (tmp_path / "mocks.lua").write_text(SCRIPT)
        mm.reload()
        m = scrape(mm.url)
        assert m[("moonmock_reload_failures_total", ())] == 1 and m[("moonmock_reloads_total", ())] >= 1


def test_metrics_off(tmp_path):
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, args=["--metrics", "off"]) as mm:
        assert get(mm.url, "/__moonmock/metrics") == 404


def test_store_metrics_follow_redis(tmp_path):
    import shutil
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    redis = subprocess.Popen([shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        (tmp_path / "mocks.lua").write_text('mock.get("/n", function() return { n = mock.state:incr("n") } end)\n')
        with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, args=["--store", f"redis://127.0.0.1:{port}"]) as mm:
            for _ in range(5):
                assert get(mm.url, "/n") == 200
            m = scrape(mm.url)
            assert m[("moonmock_store_up", ())] == 1 and m[("moonmock_store_errors_total", ())] == 0
            assert m[("moonmock_store_ping_seconds", ())] > 0
            # Each handler's incr waited on its loop's own connection: timed, none failed.
            assert m[("moonmock_store_command_duration_seconds_count", ())] >= 5
            assert m[("moonmock_store_command_duration_seconds_bucket", (("le", "+Inf"),))] == m[("moonmock_store_command_duration_seconds_count", ())]
            assert 0 < m[("moonmock_store_command_duration_seconds_sum", ())] < 5
            assert m[("moonmock_store_command_failures_total", ())] == 0
            redis.terminate()
            redis.wait(timeout=10)
            time.sleep(0.3)
            m = scrape(mm.url)
            assert m[("moonmock_store_up", ())] == 0
            assert m[("moonmock_store_errors_total", ())] >= 1 and m[("moonmock_store_outages_total", ())] == 1
            # A handler's command with Redis gone gets no reply: a 503, counted.
            assert get(mm.url, "/n") == 503
            assert scrape(mm.url)[("moonmock_store_command_failures_total", ())] >= 1
    finally:
        if redis.poll() is None:
            redis.kill()

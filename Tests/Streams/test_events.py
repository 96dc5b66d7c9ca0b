"""`GET /__moonmock/events`: the dashboard's live feed, read as a browser's EventSource would."""
from __future__ import annotations

import http.client
import json
import os
import queue
import threading
import time
import urllib.request

import moonmock

SCRIPT = """
mock.get("/count", function() mock.state:incr("hits"); return "counted" end)
mock.get("/v", mock.variants { default = "one", one = "1", two = "2" })
"""


def follow(server, into: "queue.Queue[tuple[str, dict]]", stop: threading.Event) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", "/__moonmock/events")
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    event = None
    while not stop.is_set():
        line = response.fp.readline().decode()
        if line.startswith("event: "):
            event = line[7:].strip()
        elif line.startswith("data: ") and event:
            into.put((event, json.loads(line[6:])))
    connection.close()


def wait_for(events: "queue.Queue[tuple[str, dict]]", kind: str, check=lambda data: True, timeout: float = 10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            event, data = events.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        if event == kind and check(data):
            return data
    raise AssertionError(f"no {kind} event within {timeout} s")


def test_requests_state_switches_and_reloads_arrive_live(tmp_path) -> None:
    script = tmp_path / "mocks.lua"
    script.write_text(SCRIPT)
    with moonmock.serve(script, binary=os.environ.get("MOONMOCK_BIN"), watch=True) as mm:
        events: "queue.Queue[tuple[str, dict]]" = queue.Queue()
        stop = threading.Event()
        reader = threading.Thread(target=follow, args=(mm, events, stop), daemon=True)
        reader.start()
        wait_for(events, "hello")
        urllib.request.urlopen(mm.url + "/count", timeout=10).read()
        assert wait_for(events, "state")["key"] == "hits"
        entry = wait_for(events, "request", lambda d: d["url"].endswith("/count"))
        assert entry["status"] == 200 and entry["rule"] == "GET /count"
        mm._call("PUT", "/__moonmock/variants/GET%20%2Fv", {"active": "two"})
        assert wait_for(events, "switch") == {"rule": "GET /v", "active": "two"}
        script.write_text("mock.get('/broken',\n")
        failed = wait_for(events, "reload", lambda d: d.get("last_error"))
        assert failed["last_error"].startswith("mocks.lua:")
        script.write_text(SCRIPT + 'mock.get("/new", "fresh")\n')
        healed = wait_for(events, "reload", lambda d: d.get("last_error") is None)
        assert healed["rules"] == 3
        stop.set()

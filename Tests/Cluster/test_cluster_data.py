"""mock.resource and chaos across replicas sharing Redis: one collection, one switch."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from conftest import start_replicas

PREFIX = """
mock.resource("/pets", { seed = { count = 3, item = function(i) return { name = mock.fake.first_name() } end } })
mock.chaos_profile("down", { error_rate = 1, status = 503 })
"""


def decoded(raw: bytes):
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw.decode()


def call(url: str, method: str = "GET", body: object = None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, decoded(r.read()), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, decoded(e.read()), dict(e.headers)


def until(check, seconds: float = 5) -> bool:
    """Whether `check` holds within `seconds` (a switch reaches the other replicas through Redis)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_one_collection_seeded_once_and_written_by_any_replica(tmp_path, redis):
    replicas = start_replicas(tmp_path, redis, script_prefix=PREFIX)
    try:
        lists = [call(r.url + "/pets")[1] for r in replicas]
        assert len(lists[0]) == 3 and lists[0] == lists[1] == lists[2]
        created = call(replicas[0].url + "/pets", "POST", {"name": "Bo"})
        assert created[0] == 201 and created[1]["id"] == 4
        assert call(replicas[1].url + "/pets/4")[1] == {"id": 4, "name": "Bo"}
        assert [p["name"] for p in call(replicas[2].url + "/pets")[1]][-1] == "Bo"
        assert call(replicas[2].url + "/pets/4", "PATCH", {"name": "Bob"})[0] == 200
        assert call(replicas[0].url + "/pets?name=Bob")[1] == [{"id": 4, "name": "Bob"}]
        assert call(replicas[1].url + "/pets/1", "DELETE")[0] == 204
        assert call(replicas[0].url + "/pets/1")[0] == 404
        assert call(replicas[2].url + "/pets")[2]["X-Total-Count"] == "3"
        collection = call(replicas[1].url + "/__moonmock/resources")[1]["resources"][0]
        assert collection["count"] == 3
    finally:
        for r in replicas:
            r.stop()


def test_chaos_switched_on_one_replica_holds_on_all_until_it_ends(tmp_path, redis):
    replicas = start_replicas(tmp_path, redis, script_prefix=PREFIX)
    try:
        assert call(replicas[0].url + "/__moonmock/chaos", "PUT", {"profile": "down", "duration_ms": 60_000})[0] == 200
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(call(r.url + "/plain")[0] != 503 for r in replicas[1:]):
            time.sleep(0.05)
        assert [call(r.url + "/plain")[0] for r in replicas] == [503, 503, 503]
        # Switched on again for 300 ms, in its place: over everywhere once that has passed.
        assert call(replicas[1].url + "/__moonmock/chaos", "PUT", {"profile": "down", "duration_ms": 300})[0] == 200
        time.sleep(1)
        assert until(lambda: [call(r.url + "/plain")[0] for r in replicas] == [200, 200, 200])
        call(replicas[2].url + "/__moonmock/chaos", "PUT", {"error_rate": 1, "status": 418})
        assert until(lambda: call(replicas[0].url + "/plain")[0] == 418)
        assert call(replicas[1].url + "/__moonmock/chaos", "DELETE")[0] == 200
        assert until(lambda: [call(r.url + "/plain")[0] for r in replicas] == [200, 200, 200])
    finally:
        for r in replicas:
            r.stop()

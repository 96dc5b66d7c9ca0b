"""Three replicas of `moonmock serve --store redis://…` behave as one mock server."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import moonmock
from conftest import SCRIPT, start_replicas


def get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def admin(server, path: str, body: object = None, method: str = "GET"):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + "/__moonmock/" + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def test_a_counter_incremented_through_all_three(replicas) -> None:
    seen = [json.loads(get(replicas[i % 3].url + "/count")[1])["n"] for i in range(9)]
    assert seen == list(range(1, 10))
    for r in replicas:
        assert admin(r, "state")[1]["n"] == 9


def test_handlers_that_sleep_and_count_on_the_loop_count_once_each_across_replicas(replicas) -> None:
    from concurrent.futures import ThreadPoolExecutor
    urls = [replicas[i % 3].url + "/waits" for i in range(30)]
    with ThreadPoolExecutor(max_workers=30) as pool:
        answers = [json.loads(body) for status, body in pool.map(get, urls)]
    assert sorted(a["n"] for a in answers) == list(range(1, 31))
    assert all(a["seen"] for a in answers)


def test_state_values_keep_their_lua_types_across_replicas(replicas) -> None:
    assert get(replicas[0].url + "/types") == (200, b"set")
    assert json.loads(get(replicas[2].url + "/read")[1]) == {"i": "integer", "d": "float", "s": "string", "b": "boolean"}
    assert admin(replicas[1], "state")[1] == {"i": 7, "d": 2.5, "s": "seven", "b": True}
    admin(replicas[1], "state/i", 40, "PUT")
    assert json.loads(get(replicas[0].url + "/count")[1]) == {"n": 1}
    assert admin(replicas[2], "state/i")[1] == 40


def test_add_ttl_keys_delete_and_flush_across_replicas_stay_under_the_prefix(replicas, redis) -> None:
    redis_cli(redis, "SET", "someone-else:key", "kept")                   # not Moonmock's
    assert json.loads(get(replicas[0].url + "/ops")[1]) == {"first": True, "second": False, "once": "a"}
    assert json.loads(get(replicas[1].url + "/keys")[1]) == {"keys": ["brief", "once"], "brief": "soon gone"}
    time.sleep(0.5)                                                          # the ttl is Redis's
    assert json.loads(get(replicas[2].url + "/keys")[1]) == {"keys": ["once"]}
    assert json.loads(get(replicas[2].url + "/forget")[1]) == {}
    assert json.loads(get(replicas[0].url + "/count")[1]) == {"n": 1}
    assert admin(replicas[1], "state")[1] == {"n": 1}
    assert admin(replicas[2], "state", method="DELETE")[0] == 200            # flush, from any replica
    assert admin(replicas[0], "state")[1] == {}
    assert redis_cli(redis, "GET", "someone-else:key").strip() == b"kept"


def test_a_sequence_and_a_times_budget_honoured_across_them(replicas) -> None:
    answers = [get(replicas[i % 3].url + "/seq")[1] for i in range(4)]
    assert answers == [b"first", b"second", b"third", b"third"]
    budget = [get(replicas[i % 3].url + "/twice")[1] for i in range(4)]
    assert budget == [b"budget", b"budget", b"after", b"after"]


def test_a_variant_switched_on_one_is_served_by_all_within_100ms(replicas) -> None:
    assert all(get(r.url + "/v")[1] == b"one" for r in replicas)
    assert admin(replicas[0], "variants/GET%20%2Fv", {"active": "two"}, "PUT")[0] == 200
    switched = time.monotonic()
    pending = set(range(1, 3))
    while pending and time.monotonic() - switched < 0.1:
        pending = {i for i in pending if get(replicas[i].url + "/v")[1] != b"two"}
    assert not pending, f"replicas {pending} still served 'one' 100 ms after the switch"
    assert all(admin(r, "variants")[1][0]["active"] == "two" for r in replicas)
    admin(replicas[2], "reset", {}, "POST")
    time.sleep(0.1)
    assert all(get(r.url + "/v")[1] == b"one" for r in replicas)


def test_a_stub_endpoint_and_the_mock_bundle_switched_on_one_are_served_by_all(tmp_path, redis) -> None:
    (tmp_path / "Stubs" / "getUser").mkdir(parents=True)
    (tmp_path / "Stubs" / "getUser" / "found.200.json").write_text('{"id": 1}')
    (tmp_path / "Stubs" / "getUser" / "missing.404.json").write_text('{"error": "no such user"}')
    for name, text in (("happy", "all good"), ("sad", "all bad")):
        (tmp_path / "Bundles" / name).mkdir(parents=True)
        (tmp_path / "Bundles" / name / "body.txt").write_text(text)
        (tmp_path / "Bundles" / name / "bundle.json").write_text(json.dumps(
            [{"request": {"url": "://localhost/mood"}, "response": {"code": 200, "file": "body.txt", "mime_type": "text/plain"}}]))
    extra = 'mock.stubs("Stubs", { getUser = "GET /users/:id" })\nmock.bundle("Bundles/happy", { name = "api" })\n'
    servers = start_replicas(tmp_path, redis, 3, script_prefix=extra)
    try:
        assert all(get(s.url + "/users/7")[0] == 404 for s in servers)       # no stub yet: falls through
        assert admin(servers[0], "variants/getUser", {"active": "missing"}, "PUT")[0] == 200
        deadline = time.monotonic() + 0.1                                     # within 100 ms, everywhere
        while time.monotonic() < deadline and not all(get(s.url + "/users/7")[1] == b'{"error": "no such user"}' for s in servers):
            time.sleep(0.005)
        assert [get(s.url + "/users/7") for s in servers] == [(404, b'{"error": "no such user"}')] * 3
        assert admin(servers[1], "variants/getUser", {"active": "found"}, "PUT")[0] == 200
        time.sleep(0.1)
        assert [get(s.url + "/users/7") for s in servers] == [(200, b'{"id": 1}')] * 3
        assert admin(servers[2], "variants/getUser", {"active": None}, "PUT")[0] == 200
        time.sleep(0.1)
        assert all(get(s.url + "/users/7")[0] == 404 for s in servers)       # "none" for all too

        assert all(get(s.url.replace("127.0.0.1", "localhost") + "/mood")[1] == b"all good" for s in servers)
        assert admin(servers[2], "bundle", {"rule": "api", "path": "Bundles/sad"}, "PUT")[0] == 200
        time.sleep(0.1)
        assert [get(s.url.replace("127.0.0.1", "localhost") + "/mood")[1] for s in servers] == [b"all bad"] * 3
    finally:
        for s in servers:
            s.stop()


def test_runtime_rules_are_shared(replicas) -> None:
    rule = {"method": "GET", "path": "/added", "respond": {"status": 201, "json": {"made": True}}}
    status, body = admin(replicas[1], "rules", rule, "POST")
    assert status == 201
    time.sleep(0.1)
    for r in replicas:
        assert get(r.url + "/added") == (201, b'{"made":true}')
    assert admin(replicas[2], "rules/" + body["id"], method="DELETE")[0] == 200
    time.sleep(0.1)
    for r in replicas:
        assert get(r.url + "/added")[0] == 404


def test_journal_and_verify_see_every_replica(replicas) -> None:
    for i in range(6):
        get(replicas[i % 3].url + f"/plain?n={i}")
    for r in replicas:
        entries = admin(r, "requests?pattern=/plain")[1]
        assert [e["url"].split("?")[1] for e in entries] == [f"n={i}" for i in range(6)]
        assert sorted({e["replica"] for e in entries}) == ["r1", "r2", "r3"]
        assert len({e["id"] for e in entries}) == 6
        assert admin(r, "requests/count?pattern=/plain")[1]["count"] == 6
    assert admin(replicas[1], "verify", {"method": "GET", "pattern": "/plain", "times": 6}, "POST")[0] == 200
    status, failed = admin(replicas[2], "verify", {"method": "GET", "pattern": "/plain", "times": 3}, "POST")
    assert status == 422
    assert admin(replicas[0], "requests", method="DELETE")[0] == 200
    assert admin(replicas[2], "requests/count")[1]["count"] == 0


def test_the_shared_journal_keeps_the_newest_n_of_all_replicas(tmp_path, redis) -> None:
    servers = start_replicas(tmp_path, redis, 2, ["--journal", "50"])
    try:
        for i in range(400):                                         # far more than 50, from both
            assert get(servers[i % 2].url + f"/plain?n={i}")[0] == 200
        for s in servers:                                            # read at once: nothing missing
            entries = admin(s, "requests")[1]
            assert [e["url"].split("?")[1] for e in entries] == [f"n={i}" for i in range(350, 400)], [e["url"] for e in entries]
            assert [e["replica"] for e in entries[-2:]] == ["r1", "r2"]
            assert admin(s, "requests/count")[1]["count"] == 50
        # Written without a reader too (every 100 ms): each replica's stream holds its newest 50.
        get(servers[0].url + "/plain?n=last")
        streams = redis_cli(redis, "SMEMBERS", "moonmock:journals").split()
        assert len(streams) == 2
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(b"n=last" in redis_cli(redis, "XRANGE", k.decode(), "-", "+") for k in streams):
            time.sleep(0.05)
        assert any(b"n=last" in redis_cli(redis, "XRANGE", k.decode(), "-", "+") for k in streams)
        for k in streams:                                            # capped (MAXLEN ~: at least 50, a node more at most)
            assert 50 <= int(redis_cli(redis, "XLEN", k.decode())) <= 150
    finally:
        for s in servers:
            s.stop()


def redis_cli(redis, *args: str) -> bytes:
    return subprocess.run(["redis-cli", "-p", str(redis.port), *args], capture_output=True, timeout=10, check=True).stdout


def test_a_dashboard_on_one_replica_sees_the_others_requests_live(replicas) -> None:
    host, port = replicas[0].url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"GET /__moonmock/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        seen = b""
        while b"event: hello" not in seen:
            seen += s.recv(65536)
        get(replicas[1].url + "/plain?from=r2")
        get(replicas[2].url + "/count")
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not (b"from=r2" in seen and b'"replica":"r3"' in seen):
            seen += s.recv(65536)
    # The stream is chunked: read the events out of the bytes, chunk-size lines or not.
    events = [json.loads(m) for m in re.findall(rb"event: request\ndata: (\{.*?\})\n\n", seen)]
    # Each replica's writer announces on its own 100 ms clock: which comes first is not fixed.
    assert sorted((e["replica"], e["url"].split("/")[-1]) for e in events) == [("r2", "plain?from=r2"), ("r3", "count")], seen


def test_redis_stopped_mid_test_then_restarted(replicas, redis) -> None:
    assert json.loads(get(replicas[0].url + "/count")[1]) == {"n": 1}
    redis.stop()
    status, body = get(replicas[1].url + "/count")
    assert status == 503 and b"the shared store is unavailable" in body and b"127.0.0.1" in body, body
    assert get(replicas[1].url + "/twice")[0] == 503
    assert get(replicas[2].url + "/plain") == (200, b"plain")          # the rest keeps working
    health = admin(replicas[0], "health")[1]
    assert health["status"] == "store_unavailable"
    assert health["store"]["status"] == "unavailable" and health["store"]["error"]
    assert admin(replicas[0], "state")[0] == 503
    redis.start()                                                    # empty: a Redis that lost everything
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and get(replicas[1].url + "/count")[0] != 200:
        time.sleep(0.1)
    for r in replicas:                                               # each finds it within its backoff (<= 2 s)
        while time.monotonic() < deadline and admin(r, "health")[1]["store"]["status"] != "ok":
            time.sleep(0.1)
        health = admin(r, "health")[1]
        assert health["status"] == "ok" and health["store"]["latency_ms"] >= 0, health
    assert json.loads(get(replicas[2].url + "/count")[1])["n"] == 2
    admin(replicas[0], "variants/GET%20%2Fv", {"active": "two"}, "PUT")    # the subscribers are back too
    time.sleep(0.2)
    assert all(get(r.url + "/v")[1] == b"two" for r in replicas)


def test_no_request_waits_longer_than_the_store_timeout(tmp_path, redis) -> None:
    (server,) = start_replicas(tmp_path, redis, 1, ["--store-timeout", "0.3"])
    try:
        assert get(server.url + "/count")[0] == 200
        redis.pause()
        t0 = time.monotonic()
        status, body = get(server.url + "/count")
        took = time.monotonic() - t0
        assert status == 503 and took < 1.0, (status, took, body)
        assert get(server.url + "/plain") == (200, b"plain")
        redis.resume()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and get(server.url + "/count")[0] != 200:
            time.sleep(0.1)
        assert get(server.url + "/count")[0] == 200
    finally:
        server.stop()


def test_a_hung_redis_holds_up_only_the_requests_that_need_it(tmp_path, redis) -> None:
    (server,) = start_replicas(tmp_path, redis, 1, ["--store-timeout", "3"])
    try:
        assert get(server.url + "/count")[0] == 200
        redis.pause()                                                # connected, never answering
        waiting = []
        threads = [threading.Thread(target=lambda: waiting.append(get(server.url + "/count", timeout=10)[0])) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.2)                                              # those four now wait for Redis
        slowest = 0.0
        for i in range(20):                                          # fresh connections, any worker
            t0 = time.monotonic()
            assert get(server.url + f"/plain?i={i}", timeout=5) == (200, b"plain")
            slowest = max(slowest, time.monotonic() - t0)
        assert slowest < 0.5, slowest
        assert all(t.is_alive() for t in threads)                    # still waiting, within the 3 s
        redis.resume()
        for t in threads:
            t.join(10)
        assert waiting == [200] * 4
    finally:
        redis.resume()
        server.stop()


def test_budgets_sequences_and_state_wait_on_the_loop_not_on_a_store_worker(tmp_path, redis) -> None:
    # One store worker: were the budget, sequence and state requests on it while Redis hangs, the
    # admin request behind them would wait out their store timeout too.
    (server,) = start_replicas(tmp_path, redis, 1, ["--store-timeout", "3", "--store-workers", "1"])
    try:
        assert get(server.url + "/twice")[0] == 200
        redis.pause()
        waiting = []
        paths = ["/twice", "/seq", "/count", "/waits"]
        threads = [threading.Thread(target=lambda p=p: waiting.append(get(server.url + p, timeout=10)[0])) for p in paths]
        for t in threads:
            t.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        assert admin(server, "rules")[0] == 200
        assert time.monotonic() - t0 < 1.0
        assert all(t.is_alive() for t in threads)
        redis.resume()
        for t in threads:
            t.join(10)
        assert sorted(waiting) == [200] * 4
    finally:
        redis.resume()
        server.stop()


def test_pipelined_requests_to_a_stateful_rule_answer_in_order(replicas) -> None:
    host, port = replicas[0].url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"".join(b"GET /count HTTP/1.1\r\nHost: x\r\n\r\n" for _ in range(3)) +
                  b"HEAD /count HTTP/1.1\r\nHost: x\r\n\r\nGET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    assert data.count(b"HTTP/1.1 200") == 5, data
    assert [int(m) for m in re.findall(rb'\{"n":(\d+)\}', data)] == [1, 2, 3], data
    assert data.endswith(b"plain"), data
    assert json.loads(get(replicas[1].url + "/count")[1]) == {"n": 5}      # the HEAD counted too


def test_one_entry_past_the_state_limit_is_refused_on_redis_too(tmp_path, redis) -> None:
    (server,) = start_replicas(tmp_path, redis, 1, ["--state-limit", "1000"])
    try:
        status, body = get(server.url + "/big")
        assert status == 500 and b"mock.state is full" in body and b"--state-limit" in body, body
        assert json.loads(get(server.url + "/count")[1]) == {"n": 1}          # serving on
        assert redis_cli(redis, "EXISTS", "moonmock:s:big").strip() == b"0"
    finally:
        server.stop()


def test_unreachable_at_start_exits_1_with_the_reason(tmp_path, redis) -> None:
    script = tmp_path / "mocks.lua"
    script.write_text(SCRIPT)
    port = redis.port
    redis.stop()
    binary = moonmock.find_binary(os.environ.get("MOONMOCK_BIN"))
    done = subprocess.run([binary, "serve", str(script), "--port", "0", "--store", f"redis://127.0.0.1:{port}"],
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 1
    assert f"redis://127.0.0.1:{port}" in done.stderr and "Connection refused" in done.stderr, done.stderr

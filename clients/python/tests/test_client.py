"""The client against the real binary (MOONMOCK_BIN)."""
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

import moonmock


def get(url: str, **headers: str):
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_serve_starts_on_a_free_port_and_stops_on_exit(script):
    with moonmock.serve(script) as mm:
        assert mm.url.startswith("http://127.0.0.1:")
        assert get(mm.url + "/users/7") == (200, b'{"id":7,"name":"User 7"}')
        pid = mm.pid
    assert not mm.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_process_is_stopped_when_the_block_raises(script):
    with pytest.raises(ZeroDivisionError):
        with moonmock.serve(script) as mm:
            server = mm
            1 / 0
    assert not server.running


def test_stub_answers_ahead_of_the_script_and_verify_counts(script):
    with moonmock.serve(script) as mm:
        rule = mm.stub("GET", "/users/7", status=404, json={"error": "gone"}, headers={"X-Why": "test"})
        assert rule == "runtime-1"
        status, body = get(mm.url + "/users/7")
        assert (status, json.loads(body)) == (404, {"error": "gone"})
        assert get(mm.url + "/users/8")[0] == 200
        assert mm.verify("GET", "/users/:id", times=2) == 2
        assert mm.verify(rule=rule, times=1) == 1
        assert mm.verify(url="/users/8") == 1
        started = time.monotonic()
        mm.stub("GET", "/slow", text="late", delay=200)
        assert get(mm.url + "/slow") == (200, b"late")
        assert time.monotonic() - started >= 0.2
        mm.stub(None, "/bytes", body=b"\x00\x01\xff")
        assert get(mm.url + "/bytes") == (200, b"\x00\x01\xff")


def test_a_failed_verify_raises_an_assertion_error_with_the_near_miss(script):
    with moonmock.serve(script) as mm:
        get(mm.url + "/userz/3")
        with pytest.raises(AssertionError) as failure:
            mm.verify("GET", "/users/:id", times=1)
        text = str(failure.value)
        assert "expected GET /users/:id exactly 1 time(s), got 0" in text
        assert "closest: GET http://127.0.0.1:" in text and "/userz/3: path: expected /users/:id, got /userz/3" in text


def test_requests_since_state_switch_reset_and_reload(script, tmp_path):
    with moonmock.serve(script) as mm:
        get(mm.url + "/users/1")
        first = mm.requests()[-1]["id"]
        get(mm.url + "/users/2")
        assert [r["url"].rsplit("/", 1)[-1] for r in mm.requests(since=first)] == ["2"]

        mm.state["user"] = "ana"
        assert mm.state["user"] == "ana"
        assert json.loads(get(mm.url + "/me")[1]) == {"user": "ana"}
        del mm.state["user"]
        with pytest.raises(KeyError):
            mm.state["user"]
        mm.state.replace({"user": "bo", "cart": 3})
        assert dict(mm.state) == {"cart": 3, "user": "bo"}

        mm.switch("GET /checkout", "declined")
        assert get(mm.url + "/checkout")[0] == 402
        mm.stub("GET", "/extra", text="x")
        mm.reset()
        assert get(mm.url + "/checkout")[0] == 200
        assert get(mm.url + "/extra")[0] == 404
        assert [r["url"].rsplit("/", 1)[-1] for r in mm.requests()] == ["checkout", "extra"]
        assert "reloaded mocks.lua" in mm.reload()


def test_server_errors_raise_with_the_servers_message(script, tmp_path):
    with moonmock.serve(script) as mm:
        with pytest.raises(moonmock.RuleError) as bad:
            mm.add_rule({"path": "/a", "respond": {"status": "ok"}})
        assert bad.value.status == 400 and bad.value.field == "rule.respond.status"
        assert "expected an integer from 100 to 599" in str(bad.value)
        with pytest.raises(moonmock.MoonmockError) as unknown:
            mm.switch("GET /checkout", "nope")
        assert unknown.value.status == 422 and "nope" in unknown.value.message
        broken = tmp_path / "broken.lua"
        broken.write_text("mock.get('/a',\n")
    with pytest.raises(RuntimeError, match=r"exited with 1: .*broken.lua:2:"):
        moonmock.serve(str(broken))


def test_a_missing_binary_says_how_to_get_one(script, monkeypatch):
    monkeypatch.setenv("MOONMOCK_BIN", "/nonexistent/moonmock")
    with pytest.raises(moonmock.BinaryNotFound, match="not an executable file"):
        moonmock.serve(script)


def test_a_sigterm_right_after_the_port_line_always_stops_the_server(script):
    binary = moonmock.find_binary()
    for attempt in range(20):
        process = subprocess.Popen([binary, "serve", script, "--port", "0", "--no-watch"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert process.stdout.readline().startswith("moonmock: serving")
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(10) == 0, f"try {attempt}"
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail(f"try {attempt}: the SIGTERM was lost")
        finally:
            process.stdout.close()


def test_cors_for_a_browser_app(script):
    with moonmock.serve(script, cors=True) as mm:
        status, _ = get(mm.url + "/users/1", Origin="http://localhost:5173")
        request = urllib.request.Request(mm.url + "/users/1", headers={"Origin": "http://localhost:5173"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["Access-Control-Allow-Origin"] == "http://localhost:5173"
        assert status == 200


def test_a_self_signed_https_server_is_driven_with_its_local_ca(script, tmp_path) -> None:
    import ssl
    import urllib.request
    home = tmp_path / "home"
    home.mkdir()
    with moonmock.serve(script, args=["--tls", "self-signed"], env={"HOME": str(home)}) as mm:
        assert mm.url.startswith("https://")
        assert mm.ca_file == str(home / ".cache/moonmock/tls/ca.pem")
        assert mm.health()["status"] == "ok"
        mm.stub("GET", "/secure", json={"tls": True})
        context = ssl.create_default_context(cafile=mm.ca_file)
        with urllib.request.urlopen(mm.url + "/secure", timeout=10, context=context) as answer:
            assert json.loads(answer.read()) == {"tls": True}

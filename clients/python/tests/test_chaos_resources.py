"""chaos(...) and resources() against the real binary: what a test switches, the server does."""
import json
import time
import urllib.error
import urllib.request

import pytest

import moonmock
from conftest import HERE

SCRIPT = str(HERE / "scripts" / "chaos.lua")


def call(url: str, method: str = "GET", body: object = None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def test_a_profile_for_a_while_then_settings_then_off():
    with moonmock.serve(SCRIPT) as mm:
        assert call(mm.url + "/ping")[0] == 200
        status = mm.chaos("bad-day", duration_ms=60_000)
        assert status["active"] and status["runtime"]["profile"] == "bad-day"
        assert call(mm.url + "/ping")[0] == 503
        mm.chaos("bad-day", duration_ms=200)          # in its place, over soon
        time.sleep(1.5)
        assert call(mm.url + "/ping")[0] == 200
        mm.chaos(rate_limit={"rps": 0.1, "burst": 1}, path="/ping")   # one, then one each 10 s
        assert call(mm.url + "/ping")[0] == 200
        limited = call(mm.url + "/ping")
        assert limited[0] == 429 and int(limited[2]["Retry-After"]) >= 1
        assert mm.chaos_status()["runtime"]["settings"]["rate_limit"] == {"rps": 0.1, "burst": 1}
        assert not mm.stop_chaos()["active"]
        assert call(mm.url + "/ping")[0] == 200
        mm.chaos({"error_rate": 1, "status": 418})
        assert call(mm.url + "/ping")[0] == 418
        mm.stop_chaos()
        assert call(mm.url + "/ping")[0] == 200
        entries = mm.requests()
        assert [e.get("chaos") for e in entries if e.get("chaos")] == ["error_rate", "rate_limit", "error_rate"]


def test_bad_settings_and_unknown_profiles_are_told_apart():
    with moonmock.serve(SCRIPT) as mm:
        with pytest.raises(moonmock.MoonmockError) as bad:
            mm.chaos(eror_rate=0.5)
        assert "did you mean 'error_rate'" in str(bad.value)
        with pytest.raises(moonmock.MoonmockError) as unknown:
            mm.chaos("good-day")
        assert "no chaos profile 'good-day'" in str(unknown.value) and "bad-day" in str(unknown.value)


def test_resources_list_and_reset():
    with moonmock.serve(SCRIPT) as mm:
        created = call(mm.url + "/products", "POST", {"name": "lamp", "price": 5})
        assert created[0] == 201 and created[2]["Location"] == "/products/13"
        [products] = mm.resources()
        assert products["path"] == "/products" and products["count"] == 13
        assert products["items"][-1] == {"id": 13, "name": "lamp", "price": 5}
        mm.reset_resource("/products")
        status, body, headers = call(mm.url + "/products?per_page=5&page=3")
        assert status == 200 and headers["X-Total-Count"] == "12"
        assert [p["id"] for p in json.loads(body)] == [11, 12]
        assert 'rel="prev"' in headers["Link"] and 'rel="next"' not in headers["Link"]


def test_the_same_seed_gives_the_same_catalogue_on_two_servers():
    with moonmock.serve(SCRIPT, args=["--seed", "9"]) as a, moonmock.serve(SCRIPT, args=["--seed", "9"]) as b, \
            moonmock.serve(SCRIPT, args=["--seed", "10"]) as c:
        one, two, other = (call(s.url + "/products")[1] for s in (a, b, c))
        assert one == two and one != other

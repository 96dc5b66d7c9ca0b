"""A Python test suite driving Moonmock: run with `pytest examples/python`
(after `pip install ./clients/python`, with the moonmock binary on PATH or in MOONMOCK_BIN)."""
import json
import urllib.error
import urllib.request


def fetch(url, method="GET", body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_the_script_answers(moonmock):
    assert fetch(moonmock.url + "/users/7") == (200, {"id": 7, "name": "User 7"})


def test_a_stub_for_this_test_only(moonmock):
    moonmock.stub("GET", "/users/7", status=404, json={"error": "no such user"})
    assert fetch(moonmock.url + "/users/7") == (404, {"error": "no such user"})
    moonmock.verify("GET", "/users/:id", times=1)


def test_fails_twice_then_succeeds(moonmock):
    statuses = [fetch(moonmock.url + "/flaky")[0] for _ in range(3)]
    assert statuses == [503, 503, 200]
    assert moonmock.state["flaky"] == 3


def test_seeded_state(moonmock):
    moonmock.state["flaky"] = 2   # the next call is the third: it succeeds
    assert fetch(moonmock.url + "/flaky") == (200, {"ok": True, "attempt": 3})


def test_orders_are_created(moonmock):
    status, order = fetch(moonmock.url + "/orders", "POST", {"sku": "A-1"})
    assert status == 201 and order["sku"] == "A-1" and order["status"] == "created"
    moonmock.verify("POST", "/orders", times=1)

"""The dashboard used as a person would: clicking, typing, reading what is shown."""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

import moonmock

SCRIPT = """
mock.get("/users/:id", function(req) print("user", req.params.id); return { id = tonumber(req.params.id) } end)
mock.get("/boom", function() error("kaboom") end)
mock.get("/reset", mock.fault("connection_reset"))
mock.get("/once", mock.text("once"), { times = 1 })
mock.get("/v", mock.variants { default = "one", one = mock.text("1"), two = mock.text("2") })
"""


def hit(url: str) -> None:
    try:
        urllib.request.urlopen(url, timeout=5).read()
    except (urllib.error.HTTPError, ConnectionError, urllib.error.URLError):
        pass


def serve(tmp_path, **options):
    script = tmp_path / "mocks.lua"
    script.write_text(SCRIPT)
    return moonmock.serve(script, binary=os.environ.get("MOONMOCK_BIN"), **options)


def test_live_list_colours_inspector_and_near_miss(tmp_path, page) -> None:
    with serve(tmp_path) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        for path in ("/users/7", "/nothing", "/boom", "/reset"):
            hit(mm.url + path)
        page.wait_for_function("document.querySelectorAll('.row').length === 4")
        assert page.get_attribute(".row:has-text('/users/7')", "class") == "row s2"
        assert page.get_attribute(".row:has-text('/boom')", "class") == "row s5"
        assert page.get_attribute(".row:has-text('/reset')", "class") == "row fault"
        assert page.get_attribute(".row:has-text('/nothing')", "class") == "row s4"
        page.click(".row:has-text('/users/7')")
        assert page.inner_text("#i-where") == "mocks.lua:2"
        assert '"id": 7' in page.inner_text("pre.json")
        assert "user\t7" in page.inner_text("#i-logs")
        page.click(".row:has-text('/nothing')")
        near = page.inner_text("#i-near")
        assert "method ok" in near and "path: expected /users/:id, got /nothing" in near
        page.click(".row:has-text('/boom')")
        assert "kaboom" in page.inner_text("#i-error")
        page.click("#copy-curl")
        page.wait_for_selector("#copied-text:has-text('curl')")


def test_filters_pause_and_keyboard(tmp_path, page) -> None:
    with serve(tmp_path) as mm:
        for path in ("/users/1", "/users/2", "/nothing"):
            hit(mm.url + path)
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        page.select_option("#f-match", "unmatched")
        assert page.inner_text("#count") == "1 of 3 requests"
        page.select_option("#f-match", "")
        page.fill("#f-text", "users/2")
        page.wait_for_function("document.getElementById('count').textContent === '1 of 3 requests'")
        page.fill("#f-text", "")
        page.click("#pause")
        hit(mm.url + "/users/3")
        page.wait_for_selector("#count:has-text('paused, 1 new')")
        page.click("#pause")
        page.wait_for_function("document.querySelectorAll('.row').length === 4")
        page.focus("#list")
        page.keyboard.press("j")
        assert "/users/3" in page.inner_text("#i-line")
        page.keyboard.press("j")
        assert "/nothing" in page.inner_text("#i-line")


def test_rules_variants_state_and_runtime_rules(tmp_path, page) -> None:
    with serve(tmp_path) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        page.keyboard.press("2")
        assert page.inner_text("#rules tr[data-rule='GET /once'] .hits") == "0 1 left (times = 1)"
        hit(mm.url + "/once")
        hit(mm.url + "/users/4")
        page.wait_for_selector("#rules tr[data-rule='GET /once'] .hits:has-text('budget spent')")
        page.wait_for_selector("#rules tr[data-rule='GET /users/:id'] .hits:text-is('1')")
        page.select_option("select.variant", "two")
        page.wait_for_selector("#toast:has-text('GET /v: two')")
        assert urllib.request.urlopen(mm.url + "/v", timeout=5).read() == b"2"
        page.fill("#r-path", "/added")
        page.fill("#r-status", "201")
        page.fill("#r-json", '{"made": true}')
        page.click("#add-rule button[type=submit]")
        page.wait_for_selector("#r-outcome:has-text('added')")
        response = urllib.request.urlopen(mm.url + "/added", timeout=5)
        assert response.status == 201 and response.read() == b'{"made":true}'
        page.click(".delete-rule")
        page.wait_for_function("!document.querySelector('.delete-rule')")
        page.keyboard.press("3")
        page.fill("#s-key", "count")
        page.fill("#s-value", "3")
        page.click("#add-state button[type=submit]")
        page.wait_for_selector("#state tr[data-key=count] .value:has-text('3')")
        assert json.loads(urllib.request.urlopen(mm.url + "/__moonmock/state", timeout=5).read()) == {"count": 3}


def test_ten_thousand_entries_render_fast(tmp_path, page) -> None:
    with serve(tmp_path, args=["--journal", "10000"]) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        entries = [{"id": i + 1, "timestamp": 1.0e9, "method": "GET", "url": f"http://x/users/{i}", "status": 200,
                    "rule": "GET /users/:id", "duration_us": 10, "headers": {}, "body": "", "logs": []} for i in range(10_000)]
        took = page.evaluate("""list => { const t0 = performance.now(); setEntries(list, false);
            document.body.offsetHeight; return performance.now() - t0; }""", entries)
        assert page.locator(".row").count() < 200
        assert took < 200, f"10,000 entries took {took:.0f} ms"


def test_a_broken_contract_shows_a_badge_and_the_violations(tmp_path, page) -> None:
    fixtures = os.path.join(os.path.dirname(__file__), "..", "Fixtures", "contract")
    with moonmock.serve(os.path.join(fixtures, "mocks.lua"), binary=os.environ.get("MOONMOCK_BIN")) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        hit(mm.url + "/v1/pets")
        hit(mm.url + "/v1/pets?broken=1")
        page.wait_for_function("document.querySelectorAll('.row').length === 2")
        assert page.locator(".row:has-text('broken=1') .contract.broken").count() == 1
        assert page.locator(".row:not(:has-text('broken')) .contract").count() == 0
        page.click(".row:has-text('broken=1')")
        assert "listPets" in page.inner_text("#i-contract")
        assert "1 violation" in page.inner_text("#i-contract")
        table = page.inner_text("#i-violations")
        assert "response /body/0/name" in table and "petstore.yaml#/paths/~1pets/get" in table
        page.click(".row:not(:has-text('broken'))")
        assert "kept" in page.inner_text("#i-contract")


DATA_SCRIPT = """
mock.chaos_profile("down", { error_rate = 1, status = 503 })
mock.resource("/pets", { seed = { { name = "Rex" }, { name = "Tom" } } })
mock.get("/x", "ok")
"""


def test_chaos_switched_from_the_page_and_resources_on_the_state_tab(tmp_path, page) -> None:
    script = tmp_path / "mocks.lua"
    script.write_text(DATA_SCRIPT)
    with moonmock.serve(script, binary=os.environ.get("MOONMOCK_BIN")) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        page.keyboard.press("2")
        page.wait_for_selector("#c-profile option[value=down]", state="attached")
        assert page.inner_text("#chaos-state") == "off"
        page.select_option("#c-profile", "down")
        page.fill("#c-duration", "30")
        page.click("#chaos-form button[type=submit]")
        page.wait_for_selector("#chaos-state.on:has-text('profile down for')")
        try:
            urllib.request.urlopen(mm.url + "/x", timeout=5)
            raise AssertionError("chaos did not answer")
        except urllib.error.HTTPError as e:
            assert e.code == 503
        page.click("#chaos-stop")
        page.wait_for_selector("#chaos-state:has-text('paused')")
        assert urllib.request.urlopen(mm.url + "/x", timeout=5).read() == b"ok"
        page.keyboard.press("1")
        page.wait_for_selector(".row .chaos")
        page.click(".row:has(.chaos)")
        page.wait_for_selector("#i-chaos:has-text('error_rate')")

        req = urllib.request.Request(mm.url + "/pets", data=b'{"name": "Bo"}', method="POST")
        assert urllib.request.urlopen(req, timeout=5).status == 201
        page.keyboard.press("3")
        page.wait_for_selector("#resources h2:has-text('3 items')")
        assert "Bo" in page.inner_text("#resources table")
        page.click(".reset-resource")
        page.wait_for_selector("#resources h2:has-text('2 items')")
        assert json.loads(urllib.request.urlopen(mm.url + "/pets", timeout=5).read()) == [{"id": 1, "name": "Rex"}, {"id": 2, "name": "Tom"}]


def test_a_handler_that_waited_and_its_webhook_show_in_the_inspector(tmp_path, page) -> None:
    script = tmp_path / "mocks.lua"
    script.write_text("""
mock.post("/pay", function()
  mock.sleep(300)
  mock.webhook { url = "http://127.0.0.1:1/hook", json = { paid = true }, retries = 1, backoff = 10 }
  return mock.json({ status = "pending" }, { status = 202 })
end)
""")
    with moonmock.serve(script, binary=os.environ.get("MOONMOCK_BIN")) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        request = urllib.request.Request(mm.url + "/pay", data=b"{}", method="POST")
        assert urllib.request.urlopen(request, timeout=5).status == 202
        mm.flush_webhooks()
        page.wait_for_selector(".row:has-text('/pay') .badge:has-text('202')")
        page.click(".row:has-text('/pay')")
        page.wait_for_selector("#i-outbound")
        outbound = page.inner_text("#i-outbound")
        assert "webhook ×2" in outbound and "POST http://127.0.0.1:1/hook" in outbound and "no answer" in outbound


def test_a_grpc_call_shows_decoded_in_the_inspector(tmp_path, page) -> None:
    # A Connect call in binary protobuf: the inspector shows the method, its status and both messages as JSON.
    (tmp_path / "shop.proto").write_text(
        'syntax = "proto3"; package shop.v1;\n'
        'message GetOrderRequest { string id = 1; }\nmessage Order { string id = 1; int64 total_cents = 2; }\n'
        'service Orders { rpc GetOrder(GetOrderRequest) returns (Order); }\n')
    script = tmp_path / "mocks.lua"
    script.write_text("""
mock.proto("shop.proto")
mock.grpc("shop.v1.Orders/GetOrder", function(req) return { id = req.message.id, total_cents = "1999" } end)
""")
    with moonmock.serve(script, binary=os.environ.get("MOONMOCK_BIN")) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        request = urllib.request.Request(mm.url + "/shop.v1.Orders/GetOrder", data=b"\x0a\x02o7", method="POST",
                                         headers={"Content-Type": "application/proto", "Connect-Protocol-Version": "1"})
        assert urllib.request.urlopen(request, timeout=5).read() == b"\x0a\x02o7\x10\xcf\x0f"
        page.wait_for_selector(".row:has-text('GetOrder')")
        page.click(".row:has-text('GetOrder')")
        page.wait_for_selector("#i-grpc")
        assert "shop.v1.Orders/GetOrder" in page.inner_text("#i-grpc") and "connect" in page.inner_text("#i-grpc")
        assert page.inner_text("#i-grpc-status") == "0 OK"
        assert json.loads(page.inner_text("#i-grpc-request")) == {"id": "o7"}
        assert json.loads(page.inner_text("#i-grpc-response")) == {"id": "o7", "totalCents": "1999"}

"""The dashboard's access, script status, stubs and state editing, the polling fallback and a
real 10,000-entry journal — through the page, as a person would use it."""
from __future__ import annotations

import http.client
import json
import os
import time
import urllib.parse
import urllib.request

import moonmock

GOOD = 'mock.get("/hello", mock.text("hi"))\n'
BAD = 'mock.get("/hello", mock.text("hi"))\n\nmock.get("/x", function( return 1 end)\n'


def start(tmp_path, text: str, **options) -> moonmock.Server:
    script = tmp_path / "mocks.lua"
    script.write_text(text)
    return moonmock.serve(script, binary=os.environ.get("MOONMOCK_BIN"), **options)


def admin(mm: moonmock.Server, path: str) -> object:
    return json.loads(urllib.request.urlopen(mm.url + "/__moonmock/" + path, timeout=5).read())


def test_admin_token_login_kept_for_the_tab_and_sign_out(tmp_path, page) -> None:
    with start(tmp_path, GOOD, token="s3cret") as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#login:visible")
        assert page.is_hidden("#app")
        page.fill("#token", "wrong")
        page.press("#token", "Enter")
        page.wait_for_selector("#login-error:has-text('wrong token')")
        page.fill("#token", "s3cret")
        page.press("#token", "Enter")
        page.wait_for_selector("#live.on")
        assert page.is_visible("#app") and page.is_hidden("#login")
        urllib.request.urlopen(mm.url + "/hello", timeout=5).read()
        page.wait_for_selector(".row:has-text('/hello')")
        page.reload()                                   # kept for the tab: no second login
        page.wait_for_selector("#live.on")
        page.wait_for_selector(".row:has-text('/hello')")
        page.click("#signout")
        page.wait_for_selector("#login:visible")
        page.reload()
        page.wait_for_selector("#login:visible")


def test_failed_reload_banner_until_a_good_one_and_the_reload_button(tmp_path, page) -> None:
    with start(tmp_path, GOOD, watch=True) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        generation = int(page.inner_text("#generation"))
        assert page.is_hidden("#banner")
        (tmp_path / "mocks.lua").write_text(BAD)
        page.wait_for_selector("#banner:visible", timeout=15_000)
        banner = page.inner_text("#banner")
        assert "The last reload failed" in banner and "mocks.lua:3" in banner, banner
        health = admin(mm, "health")
        assert health["reload_error"] and "mocks.lua:3" in health["reload_error"], health
        page.click("#reload")
        page.wait_for_selector("#reload-outcome.bad:has-text('reload failed')")
        assert "mocks.lua:3" in page.inner_text("#reload-outcome")
        assert urllib.request.urlopen(mm.url + "/hello", timeout=5).read() == b"hi"   # still serving
        (tmp_path / "mocks.lua").write_text(GOOD + 'mock.get("/more", mock.text("more"))\n')
        page.wait_for_selector("#banner", state="hidden", timeout=15_000)
        assert int(page.inner_text("#generation")) > generation
        page.click("#reload")
        page.wait_for_selector("#reload-outcome.good:has-text('reloaded: 2 rules')")


def test_stub_endpoint_switch_includes_none(tmp_path, page) -> None:
    stubs = tmp_path / "Stubs" / "getUser"
    stubs.mkdir(parents=True)
    (stubs / "ok.200.json").write_text('{"stub": true}')
    script = 'mock.stubs("Stubs", { getUser = "GET /users/:id" })\nmock.get("/users/:id", mock.text("real"))\n'
    with start(tmp_path, script) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        page.click("#tab-rules")
        select = "select.variant[data-rule=getUser]"
        assert "none" in page.inner_text(select)
        assert page.eval_on_selector(select, "s => s.value") == ""      # no stub active at first
        page.select_option(select, "ok.200.json")
        page.wait_for_selector("#toast:has-text('getUser: ok.200.json')")
        assert urllib.request.urlopen(mm.url + "/users/1", timeout=5).read() == b'{"stub": true}'
        page.select_option(select, "")
        page.wait_for_selector("#toast:has-text('getUser: none')")
        assert urllib.request.urlopen(mm.url + "/users/1", timeout=5).read() == b"real"


def test_state_edit_delete_one_and_flush_all(tmp_path, page) -> None:
    script = GOOD + 'mock.get("/seed", function() mock.state:set("a", 1); mock.state:set("b", "two"); mock.state:set("c", true); return "ok" end)\n'
    with start(tmp_path, script) as mm:
        urllib.request.urlopen(mm.url + "/seed", timeout=5).read()
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        page.keyboard.press("3")
        page.wait_for_selector("#state tr[data-key=b] .value:has-text('\"two\"')")
        page.click("#state tr[data-key=a] .edit-key")
        page.fill("#state tr[data-key=a] input.edit", "10")
        page.press("#state tr[data-key=a] input.edit", "Enter")
        page.wait_for_selector("#state tr[data-key=a] .value:text-is('10')")
        assert admin(mm, "state")["a"] == 10
        page.click("#state tr[data-key=b] .delete-key")
        page.wait_for_selector("#state tr[data-key=b]", state="detached")
        assert sorted(admin(mm, "state")) == ["a", "c"]
        page.click("#flush")
        page.wait_for_selector("#flush:has-text('Flush 2 keys?')")
        assert len(admin(mm, "state")) == 2            # the first click only asks
        page.click("#flush")
        page.wait_for_selector("#s-outcome:has-text('flushed')")
        page.wait_for_selector("#state:has-text('mock.state is empty')")
        assert admin(mm, "state") == {}
        urllib.request.urlopen(mm.url + "/seed", timeout=5).read()     # a request's change shows live
        page.wait_for_selector("#state tr[data-key=c] .value:text-is('true')")


def test_polling_fallback_where_the_stream_is_unavailable(tmp_path, page) -> None:
    page.add_init_script("delete window.EventSource")
    with start(tmp_path, GOOD) as mm:
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.polling")
        urllib.request.urlopen(mm.url + "/hello", timeout=5).read()
        page.wait_for_selector(".row:has-text('/hello')", timeout=6_000)
        urllib.request.urlopen(urllib.request.Request(mm.url + "/__moonmock/state/k", data=b"5", method="PUT"),
                               timeout=5).read()
        page.click("#tab-state")
        page.wait_for_selector("#state tr[data-key=k] .value:has-text('5')", timeout=6_000)


def test_real_ten_thousand_entry_journal(tmp_path, page) -> None:
    with start(tmp_path, GOOD, args=["--journal", "10000"]) as mm:
        host = urllib.parse.urlsplit(mm.url)
        connection = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
        for i in range(10_000):
            connection.request("GET", f"/hello?i={i}")
            connection.getresponse().read()
        connection.close()
        page.goto(mm.url + "/__moonmock/")
        page.wait_for_selector("#live.on")
        page.wait_for_function("document.getElementById('count').textContent.startsWith('10000')")
        first = page.evaluate("moonmock.timings.firstRender")
        assert page.locator(".row").count() < 200
        assert first < 200, f"first render of 10,000 entries took {first:.0f} ms"
        page.fill("#f-text", "i=9999")
        page.wait_for_function("document.getElementById('count').textContent.startsWith('1 of')")
        page.fill("#f-text", "")
        before = len(page.evaluate("moonmock.timings.updates"))
        deadline = time.monotonic() + 5
        urllib.request.urlopen(mm.url + "/hello?live", timeout=5).read()
        page.wait_for_selector(".row:has-text('/hello?live')")
        updates = page.evaluate("moonmock.timings.updates")[before:]
        assert updates and max(updates) < 200, updates
        assert time.monotonic() < deadline
        print(f"\n10,000 entries: first render {first:.1f} ms, live update {max(updates):.1f} ms")

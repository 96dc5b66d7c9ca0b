"""Record and replay as a browser sees them: headless Chromium uses an app through `moonmock
record` (and, separately, saves a HAR with Playwright for `moonmock convert har`); with the
upstream stopped, `moonmock serve` of what was written must give the page the same responses —
status, decoded body, content type, Location/Link/ETag/Set-Cookie (rewritten where record and
replay say so) — and the page must render the same text. curl agrees with the browser."""
from __future__ import annotations

import pathlib
import subprocess

import pytest

from upstream import App, Handler

SHOTS = pathlib.Path(__file__).resolve().parents[2] / ".build" / "replay-screenshots"
COMPARED = ("content-type", "location", "link", "etag", "set-cookie", "cache-control", "access-control-allow-origin",
            "access-control-allow-credentials")


def visit(browser, base, cross_page, har=None, har_content=None, name="visit"):
    """The app at `base`, then the cross-origin page calling `base`, in one browser context;
    the rendered texts and every response the pages got (but the favicon's)."""
    options = {"record_har_path": str(har), "record_har_content": har_content} if har else {}
    context = browser.new_context(**options)
    page = context.new_page()
    page.set_default_timeout(15_000)
    responses = []
    page.on("response", lambda r: responses.append(r))
    texts, seen = [], []
    try:
        for url in (base + "/", f"{cross_page}/cross.html?api={base}"):
            page.goto(url)
            page.wait_for_function("document.title === 'done'")
            texts.append(page.inner_text("#out"))
            # Bodies are read before the next navigation drops them.
            seen += [describe(r) for r in responses if not r.url.endswith("/favicon.ico")]
            responses.clear()
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        raise
    finally:
        context.close()
    return texts, seen


def describe(response):
    headers = {}
    for h in response.headers_array():
        name = h["name"].lower()
        if name in COMPARED:
            headers.setdefault(name, []).append(h["value"])
    try:
        body = b"" if 300 <= response.status < 400 else response.body()
    except Exception:   # a redirect's or a revalidation's body is not kept
        body = None
    return {"request": f"{response.request.method} {response.url}", "status": response.status, "headers": headers, "body": body}


def same(live, replay, live_origin, replay_origin, rewrites=()):
    """Every live response again on replay, in order, with the live origin read as the replay's."""
    def moved(text):
        text = text.replace(live_origin, replay_origin)
        for old, new in rewrites:
            text = text.replace(old, new)
        return text
    assert [r["request"] for r in replay] == [moved(r["request"]) for r in live]
    for a, b in zip(live, replay):
        where = a["request"]
        assert b["status"] == a["status"], where
        assert b["body"] == a["body"], where
        expected = {k: [moved(v) for v in vs] for k, vs in a["headers"].items()}
        for name in COMPARED:
            assert b["headers"].get(name) == expected.get(name), f"{where}: {name}"


def test_record_replay_in_chromium(browser, app, moonmock, tmp_path):
    pages = App()   # the origin of the cross-origin page: not part of the API, up throughout
    try:
        Handler.seen.clear()
        recorder = moonmock("record", "--upstream", app.origin, "--out", str(tmp_path / "recorded"))
        live_texts, live = visit(browser, recorder.origin, pages.origin, name="record")
        # The upstream heard where the client came from, and was asked for bodies without a coding.
        api = [h for m, p, h in Handler.seen if p.startswith("/api/items?")]
        assert api and api[0].get("X-Forwarded-Host") == f"127.0.0.1:{recorder.port}"
        assert api[0].get("X-Forwarded-Proto") == "http" and f'host="127.0.0.1:{recorder.port}"' in api[0].get("Forwarded", "")
        assert api[0].get("Accept-Encoding") == "identity"
        # Absolute URLs kept the browser on the recorder.
        assert "next on this origin: true" in live_texts[0] and "/old: 200 true the new page" in live_texts[0], live_texts[0]
        assert "me: 200" in live_texts[0] and live_texts[1] == "cors: shared", live_texts
        out = recorder.stop()
        assert "wrote" in out and "rules" in out, out
        app.stop()

        script = (tmp_path / "recorded" / "mocks.lua").read_text()
        assert "s3cr3t" not in script and "csrftoken=tok-123" in script   # the session cookie's value only is redacted
        served = moonmock("serve", "mocks.lua", "--no-watch", cwd=tmp_path / "recorded")
        assert served.port != recorder.port
        replay_texts, replay = visit(browser, served.origin, pages.origin, name="replay")
        assert replay_texts == [t.replace(recorder.origin, served.origin) for t in live_texts]
        same(live, replay, recorder.origin, served.origin, rewrites=[("s3cr3t-9f2", "REDACTED")])

        # curl replays the same answers.
        for r in live:
            method, url = r["request"].split(" ", 1)
            if method != "GET" or r["body"] is None or "/api/profile" in url or "/cross.html" in url:
                continue
            got = subprocess.run(["curl", "-s", "--compressed", url.replace(recorder.origin, served.origin)],
                                 capture_output=True, timeout=10).stdout
            charset = (r["headers"].get("content-type", [""])[0].split("charset=") + [""])[1].strip().lower()
            if charset and charset != "utf-8":
                got = got.decode(charset).encode("utf-8")   # the browser reports text bodies as UTF-8
            assert got == r["body"], url
        # The latin-1 export replays as the bytes the API sent.
        csv = subprocess.run(["curl", "-s", f"{served.origin}/export.csv"], capture_output=True, timeout=10).stdout
        assert csv == "name;city\nMüller;Köln\n".encode("latin-1")
        # A query never recorded gets the near-miss 404, not page 1.
        miss = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"{served.origin}/api/items?page=9&per_page=3"],
                              capture_output=True, text=True, timeout=10).stdout
        assert miss == "404"
    finally:
        pages.stop()


@pytest.mark.parametrize("kind", ["embed", "attach", "zip"])
def test_playwright_har_replays_in_chromium(browser, app, moonmock, tmp_path, kind):
    pages = App()
    try:
        har = tmp_path / ("session.zip" if kind == "zip" else "session.har")
        live_texts, live = visit(browser, app.origin, pages.origin, har=har,
                                 har_content="embed" if kind == "embed" else "attach", name=f"har-{kind}")
        app_origin = app.origin
        app.stop()
        converted = subprocess.run([pathlib.Path(__import__("os").environ["MOONMOCK_BIN"]), "convert", "har", str(har),
                                    "--host", app_origin.split("//")[1], "--out", "mocks"],
                                   cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert converted.returncode == 0, converted.stderr
        served = moonmock("serve", "mocks.lua", "--no-watch", cwd=tmp_path / "mocks")
        replay_texts, replay = visit(browser, served.origin, pages.origin, name=f"har-replay-{kind}")
        assert replay_texts == [t.replace(app_origin, served.origin) for t in live_texts]
        same(live, replay, app_origin, served.origin, rewrites=[("s3cr3t-9f2", "REDACTED")])
    finally:
        pages.stop()


def test_a_har_without_bodies_is_refused(browser, app, tmp_path):
    pages = App()
    try:
        har = tmp_path / "omit.har"
        visit(browser, app.origin, pages.origin, har=har, har_content="omit", name="omit")
        converted = subprocess.run([pathlib.Path(__import__("os").environ["MOONMOCK_BIN"]), "convert", "har", str(har), "--out", "mocks"],
                                   cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert converted.returncode == 1
        assert "no response bodies" in converted.stderr and "embedded or attached" in converted.stderr, converted.stderr
        assert not (tmp_path / "mocks").exists()
    finally:
        pages.stop()

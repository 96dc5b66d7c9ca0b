"""Headless Chromium (Debian's, driven by playwright) against `moonmock serve`; a failing test
leaves a screenshot in .build/dashboard-screenshots/."""
from __future__ import annotations

import os
import pathlib

import pytest
from playwright.sync_api import sync_playwright

SHOTS = pathlib.Path(__file__).resolve().parents[2] / ".build" / "dashboard-screenshots"


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=os.environ.get("MOONMOCK_CHROMIUM", "/usr/bin/chromium"),
                                      args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    failed = getattr(request.node, "failed", False)
    if failed:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert not errors, f"the page threw: {errors}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if outcome.get_result().when == "call" and outcome.get_result().failed:
        item.failed = True

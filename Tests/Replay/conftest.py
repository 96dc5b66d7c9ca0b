"""Headless Chromium (Debian's, through playwright) browsing an app live and on replay; the
moonmock binary from MOONMOCK_BIN. A failing test leaves screenshots in .build/replay-screenshots/."""
from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys

import pytest
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from upstream import App  # noqa: E402

BINARY = os.environ.get("MOONMOCK_BIN", "")


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=os.environ.get("MOONMOCK_CHROMIUM", "/usr/bin/chromium"),
                                      args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def app():
    running = App()
    yield running
    running.stop()


class Moonmock:
    """A `moonmock` command serving on a free port (it prints its address first)."""

    def __init__(self, *args, cwd=None):
        if not BINARY:
            pytest.fail("MOONMOCK_BIN names no moonmock binary")
        self.process = subprocess.Popen([BINARY, *args, "--port", "0"], cwd=cwd, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        # `record` names the upstream first, then where it listens: the last address is ours.
        ports = re.findall(r"http://127\.0\.0\.1:(\d+)", line)
        assert ports, f"{line}{self.process.stderr.read() if self.process.poll() is not None else ''}"
        self.port = int(ports[-1])
        self.origin = f"http://127.0.0.1:{self.port}"

    def stop(self):
        """SIGTERM, then what it printed after its first line."""
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=20)
        assert self.process.returncode == 0, err
        return out


@pytest.fixture
def moonmock():
    started = []

    def start(*args, cwd=None):
        m = Moonmock(*args, cwd=cwd)
        started.append(m)
        return m
    yield start
    for m in started:
        if m.process.poll() is None:
            m.process.kill()
            m.process.wait()

"""`moonmock serve` stops on SIGTERM and SIGINT even when whoever started it had them blocked
(Foundation's Process started from an XCTest hands its blocked mask on to the child)."""
import os
import re
import signal
import subprocess
import urllib.request

import pytest

BINARY = os.environ.get("MOONMOCK_BIN", "")
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def blocked():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stops_with_the_signals_blocked_by_its_parent(sig):
    if not BINARY:
        pytest.fail("MOONMOCK_BIN names no moonmock binary")
    process = subprocess.Popen([BINARY, "serve", "examples/mocks.lua", "--port", "0", "--no-watch"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=blocked)
    try:
        line = process.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
        with open(f"/proc/{process.pid}/status") as f:
            blocked_mask = int(re.search(r"SigBlk:\s*([0-9a-f]+)", f.read()).group(1), 16)
        assert blocked_mask & (1 << (sig - 1)) == 0, "the server still blocks the signal"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/__moonmock/health", timeout=5) as r:
            assert r.status == 200
        process.send_signal(sig)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

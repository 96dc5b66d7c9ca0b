"""Memory after large answers: 20 clients that never read a 10 MB answer. Their connections are
dropped after --send-timeout and the server gives the memory back to the system; with
--max-pending-output the peak stays bounded and the answers past it are 503s."""
import os
import re
import socket
import subprocess
import time

import pytest

BINARY = os.environ.get("MOONMOCK_BIN", "")
SCRIPT = 'mock.get("/big", mock.text(string.rep("x", 10 * 1024 * 1024)))\nmock.get("/small", "ok")\n'


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s*(\d+) kB", f.read()).group(1)) / 1024


def start(tmp_path, *extra):
    if not BINARY:
        pytest.fail("MOONMOCK_BIN names no moonmock binary")
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    process = subprocess.Popen([BINARY, "serve", "mocks.lua", "--port", "0", "--no-watch", "--threads", "2", *extra],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r"127\.0\.0\.1:(\d+)", process.stdout.readline()).group(1))
    return process, port


def unread_clients(port: int, n: int = 20) -> list:
    clients = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        clients.append(s)
    return clients


def small(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        return data


def test_memory_returns_after_unread_answers_are_dropped(tmp_path):
    process, port = start(tmp_path, "--send-timeout", "2")
    try:
        small(port)
        baseline = rss_mb(process.pid)
        clients = unread_clients(port)
        peak = baseline
        for _ in range(20):
            time.sleep(0.1)
            peak = max(peak, rss_mb(process.pid))
        assert peak > baseline + 100, f"the answers were not held ({baseline:.0f} → {peak:.0f} MB)"
        time.sleep(4)   # past --send-timeout (2 s) and the sweep; the clients still hold their sockets
        after = rss_mb(process.pid)
        assert small(port).startswith(b"HTTP/1.1 200")   # the server still answers
        for s in clients:
            s.close()
        assert after < baseline + 40, f"RSS stayed high: {baseline:.0f} MB → peak {peak:.0f} MB → {after:.0f} MB after the drop"
    finally:
        process.kill()
        process.wait()


def test_max_pending_output_bounds_the_peak(tmp_path):
    process, port = start(tmp_path, "--max-pending-output", str(64 * 1024 * 1024), "--send-timeout", "30")
    try:
        small(port)
        baseline = rss_mb(process.pid)
        clients = unread_clients(port)
        peak = baseline
        for _ in range(20):
            time.sleep(0.1)
            peak = max(peak, rss_mb(process.pid))
        assert peak < baseline + 120, f"the peak was not bounded ({baseline:.0f} → {peak:.0f} MB)"
        refused = 0
        for s in clients:
            s.settimeout(2)
            try:
                head = s.recv(64)
            except socket.timeout:
                head = b""
            refused += head.startswith(b"HTTP/1.1 503")
            s.close()
        assert refused >= 10, f"only {refused} of 20 got 503"
        assert small(port).startswith(b"HTTP/1.1 200")
    finally:
        process.kill()
        process.wait()

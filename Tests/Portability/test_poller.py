"""The server's poll(2) backend (MOONMOCK_POLLER=poll), the loop code a Mac's kqueue backend
shares with Linux: `moonmock serve` under strace answers curl, raw sockets and a pipelined pair
the same as on epoll, its health names the poller, and its accepting and serving threads
(moonmock-http-N) make no epoll call (Dispatch's own threads may)."""
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

BINARY = os.environ.get("MOONMOCK_BIN", "")
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def serve(tmp_path, poller):
    if not BINARY:
        pytest.fail("MOONMOCK_BIN names no moonmock binary")
    trace = tmp_path / f"strace-{poller or 'default'}.txt"
    env = dict(os.environ)
    env.pop("MOONMOCK_POLLER", None)
    if poller:
        env["MOONMOCK_POLLER"] = poller
    process = subprocess.Popen(
        ["strace", "-f", "-qq", "-o", str(trace), "-e", "trace=epoll_create1,epoll_ctl,epoll_wait,epoll_pwait,poll,ppoll,accept4,accept",
         BINARY, "serve", "examples/mocks.lua", "--port", "0", "--threads", "2", "--no-watch"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"127\.0\.0\.1:(\d+)", line)
    assert match, line
    return process, int(match.group(1)), trace


def traced_pid(strace_pid):
    """The moonmock process strace started (its only child)."""
    for _ in range(100):
        with open(f"/proc/{strace_pid}/task/{strace_pid}/children") as f:
            children = f.read().split()
        if children:
            return int(children[0])
        time.sleep(0.05)
    raise AssertionError("strace started no child")


def http_threads(pid):
    """Thread ids of the event loops, by the names EventLoop gives them."""
    tids = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().startswith("moonmock-http"):
                tids.add(int(tid))
    return tids


def exercise(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/users/7", timeout=5) as r:
        assert r.status == 200 and json.loads(r.read()) == {"id": 7, "name": "User 7"}
    # Two requests pipelined on one connection, then a request split over two writes.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /users/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        assert data.count(b"HTTP/1.1 200 OK") == 2 and b'"id":2' in data, data
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /users/3 HTT")
        time.sleep(0.05)
        s.sendall(b"P/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200 OK") and b'"id":3' in data, data
    # A malformed request gets its 400 and the server keeps serving.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /users/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
        assert s.recv(65536).startswith(b"HTTP/1.1 400")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/__moonmock/health", timeout=5) as r:
        return json.loads(r.read())


def calls_by_thread(trace, tids):
    seen = {}
    with open(trace) as f:
        for line in f:
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0].isdigit() and int(parts[0]) in tids:
                name = parts[1].split("(", 1)[0]
                seen[name] = seen.get(name, 0) + 1
    return seen


@pytest.mark.parametrize("poller", ["poll", None])
def test_event_loops_use_the_chosen_poller(tmp_path, poller):
    process, port, trace = serve(tmp_path, poller)
    try:
        health = exercise(port)
        server = traced_pid(process.pid)
        # Each loop names its thread when it first runs: on a loaded machine (strace slows every
        # call) the second may not have run yet.
        deadline = time.monotonic() + 10
        tids = http_threads(server)
        while len(tids) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            tids = http_threads(server)
        assert len(tids) == 2, tids
        os.kill(server, signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert health["poller"] == (poller or "epoll")
    calls = calls_by_thread(trace, tids)
    epoll_calls = {k: v for k, v in calls.items() if k.startswith("epoll")}
    if poller == "poll":
        assert epoll_calls == {}, calls
        assert calls.get("poll", 0) + calls.get("ppoll", 0) > 0, calls
    else:
        assert calls.get("epoll_wait", 0) + calls.get("epoll_pwait", 0) > 0, calls
        assert "poll" not in calls and "ppoll" not in calls, calls


def test_a_poller_the_platform_does_not_have_is_refused_with_its_name():
    env = dict(os.environ, MOONMOCK_POLLER="kqueue")
    out = subprocess.run([BINARY, "serve", "examples/mocks.lua", "--port", "0"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=20)
    assert out.returncode != 0
    assert "MOONMOCK_POLLER=kqueue is not a poller of this platform (epoll or poll)" in out.stderr + out.stdout

"""Differential test of Moonmock's HTTP/1.1 framing against h11, an independent implementation.

Every input (valid requests, then thousands of mutations of them) goes to h11's server-side
parser and, over a real socket, to a `moonmock serve` that echoes what it received. Moonmock may
be stricter than h11, never looser: it may answer fewer requests than h11 reads from the same
bytes, but every request it answers must be one h11 read, in the same place, with the same
method, target and body. (A request h11 refuses and Moonmock answers would be a way for a proxy
and Moonmock to disagree about where a request ends: request smuggling.)
"""
from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import time
from pathlib import Path

import h11
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = 'mock.any("/*rest", function(req) return { method = req.method, target = req.url, body = req.body } end)\n'

SEEDS = [
    b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nMoon\r\n5\r\nmock!\r\n0\r\n\r\n",
    b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /3 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"PUT /p HTTP/1.1\r\nHost: h.test:8080\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nX-A: 1\r\n\r\nokGET /next HTTP/1.1\r\nHost: h.test\r\n\r\n",
    b"POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nTrailer-A: b\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n",
]
INTERESTING = [b" ", b"\t", b":", b"\r", b"\n", b"\r\n", b"\x00", b"\x7f", b"a", b"0", b";", b",", b"-", b"\xff", b"/", b"G"]
HEADER_LINES = [b"Content-Length: 3\r\n", b"Content-Length: 03\r\n", b"Transfer-Encoding: chunked\r\n", b"Host: y\r\n",
                b"Transfer-Encoding: gzip\r\n", b"Content-Length: -1\r\n", b"Connection: close\r\n", b" folded\r\n",
                b"Host: \r\n", b"X: \x01\r\n", b"Content-Length: 3, 3\r\n", b"Expect: 100-continue\r\n"]


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        i = rng.randrange(len(b) + 1)
        if op < 0.3 and b:
            b[min(i, len(b) - 1)] = rng.choice(INTERESTING)[0]
        elif op < 0.55:
            b[i:i] = rng.choice(INTERESTING)
        elif op < 0.75 and b:
            del b[min(i, len(b) - 1)]
        elif op < 0.9:
            # a header line of its own, at the start of some line
            starts = [k + 1 for k in range(len(b)) if b[k:k + 1] == b"\n"]
            if starts:
                b[rng.choice(starts):rng.choice(starts)] = rng.choice(HEADER_LINES)
        else:
            j = rng.randrange(len(b) + 1)
            b[min(i, j):max(i, j)] = bytes(b[min(i, j):max(i, j)]).swapcase()
    return bytes(b)


def h11_requests(data: bytes) -> list[tuple[str, str, bytes]]:
    """The requests h11 reads whole from `data`, in order, before an error or the end."""
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    conn.receive_data(b"")   # the client is done sending
    out: list[tuple[str, str, bytes]] = []
    current = None
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError:
            return out
        if event is h11.NEED_DATA or event is h11.PAUSED or isinstance(event, h11.ConnectionClosed):
            if event is h11.PAUSED and conn.our_state is h11.SEND_RESPONSE:
                conn.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
                conn.send(h11.EndOfMessage())
                try:
                    conn.start_next_cycle()
                except h11.LocalProtocolError:
                    return out
                continue
            return out
        if isinstance(event, h11.Request):
            current = [event.method.decode("latin-1"), event.target.decode("latin-1"), b""]
        elif isinstance(event, h11.Data) and current is not None:
            current[2] += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage) and current is not None:
            out.append((current[0], current[1], current[2]))
            current = None


def moonmock_answers(port: int, data: bytes) -> list[dict]:
    """The 2xx answers Moonmock gives to `data` (the client shuts down its side after it)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        received = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            received += chunk
    finally:
        s.close()
    answers = []
    rest = received
    while rest.startswith(b"HTTP/1.1 "):
        head, _, rest = rest.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ")[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
        length = int(fields.get(b"content-length", b"0"))
        body, rest = rest[:length], rest[length:]
        if status == 100:
            rest = body + rest
            continue
        if 200 <= status < 300:
            answers.append(json.loads(body))
    return answers


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    binary = Path(os.environ.get("MOONMOCK_BINARY", ROOT / ".build/debug/moonmock"))
    if not binary.exists():
        pytest.fail(f"{binary} not built (swift build first, or set MOONMOCK_BINARY)")
    folder = tmp_path_factory.mktemp("h11")
    (folder / "mocks.lua").write_text(SCRIPT)
    proc = subprocess.Popen([str(binary), "serve", str(folder / "mocks.lua"), "--port", "0", "--no-watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    port = int(line.strip().rsplit(":", 1)[1])
    yield port
    proc.terminate()
    proc.wait(timeout=10)


def check(port: int, data: bytes) -> None:
    theirs = h11_requests(data)
    ours = moonmock_answers(port, data)
    assert len(ours) <= len(theirs), f"Moonmock answered {len(ours)} requests, h11 read {len(theirs)}: {data!r}"
    for mine, (method, target, body) in zip(ours, theirs):
        assert mine["method"] == method, f"method {mine['method']!r} vs h11 {method!r} in {data!r}"
        assert mine["target"].endswith(target) or target.startswith("http"), f"target {mine['target']!r} vs h11 {target!r} in {data!r}"
        assert mine["body"] == body.decode("utf-8", "replace") or len(mine["body"]) == len(body), f"body in {data!r}"


@pytest.mark.parametrize("seed", range(len(SEEDS)))
def test_valid_requests_are_read_alike(server, seed):
    data = SEEDS[seed]
    theirs = h11_requests(data)
    assert theirs, "h11 reads the seed"
    ours = moonmock_answers(server, data)
    assert len(ours) == len(theirs)   # on valid input, not stricter either
    check(server, data)


def test_mutations_are_never_read_more_loosely(server):
    rng = random.Random(int(os.environ.get("MOONMOCK_DIFF_SEED", "9112")))
    count = int(os.environ.get("MOONMOCK_DIFF_CASES", "3000"))
    started = time.monotonic()
    for _ in range(count):
        check(server, mutate(rng, rng.choice(SEEDS)))
    assert time.monotonic() - started < 240

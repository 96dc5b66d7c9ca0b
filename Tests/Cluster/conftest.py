"""A real redis-server (Debian's) in a temporary folder on a free loopback port, and replicas of
`moonmock serve --store` against it; every test stops what it started."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator, List

import pytest

import moonmock

SCRIPT = """
mock.get("/count", function() return { n = mock.state:incr("n") } end)
mock.get("/types", function()
  mock.state:set("i", 7); mock.state:set("d", 2.5); mock.state:set("s", "seven"); mock.state:set("b", true)
  return "set"
end)
mock.get("/read", function()
  local out = {}
  for _, k in ipairs({ "i", "d", "s", "b" }) do local v = mock.state:get(k); out[k] = math.type(v) or type(v) end
  return out
end)
mock.get("/seq", mock.sequence { mock.text("first"), mock.text("second"), mock.text("third") })
mock.get("/twice", mock.text("budget"), { times = 2 })
mock.get("/twice", mock.text("after"))
mock.get("/v", mock.variants { default = "one", one = mock.text("one"), two = mock.text("two") })
mock.get("/plain", mock.text("plain"))
mock.get("/ops", function()
  local first = mock.state:add("once", "a")
  local second = mock.state:add("once", "b")
  mock.state:set("brief", "soon gone", 0.3)
  return { first = first, second = second, once = mock.state:get("once") }
end)
mock.get("/keys", function() local k = mock.state:keys(); table.sort(k); return { keys = k, brief = mock.state:get("brief") } end)
mock.get("/forget", function() mock.state:delete("once"); return { once = mock.state:get("once") } end)
mock.get("/big", function() mock.state:set("big", string.rep("x", 2000)); return "stored" end)
mock.get("/waits", function()
  mock.sleep(20)
  local n = mock.state:incr("w")
  mock.sleep(20)
  return { n = n, seen = mock.state:get("w") >= n }
end)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """redis-server on 127.0.0.1:PORT, no persistence; stop() and start() again on the same port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                         "--appendonly", "no", "--dir", str(self.folder)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)

    def pause(self) -> None:
        assert self.process
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process
        self.process.send_signal(signal.SIGCONT)


@pytest.fixture
def redis(tmp_path) -> Iterator[Redis]:
    r = Redis(tmp_path)
    yield r
    try:
        r.resume()
    except Exception:
        pass
    r.stop()


def start_replicas(tmp_path: Path, redis: Redis, n: int = 3, extra: List[str] = (), script_prefix: str = "") -> List[moonmock.Server]:
    script = tmp_path / "mocks.lua"
    script.write_text(script_prefix + SCRIPT)
    replicas = []
    for i in range(n):
        replicas.append(moonmock.serve(script, binary=os.environ.get("MOONMOCK_BIN"),
                                       args=["--store", redis.url, "--replica", f"r{i + 1}", *extra]))
    return replicas


@pytest.fixture
def replicas(tmp_path, redis) -> Iterator[List[moonmock.Server]]:
    servers = start_replicas(tmp_path, redis)
    yield servers
    for s in servers:
        s.stop()

"""Starting and stopping the ``moonmock`` binary for a test."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from typing import List, Optional, Sequence, Union

from ._client import Client

__all__ = ["Server", "serve", "find_binary", "BinaryNotFound"]

_SERVING = re.compile(r" on (https?://\S+)$")
_LOCAL_CA = re.compile(r"with the local CA at (\S+)")
PathLike = Union[str, "os.PathLike[str]"]


class BinaryNotFound(FileNotFoundError):
    """No ``moonmock`` binary: give ``binary=``, set ``MOONMOCK_BIN``, or put it on ``PATH``."""


def find_binary(binary: Optional[PathLike] = None) -> str:
    """The binary to run: ``binary``, else ``$MOONMOCK_BIN``, else ``moonmock`` on ``PATH``."""
    for candidate in (binary, os.environ.get("MOONMOCK_BIN")):
        if candidate:
            path = os.fspath(candidate)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return os.path.abspath(path)
            raise BinaryNotFound(f"moonmock: {path} is not an executable file")
    found = shutil.which("moonmock")
    if found:
        return found
    raise BinaryNotFound(
        "moonmock: no moonmock binary; set MOONMOCK_BIN=/path/to/moonmock, put it on PATH, or pass binary= "
        "(releases: moonmock-VERSION-linux-ARCH.tar.gz, see the README)"
    )


class Server(Client):
    """A ``moonmock serve`` process on a free port of 127.0.0.1, and a :class:`Client` for it.

    Use it as a context manager (or call :meth:`stop`): the process is stopped on exit, also
    when the block raises.
    """

    def __init__(self, script: Optional[PathLike] = None, *, binary: Optional[PathLike] = None,
                 args: Sequence[str] = (), watch: bool = False, cors: bool = False,
                 rules: Optional[PathLike] = None, env: Optional[dict] = None, startup_timeout: float = 20.0,
                 token: Optional[str] = None, spec: Union[PathLike, Sequence[PathLike], None] = None,
                 spec_mode: Optional[str] = None) -> None:
        command: List[str] = [find_binary(binary), "serve"]
        if script is not None:
            command.append(os.fspath(script))
        command += ["--port", "0"]
        if not watch:
            command.append("--no-watch")
        if cors:
            command.append("--cors")
        if rules is not None:
            command += ["--rules", os.fspath(rules)]
        if token:
            command += ["--admin-token", token]
        specs = [] if spec is None else [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
        for one in specs:
            command += ["--spec", os.fspath(one)]
        if spec_mode is not None:
            command += ["--spec-mode", spec_mode]
        command += list(args)
        self.command = command
        #: What the server printed: its port and log lines (stdout), script logs and errors (stderr).
        self.output: List[str] = []
        self.errors: List[str] = []
        #: With ``--tls self-signed``: the local CA's PEM file, which clients trust (``None`` otherwise).
        self.ca_file: Optional[str] = None
        self._ca_printed = threading.Event()
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                         env=None if env is None else {**os.environ, **env})
        try:
            url = self._wait_until_serving(startup_timeout)
        except BaseException:
            self.stop()
            raise
        if url.startswith("https://") and "self-signed" in self.command:
            self._ca_printed.wait(startup_timeout)
        super().__init__(url, token=token, cafile=self.ca_file)
        self._wait_until_healthy(startup_timeout)

    def _wait_until_serving(self, timeout: float) -> str:
        found: List[str] = []
        ready = threading.Event()
        process = self._process

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.output.append(line.rstrip("\n"))
                ca = _LOCAL_CA.search(line)
                if ca:
                    self.ca_file = ca.group(1)
                    self._ca_printed.set()
                match = _SERVING.search(line.rstrip())
                if match and not found:
                    found.append(match.group(1))
                    ready.set()
            ready.set()

        def drain_errors() -> None:
            # Read all along: a server that logs a lot must never block on a full pipe.
            assert process.stderr is not None
            for line in process.stderr:
                self.errors.append(line.rstrip("\n"))

        threading.Thread(target=read, daemon=True).start()
        errors = threading.Thread(target=drain_errors, daemon=True)
        errors.start()
        if not ready.wait(timeout) or not found:
            if ready.is_set():   # its output ended: it is exiting
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            if process.poll() is None:
                raise TimeoutError(f"moonmock did not start serving within {timeout:.0f} s: {' '.join(self.command)}")
            errors.join(2)
            message = "\n".join(self.errors).strip() or "no message"
            raise RuntimeError(f"moonmock serve exited with {process.returncode}: {message}")
        return found[0]

    def _wait_until_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.health()
                return
            except Exception:  # not listening yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM (the server drains its requests), then SIGKILL after ``timeout``; the exit code."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        return self._process.returncode

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            process.kill()

    def __repr__(self) -> str:
        return f"<moonmock.Server {getattr(self, 'url', '?')} pid={self._process.pid}>"


def serve(script: Optional[PathLike] = None, **options: object) -> Server:
    """Starts ``moonmock serve SCRIPT`` on a free port and waits until it answers.

    >>> with moonmock.serve("mocks.lua") as mm:
    ...     urllib.request.urlopen(mm.url + "/users/7").read()
    b'{"id":7,"name":"User 7"}'
    """
    return Server(script, **options)  # type: ignore[arg-type]


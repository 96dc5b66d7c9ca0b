"""The ``moonmock`` pytest fixture: a Moonmock server for the test, reset after it.

Configure the script with ``--moonmock-script PATH``, the ini option ``moonmock_script``
(relative to the ini file), or per test with ``@pytest.mark.moonmock(script="other.lua")``.
One server runs per script for the whole session; every test starts from a reset (no runtime
rules, empty journal and state, default variants). ``MOONMOCK_BIN`` or ``--moonmock-bin``
names the binary.

    def test_profile(moonmock):
        moonmock.stub("GET", "/users/7", json={"id": 7})
        assert fetch(moonmock.url + "/users/7")["id"] == 7
        moonmock.verify("GET", "/users/7", times=1)
"""
from __future__ import annotations

import os
from typing import Dict, Iterator, Optional

import pytest

from ._server import Server


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("moonmock")
    group.addoption("--moonmock-script", dest="moonmock_script", default=None,
                    help="the mocks.lua the moonmock fixture serves")
    group.addoption("--moonmock-bin", dest="moonmock_bin", default=None,
                    help="the moonmock binary (default: $MOONMOCK_BIN, then PATH)")
    parser.addini("moonmock_script", "the mocks.lua the moonmock fixture serves (relative to this file)", default="")
    parser.addini("moonmock_bin", "the moonmock binary (relative to this file)", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "moonmock(script=None): serve this script for the test's moonmock fixture")


class _Servers:
    """One server per script for the session, stopped at its end."""

    def __init__(self, binary: Optional[str]) -> None:
        self.binary = binary
        self.running: Dict[Optional[str], Server] = {}

    def get(self, script: Optional[str]) -> Server:
        server = self.running.get(script)
        if server is None or not server.running:
            server = Server(script, binary=self.binary)
            self.running[script] = server
        return server

    def stop(self) -> None:
        for server in self.running.values():
            server.stop()
        self.running.clear()


def _from_ini(config: pytest.Config, name: str) -> Optional[str]:
    value = config.getini(name)
    if not value:
        return None
    base = os.path.dirname(str(config.inipath)) if config.inipath else str(config.rootpath)
    return os.path.normpath(os.path.join(base, value))


@pytest.fixture(scope="session")
def moonmock_servers(pytestconfig: pytest.Config) -> Iterator[_Servers]:
    binary = pytestconfig.getoption("moonmock_bin") or _from_ini(pytestconfig, "moonmock_bin")
    servers = _Servers(binary)
    yield servers
    servers.stop()


@pytest.fixture
def moonmock(request: pytest.FixtureRequest, moonmock_servers: _Servers) -> Iterator[Server]:
    """A running Moonmock server (a :class:`moonmock.Server`), reset before the test."""
    marker = request.node.get_closest_marker("moonmock")
    script: Optional[str] = None
    if marker is not None:
        script = marker.kwargs.get("script") or (marker.args[0] if marker.args else None)
        if script is not None and not os.path.isabs(script):
            script = os.path.normpath(os.path.join(os.path.dirname(str(request.node.fspath)), script))
    if script is None:
        script = request.config.getoption("moonmock_script") or _from_ini(request.config, "moonmock_script")
    server = moonmock_servers.get(script)
    server.reset()
    yield server

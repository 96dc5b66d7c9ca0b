"""Moonmock for Python tests: start the mock server, add rules, seed state, verify calls.

    import moonmock, urllib.request

    with moonmock.serve("mocks.lua") as mm:
        mm.stub("GET", "/users/7", json={"id": 7, "name": "Ana"})
        urllib.request.urlopen(mm.url + "/users/7").read()
        mm.verify("GET", "/users/:id", times=1)

Standard library only. The pytest plugin (``moonmock.pytest_plugin``) gives a ``moonmock`` fixture.
"""
from ._client import Client, MoonmockError, RuleError, State
from ._server import BinaryNotFound, Server, find_binary, serve

__all__ = ["Client", "MoonmockError", "RuleError", "State", "Server", "serve", "find_binary", "BinaryNotFound"]
__version__ = "0.1.0"

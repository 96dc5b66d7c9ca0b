"""The MCP server as a coding agent reaches it, through the official `mcp` SDK client: over
stdio (`moonmock mcp --url`) and over streamable HTTP (`moonmock serve --mcp`). Tools are
listed with their schemas and called; an add_rule answers the next HTTP request; verify gives
the near misses; check_script gives a script's error with its line; the resources are read."""
from __future__ import annotations

import asyncio
import json
import os
import textwrap
import urllib.request

import moonmock
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import contextlib

try:   # the SDK's name for the transport, and how it takes headers, changed between releases
    from mcp.client.streamable_http import streamable_http_client as _http_transport
    from mcp.shared._httpx_utils import create_mcp_http_client as _http_client

    def http_transport(url: str, headers: dict | None = None):
        return _http_transport(url, http_client=_http_client(headers=headers) if headers else None)
except ImportError:
    from mcp.client.streamable_http import streamablehttp_client as _http_transport

    def http_transport(url: str, headers: dict | None = None):
        return _http_transport(url, headers=headers)


@contextlib.asynccontextmanager
async def http_session(url: str, headers: dict | None = None):
    async with http_transport(url, headers) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            yield session

BINARY = os.environ.get("MOONMOCK_BIN")
SCRIPT = textwrap.dedent(
    """
    mock.get("/users/:id", function(req) return { id = tonumber(req.params.id) } end, { name = "user" })
    mock.get("/weather", mock.variants { default = "sunny", sunny = { sky = "clear" }, storm = mock.status(503, { sky = "dark" }) })
    """
)
TOOLS = {"list_rules", "add_rule", "remove_rule", "list_requests", "verify", "get_state", "set_state", "switch_variant",
         "reset", "reload", "record_start", "record_stop", "check_script"}


@pytest.fixture
def server(tmp_path):
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, args=["--mcp"]) as mm:
        yield mm


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def answer(result) -> dict:
    return json.loads(result.content[0].text)


def failed(result) -> bool:
    """Whether a tool call reported an error (`is_error` in SDK 2, `isError` before)."""
    return bool(result.is_error if hasattr(result, "is_error") else result.isError)


def schema(tool) -> dict:
    return getattr(tool, "input_schema", None) if hasattr(tool, "input_schema") else tool.inputSchema


async def scenario(session: ClientSession, mm) -> None:
    await session.initialize()
    tools = (await session.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        assert tool.description and schema(tool)["type"] == "object", tool.name
    added = await session.call_tool("add_rule", {"rule": {"method": "GET", "path": "/agent", "respond": {"status": 201, "json": {"by": "mcp"}}}})
    assert not failed(added)
    rule_id = answer(added)["id"]
    assert get(mm.url + "/agent") == (201, b'{"by":"mcp"}')   # the next HTTP request
    rules = answer(await session.call_tool("list_rules", {}))
    assert any(r["id"] == rule_id for r in rules)
    get(mm.url + "/userz/3")
    miss = await session.call_tool("verify", {"method": "GET", "pattern": "/users/:id", "times": 1})
    assert failed(miss)
    assert "path: expected /users/:id, got /userz/3" in miss.content[0].text
    passed = await session.call_tool("verify", {"method": "GET", "pattern": "/agent", "times": 1})
    assert not failed(passed) and answer(passed)["count"] == 1
    requests = answer(await session.call_tool("list_requests", {"pattern": "/agent"}))
    assert [r["url"] for r in requests] == [mm.url + "/agent"]
    await session.call_tool("set_state", {"key": "user", "value": "ana"})
    assert answer(await session.call_tool("get_state", {"key": "user"})) == "ana"
    assert answer(await session.call_tool("get_state", {})) == {"user": "ana"}
    await session.call_tool("switch_variant", {"rule": "GET /weather", "variant": "storm"})
    assert get(mm.url + "/weather")[0] == 503
    refused = await session.call_tool("add_rule", {"rule": {"path": "/bad", "respond": {"status": 99}}})
    assert failed(refused) and "rule.respond.status" in refused.content[0].text
    checked = await session.call_tool("check_script", {"script": 'mock.get("/a", "a")\nmock.get("/b", mock.json({)\n'})
    assert failed(checked) and answer(checked)["line"] == 2, checked.content[0].text
    fine = await session.call_tool("check_script", {"script": 'mock.get("/a", "a")\n'})
    assert not failed(fine) and answer(fine)["rules"] == ["GET /a"]
    await session.call_tool("remove_rule", {"id": rule_id})
    assert get(mm.url + "/agent")[0] == 404
    assert not failed(await session.call_tool("reload", {}))
    await session.call_tool("reset", {})
    assert get(mm.url + "/weather")[0] == 200
    resources = {str(r.uri) for r in (await session.list_resources()).resources}
    assert resources == {"moonmock://script", "moonmock://docs/language.md"}
    script = (await session.read_resource("moonmock://script")).contents[0].text
    assert 'mock.get("/users/:id"' in script
    language = (await session.read_resource("moonmock://docs/language.md")).contents[0].text
    assert "mock.route" in language


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_over_stdio(server) -> None:
    async def main():
        parameters = StdioServerParameters(command=BINARY or "moonmock", args=["mcp", "--url", server.url])
        async with stdio_client(parameters) as (read, write):
            async with ClientSession(read, write) as session:
                await scenario(session, server)
    run(main())


def test_over_streamable_http(server) -> None:
    async def main():
        async with http_session(server.url + "/__moonmock/mcp") as session:
            await scenario(session, server)
    run(main())


def test_http_mcp_is_off_unless_asked_and_keeps_the_admin_token(tmp_path) -> None:
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY) as plain:
        request = urllib.request.Request(plain.url + "/__moonmock/mcp", data=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                                         headers={"Content-Type": "application/json"}, method="POST")
        with pytest.raises(urllib.error.HTTPError) as off:
            urllib.request.urlopen(request, timeout=10)
        assert off.value.code == 404 and b"--mcp" in off.value.read()
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, args=["--mcp"], token="s3cret") as guarded:
        request = urllib.request.Request(guarded.url + "/__moonmock/mcp", data=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                                         headers={"Content-Type": "application/json"}, method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401

        async def main():
            async with http_session(guarded.url + "/__moonmock/mcp", {"Authorization": "Bearer s3cret"}) as session:
                await session.initialize()
                rules = await session.call_tool("list_rules", {})
                assert not failed(rules) and len(json.loads(rules.content[0].text)) >= 2
        run(main())

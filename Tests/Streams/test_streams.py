"""Streams through the socket door, read by real clients: the OpenAI and Anthropic SDKs
streaming from ``mock.llm``, and plain HTTP for SSE resumption and a client leaving."""
from __future__ import annotations

import http.client
import json
import os
import socket
import textwrap
import time
from pathlib import Path

import anthropic
import moonmock
import openai
import pytest

SCRIPT = textwrap.dedent(
    """
    mock.post("/v1/chat/completions", mock.llm {
      text = function(req) return "You said: " .. req.json.messages[#req.json.messages].content end,
      tokens_per_second = 20,
    })
    mock.post("/v1/messages", mock.llm { format = "anthropic", text = "Hello from a mocked Claude.", tokens_per_second = 200 })
    mock.get("/events", mock.sse({
      { id = "1", data = "one" }, { id = "2", data = { n = 2 } }, { id = "3", event = "last", data = "three" },
    }, { interval = 50 }))
    mock.get("/ticker", mock.sse({ { data = "first" } }, { close = false, heartbeat = 100 }))
    """
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("streams")
    (folder / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(folder / "mocks.lua", binary=os.environ.get("MOONMOCK_BIN")) as mm:
        yield mm


def test_openai_sdk_assembles_the_streamed_text_and_reads_usage(server) -> None:
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0, timeout=10)
    started = time.monotonic()
    arrivals: list[float] = []
    text = ""
    usage = None
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hello there moonmock"}],
        stream=True, stream_options={"include_usage": True},
    )
    for chunk in stream:
        arrivals.append(time.monotonic() - started)
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if chunk.usage is not None:
            usage = chunk.usage
    assert text == "You said: hello there moonmock"
    assert usage is not None and usage.completion_tokens == 5 and usage.prompt_tokens == 3
    assert usage.total_tokens == 8
    # Tokens arrive as they are produced: 20 per second, the first long before the last.
    assert arrivals[-1] - arrivals[0] >= 0.15, arrivals   # planned 0.3 s


def test_openai_sdk_without_stream_gets_one_completion(server) -> None:
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0, timeout=10)
    completion = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "ping"}])
    assert completion.choices[0].message.content == "You said: ping"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-test"
    assert completion.usage.completion_tokens == 3


def test_anthropic_sdk_streams_and_reports_usage(server) -> None:
    client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0, timeout=10)
    with client.messages.stream(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello from a mocked Claude."
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 5
    assert final.usage.input_tokens == 1
    message = client.messages.create(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "Hello from a mocked Claude."


def read_events(server, path: str, headers: dict[str, str] | None = None) -> list[str]:
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    assert response.getheader("Cache-Control") == "no-cache"
    assert response.getheader("Transfer-Encoding") == "chunked"
    body = response.read().decode()
    connection.close()
    return [block for block in body.split("\n\n") if block]


def test_sse_events_in_order_and_resumed_after_last_event_id(server) -> None:
    events = read_events(server, "/events")
    assert events == ["id: 1\ndata: one", 'id: 2\ndata: {"n":2}', "event: last\nid: 3\ndata: three"]
    assert read_events(server, "/events", {"Last-Event-ID": "2"}) == ["event: last\nid: 3\ndata: three"]


def test_a_client_leaving_an_open_stream_ends_it_in_the_journal(server) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /ticker HTTP/1.1\r\nHost: mock\r\n\r\n")
        received = b""
        deadline = time.monotonic() + 5
        while received.count(b": heartbeat") < 2 and time.monotonic() < deadline:
            received += sock.recv(4096)
        assert b"data: first" in received and received.count(b": heartbeat") >= 2
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        entries = [e for e in server.requests() if e["url"].endswith("/ticker")]
        if entries and (entries[-1].get("stream") or {}).get("ended") == "client left":
            break
        time.sleep(0.05)
    stream = entries[-1]["stream"]
    assert stream["ended"] == "client left"
    assert stream["heartbeats"] >= 2 and stream["chunks"] == 1

"""WebSocket strictness and compression, as the Autobahn suite checks them: replies to messages
that came in the same read as a Close or an error go out before the Close; invalid text fails
at its first bad fragment; permessage-deflate (RFC 7692) agreed with each parameter and
honoured, read by the `websockets` library, which offers it by default; `--ws-deflate off`; a
426 with its reason phrase and a 101's journal entry without the 426's text."""
from __future__ import annotations

import asyncio
import os
import struct
import textwrap
import urllib.request
import zlib

import moonmock
import pytest
import websockets
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

from test_websockets import masked, raw_upgrade, read_frame, run, ws_url

SCRIPT = textwrap.dedent(
    """
    mock.websocket("/echo", {
      on_message = function(ws, msg)
        if msg.binary then return ws:send_binary(msg.binary) end
        ws:send(msg.text)
      end,
    })
    """
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("strict")
    (folder / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(folder / "mocks.lua", binary=os.environ.get("MOONMOCK_BIN"), args=["--max-body", "65536"]) as mm:
        yield mm


def frames_until_close(sock) -> list[tuple[int, bytes]]:
    got = []
    while True:
        opcode, payload = read_frame(sock)
        got.append((opcode, payload))
        if opcode == 8:
            return got


def test_replies_to_messages_in_the_same_read_as_a_close_go_first(server) -> None:
    with raw_upgrade(server, "/echo") as sock:
        sock.sendall(masked(0x1, b"one") + masked(0x1, b"two") + masked(0x8, struct.pack(">H", 1000)))
        got = frames_until_close(sock)
        assert got[:2] == [(1, b"one"), (1, b"two")]
        assert got[2][0] == 8 and struct.unpack(">H", got[2][1][:2])[0] == 1000


def test_replies_to_messages_before_a_protocol_error_go_first(server) -> None:
    with raw_upgrade(server, "/echo") as sock:
        sock.sendall(masked(0x1, b"fine") + bytes([0x81, 0x02]) + b"no")   # then an unmasked frame
        got = frames_until_close(sock)
        assert got[0] == (1, b"fine")
        assert struct.unpack(">H", got[-1][1][:2])[0] == 1002


def test_invalid_text_fails_at_its_first_bad_fragment(server) -> None:
    with raw_upgrade(server, "/echo") as sock:
        sock.sendall(masked(0x1, "héllo".encode(), fin=False))
        sock.sendall(masked(0x0, b"\xce\xba\xe1\xbd", fin=False))   # a character cut across fragments: fine so far
        sock.sendall(masked(0x0, b"\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80", fin=False))   # a surrogate: invalid
        # No final fragment is sent: the server must not wait for it.
        opcode, payload = read_frame(sock)
        assert opcode == 8 and struct.unpack(">H", payload[:2])[0] == 1007


def test_invalid_text_fails_inside_a_frame_still_arriving(server) -> None:
    with raw_upgrade(server, "/echo") as sock:
        frame = masked(0x1, b"abc\xffdef" + b"x" * 200)
        sock.sendall(frame[:20])   # the bad byte has arrived, most of the frame has not
        opcode, payload = read_frame(sock)
        assert opcode == 8 and struct.unpack(">H", payload[:2])[0] == 1007


@pytest.mark.parametrize("factory, answer", [
    (ClientPerMessageDeflateFactory(), "permessage-deflate"),
    (ClientPerMessageDeflateFactory(server_no_context_takeover=True), "permessage-deflate; server_no_context_takeover"),
    (ClientPerMessageDeflateFactory(client_no_context_takeover=True), "permessage-deflate; client_no_context_takeover"),
    (ClientPerMessageDeflateFactory(server_max_window_bits=10), "permessage-deflate; server_max_window_bits=10"),
    (ClientPerMessageDeflateFactory(server_max_window_bits=8), "permessage-deflate; server_max_window_bits=8"),
    (ClientPerMessageDeflateFactory(client_max_window_bits=9), "permessage-deflate"),
])
def test_permessage_deflate_with_each_parameter(server, factory, answer) -> None:
    messages = ["hello " * 400, "hello " * 400, "", "ünïcödé " * 50]

    async def scenario():
        async with websockets.connect(ws_url(server, "/echo"), extensions=[factory], max_size=2**20) as ws:
            assert ws.response.headers["Sec-WebSocket-Extensions"] == answer
            echoed = []
            for text in messages:
                await ws.send(text)
                echoed.append(await ws.recv())
            await ws.send(os.urandom(3000))
            binary = await ws.recv()
            return echoed, len(binary)
    echoed, binary = run(scenario())
    assert echoed == messages and binary == 3000


def test_the_default_client_agrees_and_frames_are_compressed(server) -> None:
    with raw_upgrade_deflate(server) as (sock, extension):
        assert extension == "permessage-deflate; client_max_window_bits" or extension.startswith("permessage-deflate")
        compressor = zlib.compressobj(wbits=-15)
        body = compressor.compress(b"compress me " * 100) + compressor.flush(zlib.Z_SYNC_FLUSH)
        sock.sendall(masked_rsv1(0x1, body[:-4]))
        b0, payload = read_raw_frame(sock)
        assert b0 & 0x40, "the reply is not compressed"
        assert len(payload) < 200
        assert zlib.decompressobj(wbits=-15).decompress(payload + b"\x00\x00\xff\xff") == b"compress me " * 100


def test_an_inflated_message_past_max_body_closes_with_1009(server) -> None:
    with raw_upgrade_deflate(server) as (sock, _):
        compressor = zlib.compressobj(wbits=-15)
        body = compressor.compress(b"\0" * 200_000) + compressor.flush(zlib.Z_SYNC_FLUSH)
        assert len(body) < 65536
        sock.sendall(masked_rsv1(0x2, body[:-4]))
        b0, payload = read_raw_frame(sock)
        assert b0 & 0x0F == 8 and struct.unpack(">H", payload[:2])[0] == 1009


def test_ws_deflate_off_refuses_it(tmp_path) -> None:
    (tmp_path / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(tmp_path / "mocks.lua", binary=os.environ.get("MOONMOCK_BIN"), args=["--ws-deflate", "off"]) as mm:
        async def scenario():
            async with websockets.connect(ws_url(mm, "/echo")) as ws:
                assert "Sec-WebSocket-Extensions" not in ws.response.headers
                await ws.send("plain")
                return await ws.recv()
        assert run(scenario()) == "plain"


def test_a_plain_get_gets_426_upgrade_required_and_the_101_keeps_no_426_body(server) -> None:
    import http.client
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", "/echo")
    response = connection.getresponse()
    assert response.status == 426 and response.reason == "Upgrade Required"
    response.read()

    async def scenario():
        async with websockets.connect(ws_url(server, "/echo?journal=1")) as ws:
            await ws.send("x")
            await ws.recv()
    run(scenario())
    with urllib.request.urlopen(server.url + "/__moonmock/requests", timeout=10) as r:
        import json
        entries = json.load(r)
    entries = entries.get("requests", entries) if isinstance(entries, dict) else entries
    upgraded = [e for e in entries if e["url"].endswith("/echo?journal=1")]
    assert upgraded and upgraded[-1]["status"] == 101
    assert not upgraded[-1].get("response", {}).get("body"), upgraded[-1]


# Raw frames with RSV1 (what a compressing client sends).

def raw_upgrade_deflate(server):
    import base64
    import contextlib
    import socket
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  f"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    extension = [line.split(b":", 1)[1].strip().decode() for line in head.split(b"\r\n")
                 if line.lower().startswith(b"sec-websocket-extensions:")]
    assert extension, head

    @contextlib.contextmanager
    def opened():
        try:
            yield sock, extension[0]
        finally:
            sock.close()
    return opened()


def masked_rsv1(opcode: int, payload: bytes) -> bytes:
    frame = bytearray(masked(opcode, payload))
    frame[0] |= 0x40
    return bytes(frame)


def read_raw_frame(sock) -> tuple[int, bytes]:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data
    b0, b1 = exactly(2)
    length = b1 & 0x7F
    if length == 126:
        length = struct.unpack(">H", exactly(2))[0]
    elif length == 127:
        length = struct.unpack(">Q", exactly(8))[0]
    return b0, exactly(length)

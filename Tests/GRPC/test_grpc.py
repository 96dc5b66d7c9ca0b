"""gRPC, gRPC-Web and Connect through the socket door, with real clients: grpcio (stubs made by
grpcio-tools from Tests/GRPC/shop.proto) for the four call kinds, errors with details, metadata
and deadlines; gRPC-Web (binary and text) and Connect (JSON and binary) by raw HTTP/1.1
requests; a method no rule answers is UNIMPLEMENTED with the near miss."""
from __future__ import annotations

import base64
import importlib
import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import moonmock
import pytest

HERE = Path(__file__).parent
BINARY = os.environ.get("MOONMOCK_BIN")

SCRIPT = textwrap.dedent(
    """
    mock.proto("shop.proto")
    mock.grpc("shop.v1.Orders/GetOrder", function(req)
      if req.message.id == "missing" then
        return mock.grpc_error("NOT_FOUND", "no order missing",
          { { ["@type"] = "type.googleapis.com/shop.v1.Item", sku = "hint", quantity = 1 } })
      end
      return { id = req.message.id, status = "SHIPPED", items = { { sku = "A1", quantity = 2, price_cents = "1999" } },
               created_at = "2026-12-06T10:00:00.5Z", labels = { gift = "yes" }, total = 39.98, paid = true,
               extra = { tags = { "a", "b" } }, note = "leave at door", signature = "AQID",
               echoed = nil }
    end, { headers = { ["x-served-by"] = "moonmock" }, trailers = { ["x-cost"] = "7" } })
    mock.grpc("shop.v1.Orders/GetOrder", mock.grpc_error("UNAVAILABLE", "should not be reached"), { name = "after" })
    mock.grpc("shop.v1.Orders/ListOrders", function(req)
      local out = {}
      for i = 1, req.message.limit do out[i] = { id = "o" .. i, status = "PENDING" } end
      return mock.stream(out, { interval = 100 })
    end)
    mock.grpc("shop.v1.Orders/Upload", function(req)
      local ids = {}
      for i, m in ipairs(req.messages) do ids[i] = m.sku end
      return { count = #req.messages, ids = ids }
    end)
    mock.grpc("shop.v1.Orders/Talk", { on_message = function(call, msg)
      if msg.text == "stop" then return mock.grpc_error("ABORTED", "told to stop after " .. call.metadata["x-round"]) end
      call:send({ text = "echo: " .. msg.text })
    end })
    mock.grpc("shop.v1.Slow/Wait", { id = "late" }, { delay = 1000 })
    mock.grpc("shop.v1.Slow/Who", { id = "matched" }, { match = { id = "special" } })
    mock.grpc("shop.v1.Slow/Who", function(req) return { id = req.metadata["x-user"] or "nobody" } end)
    mock.grpc("shop.v1.Slow/Pick", mock.variants { default = "ok", ok = { id = "fine" },
                                                   down = mock.grpc_error("UNAVAILABLE", "down for maintenance") }, { name = "pick" })
    mock.grpc("shop.v1.Slow/Tick", function(req)
      return mock.stream(function(r, stream)
        for i = 1, 3 do
          stream:send({ id = r.message.id .. "-" .. i })
          stream:sleep(100)
        end
        if r.message.id == "bad" then return mock.grpc_error("DATA_LOSS", "lost the rest") end
      end)
    end)
    mock.grpc("shop.v1.Slow/Once", { id = "first" }, { times = 1 })
    mock.grpc("shop.v1.Slow/Once", { id = "later" })
    """
)

PROTO_EXTRA = """
service Slow {
  rpc Wait(GetOrderRequest) returns (Order);
  rpc Who(GetOrderRequest) returns (Order);
  rpc Pick(GetOrderRequest) returns (Order);
  rpc Once(GetOrderRequest) returns (Order);
  rpc Tick(GetOrderRequest) returns (stream Order);
}
"""


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grpc")
    (folder / "shop.proto").write_text((HERE / "shop.proto").read_text() + PROTO_EXTRA)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{folder}", f"--python_out={folder}",
                    f"--grpc_python_out={folder}", str(folder / "shop.proto")], check=True)
    sys.path.insert(0, str(folder))
    pb, rpc = importlib.import_module("shop_pb2"), importlib.import_module("shop_pb2_grpc")
    (folder / "mocks.lua").write_text(SCRIPT)
    with moonmock.serve(folder / "mocks.lua", binary=BINARY) as mm:
        channel = grpc.insecure_channel(mm.url.removeprefix("http://"))
        yield mm, pb, rpc, channel
        channel.close()
    sys.path.remove(str(folder))


def test_unary_call_with_well_known_types_and_metadata(stubs):
    mm, pb, rpc, channel = stubs
    order, call = rpc.OrdersStub(channel).GetOrder.with_call(pb.GetOrderRequest(id="42"), timeout=5)
    assert order.id == "42" and order.status == pb.SHIPPED
    assert order.items[0].sku == "A1" and order.items[0].price_cents == 1999
    assert order.created_at.seconds == 1796551200 and order.created_at.nanos == 500_000_000
    assert dict(order.labels) == {"gift": "yes"} and order.total == 39.98 and order.paid
    assert list(order.extra.fields["tags"].list_value.values)[1].string_value == "b"
    assert order.note.value == "leave at door" and order.signature == b"\x01\x02\x03"
    assert ("x-served-by", "moonmock") in call.initial_metadata()
    assert ("x-cost", "7") in call.trailing_metadata()


def test_error_with_status_details(stubs):
    mm, pb, rpc, channel = stubs
    with pytest.raises(grpc.RpcError) as info:
        rpc.OrdersStub(channel).GetOrder(pb.GetOrderRequest(id="missing"), timeout=5)
    error = info.value
    assert error.code() == grpc.StatusCode.NOT_FOUND and error.details() == "no order missing"
    details = dict(error.trailing_metadata())["grpc-status-details-bin"]
    # google.rpc.Status: code 5, the message, one Any holding a shop.v1.Item.
    assert details[:2] == b"\x08\x05" and b"type.googleapis.com/shop.v1.Item" in details
    item = pb.Item()
    item.ParseFromString(details.split(b"type.googleapis.com/shop.v1.Item")[1][2:])
    assert item.sku == "hint" and item.quantity == 1


def test_server_streaming_arrives_over_time(stubs):
    mm, pb, rpc, channel = stubs
    arrivals, ids = [], []
    for order in rpc.OrdersStub(channel).ListOrders(pb.ListOrdersRequest(limit=4), timeout=5):
        arrivals.append(time.monotonic())
        ids.append(order.id)
    assert ids == ["o1", "o2", "o3", "o4"]
    assert arrivals[-1] - arrivals[0] >= 0.2


def test_client_streaming_and_bidi(stubs):
    mm, pb, rpc, channel = stubs
    stub = rpc.OrdersStub(channel)
    ack = stub.Upload(iter([pb.Item(sku="a"), pb.Item(sku="b"), pb.Item(sku="c")]), timeout=5)
    assert ack.count == 3 and list(ack.ids) == ["a", "b", "c"]
    replies = [m.text for m in stub.Talk(iter([pb.Chat(text="hi"), pb.Chat(text="yo")]), timeout=5)]
    assert replies == ["echo: hi", "echo: yo"]


def test_bidi_is_live_each_answer_before_the_next_message(stubs):
    import queue
    mm, pb, rpc, channel = stubs
    answers: queue.Queue = queue.Queue()

    def requests():
        yield pb.Chat(text="one")
        yield pb.Chat(text="two after " + answers.get(timeout=5))   # only once the first answer is in
        yield pb.Chat(text="three after " + answers.get(timeout=5))

    replies = []
    for reply in rpc.OrdersStub(channel).Talk(requests(), timeout=5):
        replies.append(reply.text)
        answers.put(reply.text)
    assert replies == ["echo: one", "echo: two after echo: one", "echo: three after echo: two after echo: one"]


def test_bidi_error_ends_the_call_with_its_status(stubs):
    mm, pb, rpc, channel = stubs
    stream = rpc.OrdersStub(channel).Talk(iter([pb.Chat(text="a"), pb.Chat(text="stop"), pb.Chat(text="b")]),
                                          metadata=[("x-round", "7")], timeout=5)
    got = []
    with pytest.raises(grpc.RpcError) as info:
        for reply in stream:
            got.append(reply.text)
    assert got == ["echo: a"], (info.value.code(), info.value.details())
    assert info.value.code() == grpc.StatusCode.ABORTED and info.value.details() == "told to stop after 7"


def test_request_metadata_reaches_the_handler(stubs):
    mm, pb, rpc, channel = stubs
    order = rpc.SlowStub(channel).Who(pb.GetOrderRequest(), metadata=[("x-user", "ada")], timeout=5)
    assert order.id == "ada"


def test_deadline_shorter_than_the_delay(stubs):
    mm, pb, rpc, channel = stubs
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as info:
        rpc.SlowStub(channel).Wait(pb.GetOrderRequest(), timeout=0.2)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 0.9
    # Without a deadline the delay is kept.
    started = time.monotonic()
    assert rpc.SlowStub(channel).Wait(pb.GetOrderRequest(), timeout=5).id == "late"
    assert time.monotonic() - started >= 0.9


def test_unknown_method_is_unimplemented_with_the_near_miss(stubs):
    mm, pb, rpc, channel = stubs
    with pytest.raises(grpc.RpcError) as info:
        channel.unary_unary("/shop.v1.Orders/GetOrdr")(b"", timeout=5)
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "shop.v1.Orders/GetOrder" in info.value.details()


def post(mm, path, body, headers):
    request = urllib.request.Request(mm.url + path, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def envelopes(data: bytes) -> list[tuple[int, bytes]]:
    out, i = [], 0
    while i < len(data):
        n = struct.unpack(">I", data[i + 1:i + 5])[0]
        out.append((data[i], data[i + 5:i + 5 + n]))
        i += 5 + n
    return out


def test_grpc_web_binary_and_text_over_http1(stubs):
    mm, pb, rpc, channel = stubs
    message = pb.GetOrderRequest(id="7").SerializeToString()
    body = b"\x00" + struct.pack(">I", len(message)) + message
    status, headers, data = post(mm, "/shop.v1.Orders/GetOrder", body, {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"})
    assert status == 200 and headers["content-type"] == "application/grpc-web+proto"
    (flags, payload), (tflags, trailers) = envelopes(data)
    order = pb.Order()
    order.ParseFromString(payload)
    assert flags == 0 and order.id == "7"
    assert tflags == 0x80 and b"grpc-status: 0\r\n" in trailers and b"x-cost: 7\r\n" in trailers
    status, headers, data = post(mm, "/shop.v1.Orders/GetOrder", base64.b64encode(body), {"content-type": "application/grpc-web-text"})
    assert headers["content-type"] == "application/grpc-web-text+proto"
    (flags, payload), (tflags, trailers) = envelopes(base64.b64decode(data))
    order.ParseFromString(payload)
    assert order.id == "7" and b"grpc-status: 0" in trailers


def test_connect_unary_json_and_binary_and_errors(stubs):
    mm, pb, rpc, channel = stubs
    status, headers, data = post(mm, "/shop.v1.Orders/GetOrder", b'{"id":"9"}',
                                 {"content-type": "application/json", "connect-protocol-version": "1"})
    order = json.loads(data)
    assert status == 200 and order["id"] == "9" and order["createdAt"] == "2026-12-06T10:00:00.500Z"
    assert order["items"][0]["priceCents"] == "1999" and headers["trailer-x-cost"] == "7"
    status, headers, data = post(mm, "/shop.v1.Orders/GetOrder", pb.GetOrderRequest(id="b").SerializeToString(),
                                 {"content-type": "application/proto", "connect-protocol-version": "1"})
    decoded = pb.Order()
    decoded.ParseFromString(data)
    assert status == 200 and headers["content-type"] == "application/proto" and decoded.id == "b"
    status, headers, data = post(mm, "/shop.v1.Orders/GetOrder", b'{"id":"missing"}',
                                 {"content-type": "application/json", "connect-protocol-version": "1"})
    error = json.loads(data)
    assert status == 404 and error["code"] == "not_found" and error["message"] == "no order missing"
    assert error["details"][0]["type"] == "shop.v1.Item"


def test_connect_server_streaming_envelopes(stubs):
    mm, pb, rpc, channel = stubs
    body = b'{"limit":2}'
    status, headers, data = post(mm, "/shop.v1.Orders/ListOrders", b"\x00" + struct.pack(">I", len(body)) + body,
                                 {"content-type": "application/connect+json", "connect-protocol-version": "1"})
    frames = envelopes(data)
    assert [json.loads(p)["id"] for f, p in frames if f == 0] == ["o1", "o2"]
    assert frames[-1][0] == 0x02 and json.loads(frames[-1][1]) == {}


def test_journal_shows_the_calls(stubs):
    mm, pb, rpc, channel = stubs
    rpc.OrdersStub(channel).GetOrder(pb.GetOrderRequest(id="j"), timeout=5)
    with urllib.request.urlopen(mm.url + "/__moonmock/requests?limit=100", timeout=5) as r:
        entries = json.loads(r.read())
    entries = entries.get("requests", entries) if isinstance(entries, dict) else entries
    assert any(e.get("rule") == "grpc shop.v1.Orders/GetOrder" for e in entries)


def test_reflection_lists_and_describes_the_mocked_services(stubs):
    from google.protobuf.descriptor_pool import DescriptorPool
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
    mm, pb, rpc, channel = stubs
    database = ProtoReflectionDescriptorDatabase(channel)
    services = list(database.get_services())
    assert "shop.v1.Orders" in services and "shop.v1.Slow" in services and "grpc.health.v1.Health" in services
    pool = DescriptorPool(database)
    orders = pool.FindServiceByName("shop.v1.Orders")
    assert [m.name for m in orders.methods] == ["GetOrder", "ListOrders", "Upload", "Talk"]
    order = pool.FindMessageTypeByName("shop.v1.Order")
    assert order.fields_by_name["created_at"].message_type.full_name == "google.protobuf.Timestamp"


def test_v1_reflection_by_raw_request(stubs):
    mm, pb, rpc, channel = stubs
    call = channel.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
    # ServerReflectionRequest{list_services: ""} and {file_containing_symbol: "shop.v1.Orders"}
    replies = list(call(iter([b"\x3a\x00", b"\x22\x0eshop.v1.Orders"]), timeout=5))
    assert b"shop.v1.Orders" in replies[0] and b"grpc.reflection.v1.ServerReflection" in replies[0]
    assert b"shop.proto" in replies[1] and b"google/protobuf/timestamp.proto" in replies[1]


def test_reflection_answers_each_question_before_the_next_on_one_stream(stubs):
    # As grpcurl and Evans ask: one stream kept open, a question only after the last answer.
    import queue
    mm, pb, rpc, channel = stubs
    answers: queue.Queue = queue.Queue()

    def questions():
        yield b"\x3a\x00"                                   # list_services
        answers.get(timeout=5)
        yield b"\x22\x15shop.v1.Orders.Upload"               # file_containing_symbol (a method)

    call = channel.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
    replies = []
    for reply in call(questions(), timeout=5):
        replies.append(reply)
        answers.put(reply)
    assert len(replies) == 2 and b"shop.v1.Slow" in replies[0] and b"shop.proto" in replies[1]


def test_health_check(stubs):
    mm, pb, rpc, channel = stubs
    check = channel.unary_unary("/grpc.health.v1.Health/Check")
    assert check(b"", timeout=5) == b"\x08\x01"                         # SERVING
    assert check(b"\x0a\x0eshop.v1.Orders", timeout=5) == b"\x08\x01"
    with pytest.raises(grpc.RpcError) as info:
        check(b"\x0a\x05other", timeout=5)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_connect_python_client_in_each_protocol(stubs):
    from connectrpc.client import ConnectClientSync
    from connectrpc.errors import ConnectError
    from connectrpc.method import IdempotencyLevel, MethodInfo
    from connectrpc.protocol import ProtocolType
    mm, pb, rpc, channel = stubs
    get = MethodInfo(name="GetOrder", service_name="shop.v1.Orders", input=pb.GetOrderRequest, output=pb.Order,
                     idempotency_level=IdempotencyLevel.UNKNOWN)
    listing = MethodInfo(name="ListOrders", service_name="shop.v1.Orders", input=pb.ListOrdersRequest, output=pb.Order,
                         idempotency_level=IdempotencyLevel.UNKNOWN)
    upload = MethodInfo(name="Upload", service_name="shop.v1.Orders", input=pb.Item, output=pb.Ack,
                        idempotency_level=IdempotencyLevel.UNKNOWN)
    for protocol in (ProtocolType.CONNECT, ProtocolType.GRPC_WEB):
        for proto_json in (False, True):
            if protocol == ProtocolType.GRPC_WEB and proto_json:
                continue
            with ConnectClientSync(mm.url, protocol=protocol, proto_json=proto_json) as client:
                order = client.execute_unary(request=pb.GetOrderRequest(id="c1"), method=get)
                assert order.id == "c1" and order.created_at.nanos == 500_000_000, (protocol, proto_json)
                ids = [o.id for o in client.execute_server_stream(request=pb.ListOrdersRequest(limit=3), method=listing)]
                assert ids == ["o1", "o2", "o3"], (protocol, proto_json)
                ack = client.execute_client_stream(request=iter([pb.Item(sku="x"), pb.Item(sku="y")]), method=upload)
                assert list(ack.ids) == ["x", "y"], (protocol, proto_json)
                with pytest.raises(ConnectError) as info:
                    client.execute_unary(request=pb.GetOrderRequest(id="missing"), method=get)
                assert info.value.code.name == "NOT_FOUND" and "no order missing" in str(info.value)


def test_bidi_over_http1_connect_streaming_answers_then_the_error(stubs):
    # Not HTTP/2: the call is half-duplex (every message in, then the answers); an error after
    # some answers keeps them before the end-stream message.
    mm, pb, rpc, channel = stubs
    body = b"".join(b"\x00" + struct.pack(">I", len(m)) + m for m in (b'{"text":"a"}', b'{"text":"stop"}', b'{"text":"b"}'))
    status, headers, data = post(mm, "/shop.v1.Orders/Talk", body, {"content-type": "application/connect+json",
                                                                    "connect-protocol-version": "1", "x-round": "2"})
    frames = envelopes(data)
    assert [json.loads(p) for f, p in frames if f == 0] == [{"text": "echo: a"}]
    assert frames[-1][0] == 0x02 and json.loads(frames[-1][1])["error"] == {"code": "aborted", "message": "told to stop after 2"}


def test_variants_and_times_as_for_http_rules(stubs):
    mm, pb, rpc, channel = stubs
    slow = rpc.SlowStub(channel)
    assert slow.Pick(pb.GetOrderRequest(), timeout=5).id == "fine"
    mm.switch("pick", "down")
    with pytest.raises(grpc.RpcError) as info:
        slow.Pick(pb.GetOrderRequest(), timeout=5)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE and info.value.details() == "down for maintenance"
    mm.switch("pick", "ok")
    assert slow.Pick(pb.GetOrderRequest(), timeout=5).id == "fine"
    assert [slow.Once(pb.GetOrderRequest(), timeout=5).id for _ in range(3)] == ["first", "later", "later"]


def test_mock_proto_without_protoc_says_what_to_do(tmp_path):
    (tmp_path / "shop.proto").write_text((HERE / "shop.proto").read_text())
    (tmp_path / "mocks.lua").write_text('\nmock.proto("shop.proto")\n')
    env = dict(os.environ, PROTOC="/nonexistent/protoc")
    out = subprocess.run([BINARY, "check", "mocks.lua"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "mocks.lua:2" in out.stderr and "/nonexistent/protoc was not found" in out.stderr and "protobuf-compiler" in out.stderr


def test_server_streaming_from_a_generator_arrives_as_sent(stubs):
    mm, pb, rpc, channel = stubs
    arrivals, ids = [], []
    for order in rpc.SlowStub(channel).Tick(pb.GetOrderRequest(id="t"), timeout=5):
        arrivals.append(time.monotonic())
        ids.append(order.id)
    assert ids == ["t-1", "t-2", "t-3"] and arrivals[-1] - arrivals[0] >= 0.15
    got = []
    with pytest.raises(grpc.RpcError) as info:
        for order in rpc.SlowStub(channel).Tick(pb.GetOrderRequest(id="bad"), timeout=5):
            got.append(order.id)
    assert got == ["bad-1", "bad-2", "bad-3"]
    assert info.value.code() == grpc.StatusCode.DATA_LOSS and info.value.details() == "lost the rest"
    # The same generator over Connect (HTTP/1.1): the envelopes, then the end-stream message.
    body = b'{"id":"c"}'
    status, headers, data = post(mm, "/shop.v1.Slow/Tick", b"\x00" + struct.pack(">I", len(body)) + body,
                                 {"content-type": "application/connect+json", "connect-protocol-version": "1"})
    frames = envelopes(data)
    assert [json.loads(p)["id"] for f, p in frames if f == 0] == ["c-1", "c-2", "c-3"] and frames[-1][0] == 0x02


def test_match_picks_the_rule_by_the_request_message(stubs):
    mm, pb, rpc, channel = stubs
    slow = rpc.SlowStub(channel)
    assert slow.Who(pb.GetOrderRequest(id="special"), timeout=5).id == "matched"
    assert slow.Who(pb.GetOrderRequest(id="other"), metadata=[("x-user", "bo")], timeout=5).id == "bo"


def test_journal_decodes_a_streamed_answer(stubs):
    mm, pb, rpc, channel = stubs
    assert [o.id for o in rpc.OrdersStub(channel).ListOrders(pb.ListOrdersRequest(limit=2), timeout=5)] == ["o1", "o2"]
    with urllib.request.urlopen(mm.url + "/__moonmock/requests?limit=100", timeout=5) as r:
        entries = json.loads(r.read())
    entries = entries.get("requests", entries) if isinstance(entries, dict) else entries
    listed = [e for e in entries if e.get("rule") == "grpc shop.v1.Orders/ListOrders"][-1]
    assert listed["grpc"]["request"] == [{"limit": 2}] and listed["grpc"]["kind"] == "server_streaming"
    assert listed["grpc"]["response"] == [{"id": "o1", "status": "PENDING"}, {"id": "o2", "status": "PENDING"}]
    assert listed["grpc"]["status"]["name"] == "OK"

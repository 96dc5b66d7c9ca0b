import Foundation
import MoonmockCore
import MoonmockProto
import Testing

@Suite("Protobuf descriptors and the proto3 JSON codec")
struct ProtoCodecTests {
    static let schema: ProtoSchema = {
        let url = Bundle.module.url(forResource: "shop", withExtension: "binpb", subdirectory: "Fixtures")!
        return try! ProtoSchema(descriptorSet: Array(try! Data(contentsOf: url)))
    }()
    let codec = ProtoCodec(Self.schema)

    @Test("a descriptor set names its services, methods and their kinds, and keeps each file for reflection")
    func descriptors() throws {
        #expect(Self.schema.methodPaths == ["shop.v1.Orders/GetOrder", "shop.v1.Orders/ListOrders", "shop.v1.Orders/Upload", "shop.v1.Orders/Talk"])
        #expect(Self.schema.method("/shop.v1.Orders/ListOrders")?.kind == "server_streaming")
        #expect(Self.schema.method("shop.v1.Orders/Upload")?.kind == "client_streaming")
        #expect(Self.schema.method("shop.v1.Orders/Talk")?.kind == "bidi_streaming")
        #expect(Self.schema.method("shop.v1.Orders/GetOrder")?.input == "shop.v1.GetOrderRequest")
        #expect(Self.schema.files.map(\.name).contains("google/protobuf/timestamp.proto"))
        #expect(Self.schema.file(defining: "shop.v1.Orders.GetOrder")?.name == "shop.proto")
        #expect(Self.schema.messages["shop.v1.Order"]?.field(named: "created_at")?.jsonName == "createdAt")
    }

    @Test("known bytes: a string field, a varint, a negative int32 as ten bytes, packed repeated")
    func knownBytes() throws {
        #expect(try codec.encode(.object(["id": .string("42")]), as: "shop.v1.GetOrderRequest") == [0x0a, 0x02, 0x34, 0x32])
        #expect(try codec.encode(.object(["quantity": .integer(150)]), as: "shop.v1.Item") == [0x10, 0x96, 0x01])
        #expect(try codec.encode(.object(["quantity": .integer(-1)]), as: "shop.v1.Item") == [0x10] + Array(repeating: 0xff, count: 9) + [0x01])
        #expect(try codec.decode([0x10, 0x96, 0x01], as: "shop.v1.Item") == .object(["quantity": .integer(150)]))
    }

    @Test("a rich message round-trips in the proto3 JSON mapping: camelCase, int64 as text, enums by name, WKTs, maps, bytes")
    func roundTrip() throws {
        let order = try JSONValue(parsing: Array(#"""
        {"id":"7","status":"SHIPPED","items":[{"sku":"A1","quantity":2,"priceCents":"-1999"}],
         "createdAt":"1969-12-31T23:59:59.120Z","labels":{"a":"1","b":"2"},"signature":"AQID",
         "extra":{"n":1.5,"list":[true,null,"x",{"deep":{}}]},"note":"hi","total":39.98,"paid":true}
        """#.utf8))
        let bytes = try codec.encode(order, as: "shop.v1.Order")
        #expect(try codec.decode(bytes, as: "shop.v1.Order") == order)
        // The names of the .proto file are read too, and defaults are left out.
        let snake = try codec.encode(.object(["created_at": .string("2026-12-06T10:00:00Z"), "paid": .bool(false), "id": .string("")]), as: "shop.v1.Order")
        #expect(try codec.decode(snake, as: "shop.v1.Order") == .object(["createdAt": .string("2026-12-06T10:00:00Z")]))
    }

    @Test("timestamps and durations: fractions of 0, 3, 6 or 9 digits, offsets, negative values, the range")
    func time() throws {
        let ts = { (s: String) throws -> JSONValue in
            try self.codec.decode(try self.codec.encode(.object(["createdAt": .string(s)]), as: "shop.v1.Order"), as: "shop.v1.Order")["createdAt"]!
        }
        #expect(try ts("2026-12-06T10:00:00.000001Z") == .string("2026-12-06T10:00:00.000001Z"))
        #expect(try ts("2026-12-06T12:00:00+02:00") == .string("2026-12-06T10:00:00Z"))
        #expect(try ts("0001-01-01T00:00:00Z") == .string("0001-01-01T00:00:00Z"))
        #expect(try ts("1900-02-28T23:59:59.5Z") == .string("1900-02-28T23:59:59.500Z"))
        #expect(throws: ProtoError.self) { try ts("2026-13-01T00:00:00Z") }
        #expect(throws: ProtoError.self) { try ts("yesterday") }
    }

    @Test("what does not fit the type is refused with its path")
    func errors() throws {
        func message(_ json: String) -> String {
            do { _ = try codec.encode(try JSONValue(parsing: Array(json.utf8)), as: "shop.v1.Order"); return "" } catch { return "\(error)" }
        }
        #expect(message(#"{"itmes":[]}"#).hasPrefix("Order.itmes: shop.v1.Order has no such field"))
        #expect(message(#"{"items":[{"quantity":"ten"}]}"#) == "Order.items[0].quantity: expected an integer from -2147483648 to 2147483647, got ten")
        #expect(message(#"{"status":"LOST"}"#) == "Order.status: LOST is not a value of shop.v1.Status (STATUS_UNSPECIFIED, PENDING, SHIPPED)")
        #expect(message(#"{"signature":"%%"}"#).contains("expected base64"))
    }

    @Test("hostile bytes: cut varints and lengths, wrong wire types, deep nesting end in an error, never a crash")
    func hostile() throws {
        #expect(throws: ProtoError.self) { try codec.decode([0x10, 0x96], as: "shop.v1.Item") }
        #expect(throws: ProtoError.self) { try codec.decode([0x0a, 0x05, 0x41], as: "shop.v1.Item") }
        #expect(throws: ProtoError.self) { try codec.decode([0x0d, 0, 0, 0, 0], as: "shop.v1.Item") }   // sku as fixed32
        // Struct inside Struct, 200 deep.
        var deep: [UInt8] = []
        for _ in 0..<200 {
            var value = ProtoWriter(); value.tag(5, .lengthDelimited); value.lengthDelimited(deep)
            var entry = ProtoWriter(); entry.tag(1, .lengthDelimited); entry.lengthDelimited([0x61]); entry.tag(2, .lengthDelimited); entry.lengthDelimited(value.bytes)
            var s = ProtoWriter(); s.tag(1, .lengthDelimited); s.lengthDelimited(entry.bytes)
            deep = s.bytes
        }
        #expect(throws: ProtoError.self) { try codec.decode(deep, as: "google.protobuf.Struct") }
        // Unknown fields are skipped, groups included.
        #expect(try codec.decode([0xb8, 0x01, 0x05, 0x7b, 0x08, 0x01, 0x7c, 0x10, 0x03], as: "shop.v1.Item") == .object(["quantity": .integer(3)]))
    }

    @Test("RPC envelopes: each protocol's layout of messages and status")
    func framing() throws {
        let web = RPCFraming.answer(.grpcWeb(text: false, json: false), messages: [[1, 2]], status: .ok, headers: [], trailers: [("x-a", "b")])
        let trailers = Array("grpc-status: 0\r\nx-a: b\r\n".utf8)
        #expect(web.body == [0, 0, 0, 0, 2, 1, 2, 0x80, 0, 0, 0, UInt8(trailers.count)] + trailers)
        let connect = RPCFraming.answer(.connectUnary(json: true), messages: [], status: RPCStatus(code: 5, message: "gone"), headers: [], trailers: [])
        #expect(connect.status == 404 && String(decoding: connect.body, as: UTF8.self) == #"{"code":"not_found","message":"gone"}"#)
        #expect(RPCFraming.percentEncoded("ünï 100%") == "%C3%BCn%C3%AF 100%25")
        #expect(RPCStatus.code(named: "not_found") == 5 && RPCStatus.code(named: "CANCELED") == 1)
        #expect(throws: ProtoFramingError.self) { try RPCFraming.requestMessages(.grpc(json: false), [0, 0, 0, 0, 9, 1]) }
    }
}

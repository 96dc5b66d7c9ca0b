import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

@Suite("Connect and gRPC-Web through the in-process door")
struct RPCDoorTests {
    static let proto = """
    syntax = "proto3";
    package shop.v1;
    message GetOrderRequest { string id = 1; }
    message Order { string id = 1; int64 total_cents = 2; }
    service Orders { rpc GetOrder(GetOrderRequest) returns (Order); }
    """

    func moonmock() throws -> Moonmock {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-rpc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(Self.proto.utf8).write(to: folder.appendingPathComponent("shop.proto"))
        let moonmock = Moonmock(environment: .fixed(now: 1_700_000_000, seed: 1))
        try moonmock.load(lua: """
        mock.proto("shop.proto")
        mock.grpc("shop.v1.Orders/GetOrder", function(req)
          if req.message.id == "0" then return mock.grpc_error("NOT_FOUND", "no order 0") end
          return { id = req.message.id, total_cents = "1999" }
        end)
        """, baseDirectory: folder)
        return moonmock
    }

    @Test("a Connect unary call in JSON from URLSession: the message, and an error as Connect's JSON with its HTTP status")
    func connectJSON() async throws {
        let instance = try moonmock()
        defer { withExtendedLifetime(instance) {} }
        let session = instance.makeSession()
        let headers = ["Content-Type": "application/json", "Connect-Protocol-Version": "1"]
        let (body, response) = try await session.fetch("http://api.test/shop.v1.Orders/GetOrder", method: "POST", body: Data(#"{"id":"7"}"#.utf8), headers: headers)
        #expect(response.statusCode == 200 && response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(try JSONValue(parsing: Array(body.utf8)) == .object(["id": .string("7"), "totalCents": .string("1999")]))
        let (error, failed) = try await session.fetch("http://api.test/shop.v1.Orders/GetOrder", method: "POST", body: Data(#"{"id":"0"}"#.utf8), headers: headers)
        #expect(failed.statusCode == 404 && error == #"{"code":"not_found","message":"no order 0"}"#)
    }

    @Test("gRPC-Web binary from URLSession: the message envelope, then the trailers envelope with grpc-status")
    func grpcWeb() async throws {
        let instance = try moonmock()
        defer { withExtendedLifetime(instance) {} }
        let session = instance.makeSession()
        let request: [UInt8] = [0, 0, 0, 0, 3, 0x0a, 0x01, 0x39]   // GetOrderRequest{id: "9"}
        var urlRequest = URLRequest(url: URL(string: "http://api.test/shop.v1.Orders/GetOrder")!)
        urlRequest.httpMethod = "POST"
        urlRequest.httpBody = Data(request)
        urlRequest.setValue("application/grpc-web+proto", forHTTPHeaderField: "Content-Type")
        let (data, response) = try await session.data(for: urlRequest)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "application/grpc-web+proto")
        let bytes = Array(data)
        // Order{id: "9", total_cents: 1999}: 0a 01 39 10 cf 0f
        #expect(Array(bytes.prefix(11)) == [0, 0, 0, 0, 6, 0x0a, 0x01, 0x39, 0x10, 0xcf, 0x0f])
        #expect(bytes[11] == 0x80 && String(decoding: bytes[16...], as: UTF8.self) == "grpc-status: 0\r\n")
    }

    @Test("a method no rule answers, with unmatchedPolicy .notImplemented: UNIMPLEMENTED in the call's protocol, naming the closest rule")
    func unimplemented() async throws {
        let instance = try moonmock()
        instance.unmatchedPolicy = .notImplemented
        defer { withExtendedLifetime(instance) {} }
        let session = instance.makeSession()
        let (body, response) = try await session.fetch("http://api.test/shop.v1.Orders/GetOrdr", method: "POST", body: Data("{}".utf8),
                                                       headers: ["Content-Type": "application/json", "Connect-Protocol-Version": "1"])
        #expect(response.statusCode == 501)
        let json = try JSONValue(parsing: Array(body.utf8))
        #expect(json["code"] == .string("unimplemented") && (json["message"]?.stringValue ?? "").contains("grpc shop.v1.Orders/GetOrder"))
    }

    @Test("mock.proto's errors name the file and line: a .proto that does not compile, a file that is not there")
    func protoErrors() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-rpc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("syntax = \"proto3\";\nmessage A { Missing b = 1; }\n".utf8).write(to: folder.appendingPathComponent("bad.proto"))
        let moonmock = Moonmock()
        #expect { try moonmock.load(lua: "\nmock.proto(\"bad.proto\")", baseDirectory: folder) } throws: { error in
            let text = "\(error)"
            return text.contains("mocks.lua:2") && text.contains("bad.proto:2:") && text.contains("Missing")
        }
        #expect { try moonmock.load(lua: "mock.proto(\"nope.proto\")", baseDirectory: folder) } throws: { "\($0)".contains("'nope.proto' not found") }
        #expect { try moonmock.load(lua: "mock.proto(\"bad.proto\", {})\nmock.grpc(\"x.Y/Z\", {})", baseDirectory: folder) } throws: { _ in true }
    }
}

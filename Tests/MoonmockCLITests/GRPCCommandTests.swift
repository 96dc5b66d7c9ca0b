import Foundation
import Testing

@Suite("gRPC from the command line: convert proto, request GRPC, test's grpc()")
struct GRPCCommandTests {
    static let script = """
    mock.proto("shop.proto")
    mock.grpc("shop.v1.Orders/GetOrder", function(req)
      if req.message.id == "0" then return mock.grpc_error("NOT_FOUND", "no order 0") end
      return { id = req.message.id, status = "SHIPPED" }
    end)
    mock.grpc("shop.v1.Orders/ListOrders", function(req) return mock.stream({ { id = "a" }, { id = "b" } }) end)
    """

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-grpc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLIRunner.packageRoot.appendingPathComponent("Tests/GRPC/shop.proto"),
                                         to: dir.appendingPathComponent("shop.proto"))
        return dir
    }

    @Test("convert proto writes a rule per method that loads and answers each kind of call with an example message")
    func convert() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let converted = try CLIRunner.run(["convert", "proto", "shop.proto"], in: dir)
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stdout.contains(#"mock.proto("shop.proto")"#))
        try Data(converted.stdout.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let unary = try CLIRunner.run(["request", "mocks.lua", "GRPC", "shop.v1.Orders/GetOrder", "-d", #"{"id":"1"}"#], in: dir)
        let lines = unary.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "grpc-status: 0 OK", "\(unary.stdout)\(unary.stderr)")
        #expect(lines.count == 2 && lines[1].contains(#""createdAt":"2026-01-01T00:00:00Z""#) && lines[1].contains(#""status":"PENDING""#))
        let stream = try CLIRunner.run(["request", "mocks.lua", "GRPC", "shop.v1.Orders/ListOrders", "--no-delay"], in: dir)
        #expect(stream.stdout.split(separator: "\n").count == 3, "\(stream.stdout)")
        let bidi = try CLIRunner.run(["request", "mocks.lua", "GRPC", "shop.v1.Orders/Talk", "-d", #"[{"text":"a"},{"text":"b"},{"text":"c"}]"#], in: dir)
        #expect(bidi.stdout == "grpc-status: 0 OK\n" + String(repeating: "{\"text\":\"text 1\"}\n", count: 3), "\(bidi.stdout)")
        let written = try CLIRunner.run(["convert", "proto", "shop.proto", "--out", "out"], in: dir)
        #expect(written.status == 0 && FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/mocks.lua").path))
    }

    @Test("a .proto that does not compile: protoc's file:line:column, exit 1; a method that is not one: usage error 64")
    func errors() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("syntax = \"proto3\";\nmessage A { Nope b = 1; }\n".utf8).write(to: dir.appendingPathComponent("bad.proto"))
        let bad = try CLIRunner.run(["convert", "proto", "bad.proto"], in: dir)
        #expect(bad.status == 1 && bad.stderr.contains("bad.proto:2:") && bad.stderr.contains("Nope"), "\(bad.stderr)")
        try Data(#"mock.proto("shop.proto")"#.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let usage = try CLIRunner.run(["request", "mocks.lua", "GRPC", "nope", "-d", "{}"], in: dir)
        #expect(usage.status == 64 && usage.stderr.contains("pkg.Service/Method"))
    }

    @Test("request GRPC: the status and the messages; --fail exits 22 on an error status; an unknown method is UNIMPLEMENTED")
    func request() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.script.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let ok = try CLIRunner.run(["request", "mocks.lua", "GRPC", "shop.v1.Orders/GetOrder", "-d", #"{"id":"7"}"#], in: dir)
        #expect(ok.stdout == "grpc-status: 0 OK\n{\"id\":\"7\",\"status\":\"SHIPPED\"}\n")
        let missing = try CLIRunner.run(["request", "mocks.lua", "GRPC", "shop.v1.Orders/GetOrder", "-d", #"{"id":"0"}"#, "--fail"], in: dir)
        #expect(missing.status == 22 && missing.stdout == "grpc-status: 5 NOT_FOUND: no order 0\n")
        let unknown = try CLIRunner.run(["request", "mocks.lua", "GRPC", "shop.v1.Orders/Get", "--json"], in: dir)
        #expect(unknown.stdout.hasPrefix("grpc-status: 12 UNIMPLEMENTED: no rule answers shop.v1.Orders/Get; closest: grpc shop.v1.Orders/GetOrder"))
    }

    @Test("moonmock test: grpc() calls a method by name and its result is checked like a request's")
    func spec() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.script.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        try Data("""
        test("an order by id", function()
          local r = grpc("shop.v1.Orders/GetOrder", { id = "7" })
          expect(r.status):equals("OK")
          expect(r.message):equals({ id = "7", status = "SHIPPED" })
        end)
        test("a missing order", function()
          local r = grpc("shop.v1.Orders/GetOrder", { id = "0" })
          expect(r.status):equals("NOT_FOUND")
          expect(r.code):equals(5)
          expect(r.error):equals("no order 0")
        end)
        test("a stream", function()
          expect(#grpc("shop.v1.Orders/ListOrders", { limit = 2 }).messages):equals(2)
        end)
        test("fails as it should", function()
          expect(grpc("shop.v1.Orders/GetOrder", { id = "1" }).message.id):equals("2")
        end)
        """.utf8).write(to: dir.appendingPathComponent("mocks_spec.lua"))
        let r = try CLIRunner.run(["test", "mocks.lua", "mocks_spec.lua"], in: dir)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("3 passed, 1 failed"), "\(r.stdout)")
        #expect(r.stdout.contains("mocks_spec.lua:16"), "\(r.stdout)")
    }
}

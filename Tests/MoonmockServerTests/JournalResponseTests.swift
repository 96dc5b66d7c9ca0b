import Foundation
import MoonmockCore
import MoonmockScript
@testable import MoonmockServer
import Testing

/// The journal keeps each answer's fields and body (up to a limit), and the admin API shows
/// them: what the dashboard's request inspector reads.
@Suite("Answers in the journal")
struct JournalResponseTests {
    static let script = #"""
    mock.get("/user", mock.json({ id = 7 }, { headers = { ["X-Trace"] = "abc" } }))
    mock.get("/bytes", function() return mock.status(200, "\255\254\0") end)
    mock.get("/big", mock.text(string.rep("x", 5000)))
    """#

    static func lastEntry(_ server: MoonmockServer, path: String) async throws -> JSONValue {
        let list = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/requests").body.utf8))
        guard case .array(let entries) = list, let entry = entries.last(where: { $0["url"]?.stringValue?.hasSuffix(path) == true }) else {
            throw URLError(.badServerResponse)
        }
        return entry
    }

    @Test("headers and a text body as the rule gave them; bytes in base64; a long body cut at the limit")
    func answers() async throws {
        let server = try startServer(Self.script)
        defer { server.stop() }
        server.engine.journal.responseBodyLimit = 1000
        _ = try await server.fetch("/user")
        _ = try await server.fetch("/bytes")
        _ = try await server.fetch("/big")
        let user = try #require(try await Self.lastEntry(server, path: "/user")["response"])
        #expect(user["headers"]?["x-trace"] == .string("abc"))
        #expect(user["headers"]?["content-type"] == .string("application/json; charset=utf-8"))
        #expect(user["body"] == .string(#"{"id":7}"#))
        let bytes = try #require(try await Self.lastEntry(server, path: "/bytes")["response"])
        #expect(bytes["body_base64"] == .string(Data([0xFF, 0xFE, 0]).base64EncodedString()))
        let big = try #require(try await Self.lastEntry(server, path: "/big")["response"])
        #expect(big["body"]?.stringValue?.count == 1000)
        #expect(big["body_bytes"] == .integer(5000))
        #expect(big["truncated"] == .bool(true))
        server.engine.journal.responseBodyLimit = 0
        _ = try await server.fetch("/user")
        let none = try #require(try await Self.lastEntry(server, path: "/user")["response"])
        #expect(none["body"] == .string("") && none["body_bytes"] == .integer(8))
    }

    @Test("an entry as a mocks.lua rule that answers the same; as a curl command that sends it again")
    func copies() async throws {
        let server = try startServer(#"mock.post("/orders", function(req) return mock.json({ id = 1, sku = req.json.sku }, { status = 201 }) end)"#)
        defer { server.stop() }
        _ = try await server.fetch("/orders", method: "POST", body: #"{"sku":"A-1"}"#, headers: ["Content-Type": "application/json", "X-Note": "it's"])
        let entry = try await Self.lastEntry(server, path: "/orders")
        guard case .integer(let id)? = entry["id"] else { Issue.record("no id in \(entry)"); return }
        let rule = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/requests/\(id)/rule").body.utf8))
        let lua = try #require(rule["lua"]?.stringValue)
        #expect(lua.contains(#"mock.post("/orders", mock.json({ id = 1, sku = "A-1" }, { status = 201 }), { exact_query = true })"#), "\(lua)")
        // The rule loads, and answers that request as the handler did.
        let engine = Engine()
        _ = try engine.loadScript(source: lua)
        let replay = engine.handle(MockRequest(method: "POST", url: "http://x/orders", body: Array(#"{"sku":"A-1"}"#.utf8)))
        #expect(replay.response.status == 201 && String(decoding: replay.response.body, as: UTF8.self) == #"{"id":1,"sku":"A-1"}"#)
        let curl = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/requests/\(id)/curl").body.utf8))["curl"]?.stringValue
        #expect(curl?.hasPrefix("curl -X POST 'http://127.0.0.1:") == true, "\(curl ?? "")")
        #expect(curl?.contains(#"-H 'X-Note: it'\''s'"#) == true, "\(curl ?? "")")
        #expect(curl?.hasSuffix(#"--data-binary '{"sku":"A-1"}'"#) == true, "\(curl ?? "")")
        #expect(try await server.fetch("/__moonmock/requests/99999/rule").status == 404)
    }
}

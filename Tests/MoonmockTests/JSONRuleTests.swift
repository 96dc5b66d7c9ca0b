import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockScript
import Testing

@Suite("Rule JSON from Swift")
struct JSONRuleTests {
    @Test("addRule(json:) takes the admin API's rule JSON: tried before the script, a lua handler with the script's modules, removable")
    func addRule() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-json-rule-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"mock.get("/users/:id", { name = "from the script" })"#.utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        try Data(#"return { shout = function(s) return s:upper() end }"#.utf8).write(to: folder.appendingPathComponent("util.lua"))
        let moonmock = try Moonmock(script: folder)
        let session = moonmock.makeSession()

        let ids = try moonmock.addRule(json: #"{"method": "GET", "path": "/users/7", "respond": {"status": 404, "json": {"error": "gone"}}}"#)
        #expect(ids == ["runtime-1"])
        let (body, response) = try await session.fetch("https://api.example.com/users/7")
        #expect(response.statusCode == 404 && body == #"{"error":"gone"}"#)
        #expect(try await session.fetch("https://api.example.com/users/8").0 == #"{"name":"from the script"}"#)

        try moonmock.addRule(json: Data(#"[{"name": "shout", "path": "/shout/:word", "lua": "function(req) return require('util').shout(req.params.word) end"}]"#.utf8))
        #expect(try await session.fetch("https://api.example.com/shout/hey").0 == "HEY")
        #expect(moonmock.jsonRules.map(\.id) == ["shout", "runtime-1"])
        #expect(moonmock.jsonRules.first?.definition?["lua"] != nil)

        #expect(moonmock.removeRule(id: "runtime-1"))
        #expect(!moonmock.removeRule(id: "runtime-1"))
        #expect(try await session.fetch("https://api.example.com/users/7").0 == #"{"name":"from the script"}"#)

        #expect(throws: RuleJSONError.self) { try moonmock.addRule(json: #"{"path": "/a", "respond": {"status": 1000}}"#) }
        do {
            try moonmock.addRule(json: #"{"path": "/a", "respond": {"jsn": {}}}"#)
            Issue.record("a bad rule was taken")
        } catch {
            #expect(String(describing: error) == "rule.respond.jsn: unknown field; did you mean 'json'? (fields: status, headers, json, text, base64, file, delay, fault, bytes_per_second, conditional)")
        }
        moonmock.reset()
        #expect(moonmock.jsonRules.isEmpty)
    }
}

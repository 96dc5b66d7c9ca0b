import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockServer
import Testing

@Suite("CORS")
struct CORSTests {
    static let page = "http://localhost:3000"

    @Test("--cors: a preflight to any route is a 204 that allows it; answers, near-miss 404s and the admin API carry the origin")
    func anyOrigin() async throws {
        let f = try RulesFixture(script: #"mock.get("/users/:id", mock.json({ id = 1 }, { headers = { ["X-Request-Id"] = "r1" } }))"#) {
            $0.cors = CORSPolicy()
        }
        let s = f.server
        let preflight = try await s.fetch("/users/7", method: "OPTIONS",
                                          headers: ["Origin": Self.page, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-token, content-type"])
        #expect(preflight.status == 204)
        #expect(preflight.response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == Self.page)
        #expect(preflight.response.value(forHTTPHeaderField: "Access-Control-Allow-Methods")?.contains("PUT") == true)
        #expect(preflight.response.value(forHTTPHeaderField: "Access-Control-Allow-Headers") == "x-token, content-type")
        // Preflights go to no rule and into no journal.
        #expect(try await s.fetch("/__moonmock/requests").body == "[]")

        let answer = try await s.fetch("/users/7", headers: ["Origin": Self.page])
        #expect(answer.status == 200 && answer.response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == Self.page)
        #expect(answer.response.value(forHTTPHeaderField: "Access-Control-Expose-Headers")?.contains("X-Request-Id") == true)
        let missing = try await s.fetch("/nothing", headers: ["Origin": Self.page])
        #expect(missing.status == 404 && missing.response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == Self.page)
        let admin = try await s.fetch("/__moonmock/health", headers: ["Origin": Self.page])
        #expect(admin.status == 200 && admin.response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == Self.page)
        // Without an Origin (not a page): no CORS fields.
        #expect(try await s.fetch("/users/7").response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == nil)
        // Any origin may read, but only a named one may change the admin API's rules or state.
        let change = try await s.fetch("/__moonmock/state/k", method: "PUT", body: "1", headers: ["Origin": Self.page])
        #expect(change.status == 403 && change.body.contains("--cors-origin \(Self.page)"))
    }

    @Test("--cors-origin: only that origin; the admin API takes its changes")
    func namedOrigin() async throws {
        let f = try RulesFixture { $0.cors = CORSPolicy(origins: [Self.page]) }
        let s = f.server
        let other = try await s.fetch("/t", method: "OPTIONS", headers: ["Origin": "http://evil.test", "Access-Control-Request-Method": "GET"])
        #expect(other.status == 403)
        #expect(try await s.fetch("/t", headers: ["Origin": "http://evil.test"]).response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == nil)
        let rule = try await s.fetch("/__moonmock/rules", method: "POST", body: #"{"path": "/from-page", "respond": {"text": "ok"}}"#,
                                     headers: ["Origin": Self.page])
        #expect(rule.status == 201 && rule.response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == Self.page)
        #expect(try await s.fetch("/from-page").body == "ok")
    }

    @Test("mock.cors in a script: its origins, headers and credentials, while it serves")
    func scriptPolicy() async throws {
        let f = try RulesFixture(script: #"mock.cors { origins = { "http://localhost:3000" }, headers = { "x-token" }, credentials = true } mock.get("/a", "a")"#)
        let s = f.server
        let preflight = try await s.fetch("/a", method: "OPTIONS",
                                          headers: ["Origin": Self.page, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-other"])
        #expect(preflight.status == 204)
        #expect(preflight.response.value(forHTTPHeaderField: "Access-Control-Allow-Headers") == "x-token")
        #expect(preflight.response.value(forHTTPHeaderField: "Access-Control-Allow-Credentials") == "true")
        let answer = try await s.fetch("/a", headers: ["Origin": Self.page])
        #expect(answer.response.value(forHTTPHeaderField: "Access-Control-Allow-Credentials") == "true")
        #expect(try await s.fetch("/a", headers: ["Origin": "http://evil.test"]).response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == nil)
        // A reload without mock.cors ends it.
        try Data(#"mock.get("/a", "a")"#.utf8).write(to: f.dir.appendingPathComponent("mocks.lua"))
        #expect(try await s.fetch("/__moonmock/reload", method: "POST").status == 200)
        #expect(try await s.fetch("/a", headers: ["Origin": Self.page]).response.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == nil)
    }
}

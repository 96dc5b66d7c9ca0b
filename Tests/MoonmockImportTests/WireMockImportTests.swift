import Foundation
import MoonmockCore
import MoonmockImport
import MoonmockScript
import Testing

@Suite("WireMock folder to mocks.lua")
struct WireMockImportTests {
    static func converted() throws -> (ScriptWriter.Output, Engine) {
        let output = try WireMockImporter.convert(folder: importFixtures.appendingPathComponent("wiremock"), options: .init(title: "test"))
        let folder = try scratchFolder("wiremock")
        try output.save(in: folder)
        let engine = Engine()
        try engine.loadScript(file: folder.appendingPathComponent("mocks.lua").path)
        return (output, engine)
    }

    func send(_ engine: Engine, _ method: String, _ target: String, headers: HTTPHeaders = HTTPHeaders(), body: String = "") -> MockResponse {
        engine.handle(MockRequest(method: method, url: "http://127.0.0.1:8080" + target, headers: headers, body: Array(body.utf8))).response
    }

    @Test("URL, query, header and body matchers answer as the mappings say; what cannot convert is listed")
    func matchers() throws {
        let (output, engine) = try Self.converted()
        #expect(output.ruleCount == 8)
        #expect(output.notes.map(\.message) == ["urlPattern /(a|b)/x: no Lua pattern matches the same"])
        #expect(output.script.contains("--   mappings/05-unsupported.json: urlPattern /(a|b)/x"))
        let user = send(engine, "GET", "/users/42", headers: ["Accept": "application/json"])
        #expect(user.status == 200 && user.body == Array(#"{"id":1,"name":"Ana"}"#.utf8) && user.headers["x-source"] == "wiremock")
        #expect(send(engine, "GET", "/users/42").status == 404)               // no Accept containing json
        #expect(send(engine, "GET", "/users/abc", headers: ["Accept": "json"]).status == 404)
        let search = send(engine, "GET", "/search?q=word")
        #expect(search.status == 200 && search.body == Array("results for a word".utf8) && search.delay == .fixed(50))
        #expect(send(engine, "GET", "/search?q=Word").status == 404)
        #expect(send(engine, "GET", "/search?q=word&debug=1").status == 404)
        let order = send(engine, "POST", "/orders", headers: ["Content-Type": "application/json"], body: #"{"currency":"EUR","items":[1]}"#)
        #expect(order.status == 201 && String(decoding: order.body, as: UTF8.self).contains(#""id": "o-1""#))
        #expect(send(engine, "POST", "/orders", body: #"{"currency":"EUR"}"#).status == 404)
        #expect(send(engine, "GET", "/broken").fault == .connectionReset)
        #expect(send(engine, "GET", "/logo.png").body == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(engine.allRules.first(where: { $0.id == "GET /search" })?.priority == 9)
    }

    @Test("a scenario's states are mock.state: the cart is empty, gets an item, then shows it")
    func scenario() throws {
        let (_, engine) = try Self.converted()
        #expect(send(engine, "GET", "/cart").body == Array(#"{"items":[]}"#.utf8))
        #expect(send(engine, "POST", "/cart/items").status == 201)
        #expect(send(engine, "GET", "/cart").body == Array(#"{"items":[{"sku":"A-1"}]}"#.utf8))
        #expect(send(engine, "POST", "/cart/items").status == 404)   // only from "Started"
        #expect(try engine.state.get("scenario:Cart") == .string("Item added"))
    }

    @Test("Java regexes become Lua patterns where the two languages agree", arguments: [
        ("/users/[0-9]+", "^/users/[0-9]+$"), ("a.b", "^a.b$"), ("\\d{2,3}-x", "^%d%d%d?%-x$"), ("file\\.txt", "^file%.txt$"),
        ("[^/]+/\\w*", "^[^/]+/[%w_]*$"), ("x{2,}", "^xxx*$"), ("50%", "^50%%$"), ("a*?b", "^a-b$"),
    ])
    func regexes(regex: String, lua: String) {
        #expect(RegexToLua.translate(regex, whole: true) == lua)
    }

    @Test("regexes without a Lua equivalent are refused", arguments: ["(a|b)", "a|b", "\\bword", "x+?", "[\\D]", "(ab)+", "\\1", "\\d{-2}", "x{2,1}", "[a"])
    func untranslatable(regex: String) {
        #expect(RegexToLua.translate(regex, whole: true) == nil)
    }
}

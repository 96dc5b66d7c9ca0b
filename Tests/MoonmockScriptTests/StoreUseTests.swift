import Foundation
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("Which rules may wait for a shared store")
struct StoreUseTests {
    @Test("fixed answers never do; Lua code, budgets, sequences, templates and conditions may")
    func perRule() throws {
        let (engine, _folder) = try makeEngine("""
        mock.get("/fixed", mock.json { ok = true })
        mock.get("/text", mock.text("plain"), { delay = 5 })
        mock.get("/lua", function() return { n = mock.state:incr("n") } end)
        mock.get("/budget", mock.text("twice"), { times = 2 })
        mock.get("/seq", mock.sequence { "one", "two" })
        mock.get("/tpl", mock.template("{{state.n}}"))
        mock.route { method = "GET", path = "/when", when = function(req) return true end, respond = mock.text("w") }
        mock.get("/v", mock.variants { default = "a", a = mock.text("a"), b = mock.text("b") })
        """)
        _ = _folder
        let byPath = Dictionary(uniqueKeysWithValues: engine.scriptRuleSet.rules.map { ($0.pattern.source, $0.mayUseStore) })
        #expect(byPath == ["/fixed": false, "/text": false, "/lua": true, "/budget": true, "/seq": true, "/tpl": true,
                           "/when": true, "/v": true])
    }

    @Test("an engine without a store sends no request to the store workers")
    func withoutStore() throws {
        let (engine, _folder) = try makeEngine(#"mock.get("/lua", function() return "x" end)"#)
        _ = _folder
        #expect(!engine.mayUseStore(MockRequest(method: "GET", url: "http://x/lua")))
    }
}

import Foundation
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("mocks.lua: variants")
struct VariantTests {
    let script = """
    mock.get("/users/:id", mock.variants {
      default = "ok",
      ok = function(req) return { id = req.params.id } end,
      not_found = mock.status(404),
      server_error = mock.json({ error = "boom" }, { status = 500 }),
    })
    mock.get("/flags", mock.variants { beta = { beta = true }, alpha = { alpha = true } }, { name = "flags" })
    """

    @Test("the default variant answers until another is activated")
    func switching() throws {
        let (engine, _) = try makeEngine(script)
        #expect(engine.send("GET", "/users/7").text == #"{"id":"7"}"#)
        #expect(engine.send("GET", "/flags").text == #"{"alpha":true}"#)   // alphabetically first
        try engine.variants.activate("server_error", for: "GET /users/:id")
        let ex = engine.send("GET", "/users/7")
        #expect(ex.status == 500 && ex.text == #"{"error":"boom"}"#)
        try engine.variants.activate("not_found", for: "GET /users/:id")
        #expect(engine.send("GET", "/users/7").status == 404)
        #expect(engine.variants.list() == [
            .init(rule: "GET /users/:id", names: ["not_found", "ok", "server_error"], active: "not_found"),
            .init(rule: "flags", names: ["alpha", "beta"], active: "alpha"),
        ])
        engine.variants.reset()
        #expect(engine.send("GET", "/users/7").status == 200)
    }

    @Test("unknown rules and variants are refused with the names that exist")
    func unknown() throws {
        let (engine, _) = try makeEngine(script)
        let noRule = #expect(throws: VariantStore.UnknownVariant.self) { try engine.variants.activate("ok", for: "GET /nope") }
        #expect(noRule?.description.contains("GET /users/:id, flags") == true)
        let noVariant = #expect(throws: VariantStore.UnknownVariant.self) { try engine.variants.activate("gone", for: "flags") }
        #expect(noVariant?.description == "rule 'flags' has no variant 'gone' (variants: alpha, beta)")
    }

    @Test("bad declarations are load errors with file:line", arguments: [
        ("mock.get('/a', mock.variants {})", "mocks.lua:1: mock.variants: needs at least one variant"),
        ("mock.get('/a', mock.variants { default = 'x', ok = 'ok' })", "mocks.lua:1: mock.variants: default 'x' is not one of the variants (ok)"),
        ("mock.get('/a', function() return mock.variants { ok = 'ok' } end)", ""),
    ])
    func declarations(_ source: String, _ expected: String) throws {
        if expected.isEmpty {
            let (engine, _) = try makeEngine(source)
            let ex = engine.send("GET", "/a")
            #expect(ex.status == 500 && ex.text.contains("mock.variants must be a rule's response itself"))
            return
        }
        let error = try #require(try loadError(source))
        #expect(error.message.hasPrefix(expected), "got \(error.message)")
    }

    @Test("the choice survives a reload while the variant still exists")
    func survivesReload() throws {
        let folder = try ScriptFolder(["mocks.lua": script])
        let engine = Engine()
        let host = try ScriptHost(file: folder.path("mocks.lua"), engine: engine)
        try engine.variants.activate("server_error", for: "GET /users/:id")
        try engine.variants.activate("beta", for: "flags")
        try folder.write("mocks.lua", script.replacingOccurrences(of: "beta = { beta = true }, ", with: ""))
        #expect(host.reload().ok)
        #expect(engine.send("GET", "/users/7").status == 500)
        #expect(engine.variants.active(for: "flags") == "alpha")
    }
}

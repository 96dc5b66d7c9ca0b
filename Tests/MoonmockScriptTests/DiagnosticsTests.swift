import Foundation
import MoonmockCore
import MoonmockScript
import Testing

@Suite("Diagnostics that say what to do")
struct DiagnosticsTests {
    @Test("a load error names file:line and what to do", arguments: [
        ("mock.get('/a', 'x')\nmock.gett('/b', 'y')", "mocks.lua:2: mock.gett is not a function; did you mean mock.get?"),
        ("mock.grapql('Op', {})", "mocks.lua:1: mock.grapql is not a function; did you mean mock.graphql?"),
        ("mock.post('/orders', 42)", "mocks.lua:1: mock.post: the second argument must be a handler function or a response value, got number"),
        ("mock.graphql('Op', true)", "mocks.lua:1: mock.graphql: the second argument must be a handler function or a response value, got boolean"),
        ("mock.route{ path = '/a', respond = 7 }", "mocks.lua:1: mock.route: respond must be a handler function or a response value, got number"),
        ("mock.get('/a', mock.json({}, { status = '418' }))", #"mocks.lua:1: mock.json: status must be an integer from 100 to 599, got string "418""#),
        ("mock.get('/a', mock.text('x', { status = 42 }))", "mocks.lua:1: mock.text: status must be an integer from 100 to 599, got 42"),
        ("mock.get('/a', 'x', { status = '418' })", #"mocks.lua:1: mock.get: status must be an integer from 100 to 599, got string "418""#),
        ("local n = mock.state:inc('x')", "mocks.lua:1: mock.state.inc is not a function; did you mean mock.state.incr?"),
        ("mock.frobnicate()", "mocks.lua:1: mock.frobnicate does not exist"),
    ])
    func loadErrors(_ script: String, _ expected: String) throws {
        let error = try #require(try loadError(script))
        #expect(String(describing: error).contains(expected), "\(error)")
    }

    @Test("a handler that reads an undefined global fails naming it, with the nearest name")
    func undefinedGlobal() throws {
        let (engine, _) = try makeEngine("""
            local function render(req) return { path = req.path } end
            helper = function() return 1 end
            mock.get("/a", function(req) return rendr(req) end)
            mock.get("/b", function() return { n = helpr() } end)
            mock.get("/c", function() return { t = type(undefined_thing) } end)
            """)
        let a = engine.send("GET", "/a")
        #expect(a.status == 500)
        #expect(a.text.contains("mocks.lua:3: reading undefined global 'rendr'"), "\(a.text)")
        let b = engine.send("GET", "/b")
        #expect(b.text.contains("reading undefined global 'helpr'; did you mean 'helper'?"), "\(b.text)")
        #expect(engine.send("GET", "/c").text.contains("reading undefined global 'undefined_thing'"))
    }

    @Test("while the script loads, `x = x or default` still starts a global")
    func loadTimeGlobals() throws {
        let (engine, _) = try makeEngine("""
            counter_base = counter_base or 10
            mock.get("/a", function() return { base = counter_base } end)
            """)
        #expect(engine.send("GET", "/a").json == .object(["base": .integer(10)]))
    }

    @Test("a template field the pattern can never fill is a load error naming the pattern's parameters")
    func templateParameters() throws {
        let error = try #require(try loadError(#"mock.get("/users/:name", mock.template("hi {{req.params.nme}}"))"#))
        #expect(String(describing: error).contains(
            "mocks.lua:1: mock.get: {{req.params.nme}}: the pattern /users/:name has no parameter 'nme' (it has: name); did you mean {{req.params.name}}?"),
            "\(error)")
        let none = try #require(try loadError(#"mock.get("/users", mock.sequence { mock.template("{{req.params.id}}") })"#))
        #expect(String(describing: none).contains("the pattern /users has no parameter 'id' (it has none)"), "\(none)")
        // The fields that can be filled still load.
        let (engine, _) = try makeEngine(#"mock.get("/files/*rest", mock.template("{{req.params.rest}}"))"#)
        #expect(engine.send("GET", "/files/a/b").text == "a/b")
    }

    @Test("a missing fixture names the nearest files of the script's folder")
    func missingFixture() throws {
        let error = try #require(try loadError(#"mock.get("/u", mock.file("fixtures/user.json"))"#,
                                               files: ["fixtures/users.json": "[]", "fixtures/orders.json": "[]"]))
        #expect(String(describing: error).contains("mocks.lua:1: mock.file: fixture 'fixtures/user.json' not found in the script's folder"))
        #expect(String(describing: error).contains("; nearest: fixtures/users.json"), "\(error)")
    }

    @Test("the nearest name: a third of the length, at least two edits")
    func nearest() {
        #expect(EditDistance.nearest(to: "--prot", among: ["--port", "--host"]) == "--port")
        #expect(EditDistance.nearest(to: "gett", among: ["get", "post"]) == "get")
        #expect(EditDistance.nearest(to: "zzzzzz", among: ["get", "post"]) == nil)
        #expect(EditDistance.between("kitten", "sitting") == 3)
    }
}

import Foundation
import LuaBridge
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("mocks.lua: errors a script author sees")
struct ErrorTests {
    @Test("load errors name file and line", arguments: [
        ("mock.get('/a', 'a')\nmock.get('/b' 'b')\n", "mocks.lua:2:"),
        ("mock.get('/a', 'a')\n\nmock.get(42, 'x')", "mocks.lua:3: mock.get pattern must be a string, got number"),
        ("mock.get('/a', 'a', { tims = 1 })", "mocks.lua:1: mock.get: unknown option 'tims' (expected one of: chaos, delay, exact_query, headers, name, priority, query, status, times)"),
        ("\nmock.get('/a', mock.file('fixtures/missing.json'))", "mocks.lua:2: mock.file: fixture 'fixtures/missing.json' not found"),
        ("mock.get('/a')", "mocks.lua:1: mock.get: missing handler (a function or a response value)"),
        ("mock.get('/a?x=1', 'a')", "mocks.lua:1: mock.get: pattern '/a?x=1' contains a query string; match query items with query = { ... }"),
        ("mock.get('/a', mock.json({}, { delay = -5 }))", "mocks.lua:1: mock.json: delay must not be negative"),
        ("mock.get('/a', mock.fault('explode'))", "mocks.lua:1: mock.fault: unknown fault 'explode' (expected one of: connection_reset, empty_response, malformed_chunk, timeout, dribble)"),
        ("mock.get('/a', mock.template('{{nope}}'))", "mocks.lua:1: mock.template: template: {{nope}}: unknown name 'nope' (expected req., state., fake., uuid, now or timestamp)"),
        ("mock.route { path = '/a', respond = 'x', colour = 'red' }", "mocks.lua:1: mock.route: unknown option 'colour'"),
        ("mock.get('/a', 'a', { times = 0 })", "mocks.lua:1: mock.get: times must be a positive integer"),
        ("local t = nil\nlocal x = t.field", "mocks.lua:2: attempt to index a nil value (local 't')"),
        ("mock.route { path = '/a', query = { q = mock.match('[') }, respond = 'x' }", "mocks.lua:1: mock.match: invalid Lua pattern '['"),
        ("mock.get('/a', function() end)\nerror('custom failure')", "mocks.lua:2: custom failure"),
    ])
    func loadErrors(_ script: String, _ expected: String) throws {
        let error = try #require(try loadError(script, files: [:]))
        #expect(error.message.hasPrefix(expected), "got: \(error.message)")
    }

    @Test("a syntax error reports the right line and is marked as one")
    func syntaxLine() throws {
        let script = (1...40).map { "mock.get('/r\($0)', 'ok')" }.joined(separator: "\n") + "\nmock.get('/x', function( return 1 end)\n"
        let error = try #require(try loadError(script))
        #expect(error.isSyntaxError)
        #expect(error.location?.file == "mocks.lua")
        #expect(error.location?.line == 41)
    }

    @Test("an error inside a required module names the module's line")
    func moduleError() throws {
        let error = try #require(try loadError("require('broken')", files: ["broken.lua": "local a = 1\nlocal b = a + nil\n"]))
        #expect(error.message.hasPrefix("broken.lua:2: attempt to perform arithmetic on a nil value"))
    }

    @Test("a handler error answers 500 with message and traceback; the next request is served")
    func handlerError() throws {
        let (engine, _) = try makeEngine("""
        local function inner(req) return req.json.missing.field end
        mock.get("/boom", function(req) return inner(req) end)
        mock.post("/boom", function(req) local r = inner(req) return r end)
        mock.get("/ok", "fine")
        mock.get("/badreturn", function() return 42 end)
        """)
        let ex = engine.send("POST", "/boom", body: "{}")
        #expect(ex.status == 500)
        #expect(ex.text.contains("mocks.lua:1: attempt to index a nil value (field 'missing')"))
        #expect(ex.text.contains("stack traceback:"))
        #expect(ex.text.contains("mocks.lua:3"))
        #expect(engine.journal.entries().last?.error?.contains("stack traceback:") == true)
        #expect(engine.send("GET", "/boom").status == 500)
        #expect(engine.send("GET", "/ok").text == "fine")
        #expect(engine.send("GET", "/badreturn").text.contains("a handler must return a table, a string, a mock.* response or nil, not a number"))
    }

    @Test("a ttl that is not a number is an error naming what came, at the handler's line")
    func ttlNotANumber() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/set", function() mock.state:set("k", "v", { ttl = 5 }); return "set" end)
        mock.get("/add", function() mock.state:add("k", "v", "5") return "added" end)
        mock.get("/fine", function() mock.state:set("k", "v", 5); return "fine" end)
        """)
        let set = engine.send("GET", "/set")
        #expect(set.status == 500 && set.text.contains("mocks.lua:1:") && set.text.contains("mock.state:set: ttl_seconds must be a number of seconds, got table"))
        #expect(engine.send("GET", "/add").text.contains("mock.state:add: ttl_seconds must be a number of seconds, got string"))
        #expect(try engine.state.get("k") == nil)
        #expect(engine.send("GET", "/fine").text == "fine")
    }

    @Test("an infinite loop in a handler gives a 500 quickly and the VM keeps serving")
    func infiniteLoop() throws {
        let options = ScriptOptions(libraryPaths: [], limits: LuaLimits(instructions: 2_000_000, memoryBytes: 64 << 20))
        let (engine, _) = try makeEngine("""
        mock.get("/spin", function() while true do end end)
        mock.get("/sneaky", function() while true do pcall(function() while true do end end) end end)
        mock.get("/ok", "alive")
        """, options: options)
        let started = Date()
        guard let spin = engine.sendBounded("GET", "/spin") else { return }
        #expect(spin.status == 500)
        #expect(spin.text.contains("instruction budget exceeded"))
        guard let sneaky = engine.sendBounded("GET", "/sneaky") else { return }
        #expect(sneaky.status == 500)
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(engine.send("GET", "/ok").text == "alive")
    }

    @Test("a memory bomb in a handler gives a clear 500 and the VM keeps serving")
    func memoryBomb() throws {
        let options = ScriptOptions(libraryPaths: [], limits: LuaLimits(instructions: 0, memoryBytes: 16 << 20))
        let (engine, _) = try makeEngine("""
        mock.get("/bomb", function() local t = {} for i = 1, 1e9 do t[i] = string.rep("x", 4096) .. i end end)
        mock.get("/rep", function() return string.rep("x", 1 << 28) end)
        mock.get("/ok", function() return { ok = #string.rep("y", 1000) } end)
        """, options: options)
        let bomb = engine.send("GET", "/bomb")
        #expect(bomb.status == 500)
        #expect(bomb.text.contains("memory limit exceeded (16 MiB)"))
        #expect(engine.send("GET", "/rep").text.contains("memory limit exceeded"))
        #expect(engine.send("GET", "/ok").json == .object(["ok": .integer(1000)]))
    }

    @Test("the sandbox holds inside mocks.lua", arguments: [
        "os.execute('true')", "io.open('/etc/passwd')", "string.dump(function() end)", "debug.getinfo(1)",
        "package.loadlib('x', 'y')", "dofile('/etc/passwd')",
    ])
    func sandbox(_ call: String) throws {
        let (engine, _) = try makeEngine("mock.get('/x', function() \(call) return 'escaped' end)")
        let ex = engine.send("GET", "/x")
        #expect(ex.status == 500)
        // `io` and the rest are not there: reading one is an undefined global, calling a removed
        // function a call of nil.
        #expect((ex.text.contains("attempt to") || ex.text.contains("reading undefined global")) && !ex.text.contains("escaped"))
    }

    @Test("a binary chunk cannot be loaded from a script")
    func binaryChunk() throws {
        let (engine, _) = try makeEngine(#"mock.get('/x', function() local f, err = load("\27LuaT\0\25\147\r\n\26\n") return { f = f == nil, err = err } end)"#)
        #expect(engine.send("GET", "/x").json == .object(["f": .bool(true), "err": .string("load: binary chunks are not allowed")]))
    }

    @Test("--unsafe lifts the sandbox for trusted scripts")
    func unsafe() throws {
        let (engine, _) = try makeEngine("mock.get('/x', function() return type(io.open) end)", options: ScriptOptions(libraryPaths: [], unsafe: true))
        #expect(engine.send("GET", "/x").text == "function")
    }

    @Test("handlers run one at a time per VM under concurrent requests")
    func concurrency() throws {
        let (engine, _) = try makeEngine("""
        local inside = 0
        mock.get("/c/:n", function(req)
          inside = inside + 1
          local overlap = inside
          for i = 1, 2000 do local _ = i * 2 end
          inside = inside - 1
          return { n = tonumber(req.params.n), overlap = overlap }
        end)
        """)
        let results = LockedLines()
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            let ex = engine.send("GET", "/c/\(i)")
            results.append(ex.json?["overlap"] == .integer(1) && ex.json?["n"] == .integer(Int64(i)) ? "ok" : ex.text)
        }
        #expect(results.all.filter { $0 != "ok" }.isEmpty)
    }
}

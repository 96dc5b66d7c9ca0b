import Foundation
import LuaBridge
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("mocks.lua: host services")
struct ServicesTests {
    @Test("mock.state: get, set with ttl, add, incr, delete, keys, flush — method and dot calls")
    func state() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/s", function()
          local st = mock.state
          st:set("a", "x")
          st.set("b", 2.5)
          local added = st:add("a", "y")
          local added2 = st:add("c", true)
          local n = st:incr("n", 5, 10)
          st:delete("b")
          local keys = st:keys()
          local ok, err = pcall(st.incr, st, "a")
          return { a = st:get("a"), added = added, added2 = added2, n = n, keys = keys, b = st:get("b") == nil,
                   err = tostring(err):match("does not hold a number") ~= nil }
        end)
        mock.get("/flush", function() mock.state:flush() return { keys = #mock.state:keys() } end)
        """)
        #expect(engine.send("GET", "/s").json == .object([
            "a": .string("x"), "added": .bool(false), "added2": .bool(true), "n": .integer(15),
            "keys": .array([.string("a"), .string("c"), .string("n")]), "b": .bool(true), "err": .bool(true),
        ]))
        #expect(engine.send("GET", "/flush").json == .object(["keys": .integer(0)]))
    }

    @Test("mock.state refuses tables as values")
    func stateTypes() throws {
        let (engine, _) = try makeEngine(#"mock.get("/s", function() mock.state:set("t", {}) end)"#)
        let ex = engine.send("GET", "/s")
        #expect(ex.status == 500)
        #expect(ex.text.contains("mocks.lua:1: mock.state values are nil, booleans, numbers or strings, got table"))
    }

    @Test("mock.json encodes deterministically, keeps integers, knows null and empty arrays")
    func json() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/enc", function()
          return mock.json.encode({ z = 1, a = 2.0, m = { mock.null, true }, e = mock.json.array(), o = {} })
        end)
        mock.post("/round", function(req)
          local v = mock.json.decode(req.body)
          return mock.json.encode(v)
        end)
        mock.post("/types", function(req)
          local v = req.json
          return { int = math.type(v.i), float = math.type(v.f), null = v.n == mock.null, empty = mock.json.encode(v.e) }
        end)
        mock.get("/bad", function() return mock.json.encode({ f = function() end }) end)
        mock.get("/keys", function()
          return { sparse = { [1] = "a", [3] = "c" }, mixed = { "first", k = "v", [10] = "ten" }, list = { 3, -20, 0, math.mininteger } }
        end)
        mock.get("/badkey", function() return { [true] = 1 } end)
        """)
        #expect(engine.send("GET", "/keys").text
            == #"{"list":[3,-20,0,-9223372036854775808],"mixed":{"1":"first","10":"ten","k":"v"},"sparse":{"1":"a","3":"c"}}"#)
        let badKey = engine.send("GET", "/badkey")
        #expect(badKey.status == 500 && badKey.text.contains("cannot encode a table with boolean keys as JSON"))
        #expect(engine.send("GET", "/enc").text == #"{"a":2.0,"e":[],"m":[null,true],"o":{},"z":1}"#)
        let nul = #"{"k":"a\u0000b","list":[],"nested":{"x":[1,{"y":null}]}}"#
        #expect(engine.send("POST", "/round", body: nul).text == nul)
        #expect(engine.send("POST", "/types", body: #"{"i":3,"f":3.0,"n":null,"e":[]}"#).json == .object([
            "int": .string("integer"), "float": .string("float"), "null": .bool(true), "empty": .string("[]"),
        ]))
        let bad = engine.send("GET", "/bad")
        #expect(bad.status == 500 && bad.text.contains("cannot encode a function as JSON"))
    }

    @Test("a JSON body with embedded NUL bytes survives the round trip through Lua")
    func nulRoundTrip() throws {
        let (engine, _) = try makeEngine(#"mock.post("/echo", function(req) return { got = req.json.s, len = #req.json.s } end)"#)
        let ex = engine.send("POST", "/echo", body: #"{"s":"a\u0000b\u0000"}"#)
        #expect(ex.text == #"{"got":"a\u0000b\u0000","len":4}"#)
    }

    @Test("mock.read reads fixtures inside the script folder and refuses escapes")
    func read() throws {
        let outside = try ScriptFolder(["secret.txt": "top secret"])
        let (engine, folder) = try makeEngine("""
        mock.get("/ok", function() return mock.read("data/a.txt") end)
        mock.get("/dotdot", function() return mock.read("../secret.txt") end)
        mock.get("/abs", function() return mock.read("/etc/passwd") end)
        mock.get("/link", function() return mock.read("link/secret.txt") end)
        """, files: ["data/a.txt": "inside"])
        try FileManager.default.createSymbolicLink(atPath: folder.path("link"), withDestinationPath: outside.url.path)
        #expect(engine.send("GET", "/ok").text == "inside")
        let dotdot = engine.send("GET", "/dotdot")
        #expect(dotdot.status == 500 && dotdot.text.contains("'..' is refused"))
        #expect(engine.send("GET", "/abs").text.contains("absolute paths are refused"))
        #expect(engine.send("GET", "/link").text.contains("a symlink leads out"))
        #expect(!engine.send("GET", "/link").text.contains("top secret"))
    }

    @Test("a fixture path with ../ is refused when the script loads")
    func fileEscapeAtLoad() throws {
        let error = try loadError(#"mock.get("/x", mock.file("../../etc/passwd"))"#)
        #expect(error?.message == "mocks.lua:1: mock.file: '../../etc/passwd' is outside the script folder ('..' is refused)")
    }

    @Test("require loads modules from the script folder and from library folders, once")
    func require() throws {
        let lib = try ScriptFolder(["team/auth.lua": "return { token = function() return 'tok' end }"])
        let folder = try ScriptFolder([
            "helpers.lua": "loads = (loads or 0) + 1\nreturn { greet = function(n) return 'hi ' .. n end }",
            "mocks.lua": """
            local h = require("helpers")
            local h2 = require("helpers")
            local auth = require("team.auth")
            mock.get("/g", function() return { g = h.greet("x"), same = h == h2, loads = loads, t = auth.token() } end)
            """,
        ])
        let engine = Engine(environment: pinned)
        let generation = try engine.loadScript(file: folder.path("mocks.lua"), options: ScriptOptions(libraryPaths: [lib.url.path]))
        #expect(engine.send("GET", "/g").json == .object(["g": .string("hi x"), "same": .bool(true), "loads": .integer(1), "t": .string("tok")]))
        #expect(generation.dependencies.contains(folder.url.appendingPathComponent("helpers.lua").standardizedFileURL.path))
        #expect(generation.dependencies.contains(lib.url.appendingPathComponent("team/auth.lua").standardizedFileURL.path))
    }

    @Test("a missing module names the places it looked")
    func requireMissing() throws {
        let error = try loadError("local x = require('nope')")
        #expect(error?.message.hasPrefix("mocks.lua:1: module 'nope' not found; tried:") == true)
    }

    @Test("mock.log and print go to the journal entry of the request")
    func logging() throws {
        let (engine, _) = try makeEngine("""
        print("loading")
        mock.get("/l", function(req) mock.log("handling", req.path, 42) print("a", "b") return "ok" end)
        """)
        _ = engine.send("GET", "/l")
        #expect(engine.journal.entries().last?.logs == ["handling /l 42", "a\tb"])
    }

    @Test("now, uuid and math.random come from the injected environment")
    func environment() throws {
        let script = """
        mock.get("/e", function() return { now = mock.now(), uuid = mock.uuid(), r = math.random(1000), f = math.random() < 1 } end)
        """
        let (a, _) = try makeEngine(script, environment: .fixed(now: 1234.5, uuids: ["u1"], seed: 9))
        let (b, _) = try makeEngine(script, environment: .fixed(now: 1234.5, uuids: ["u1"], seed: 9))
        let ja = try #require(a.send("GET", "/e").json)
        #expect(ja["now"] == .double(1234.5))
        #expect(ja["uuid"] == .string("u1"))
        #expect(ja == b.send("GET", "/e").json)
    }

    @Test("log lines reach the host log callback, at load time and per request")
    func hostLog() throws {
        let lines = LockedLines()
        let folder = try ScriptFolder(["mocks.lua": "print('hello from load')\nmock.get('/x', function() mock.log('in handler') return 'x' end)"])
        let engine = Engine()
        let g = try engine.loadScript(file: folder.path("mocks.lua"), options: ScriptOptions(libraryPaths: [], log: { lines.append($0) }))
        _ = engine.send("GET", "/x")
        #expect(lines.all == ["hello from load", "in handler"])
        #expect(g.loadLogs == ["hello from load"])
        #expect(engine.journal.entries().last?.logs == ["in handler"])
    }
}

final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ s: String) { lock.withLock { lines.append(s) } }
    var all: [String] { lock.withLock { lines } }
}

import Foundation
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("VM sharing check")
struct SharingTests {
    /// The verdict for a script given as text.
    private func verdict(_ script: String) throws -> SharingVerdict {
        try ScriptGeneration.load(source: script, engine: Engine()).checkSharing()
    }

    @Test("scripts whose answers cannot tell VMs apart are shareable", arguments: [
        // routes, params, GraphQL, builders and host state
        #"mock.get("/users/:id", function(req) return { id = tonumber(req.params.id), name = "User " .. req.params.id } end)"#,
        #"mock.graphql("GetUser", function(req) local id = req.json.variables.id; return { data = { user = { id = id } } } end)"#,
        #"mock.get("/f", function() local n = mock.state:incr("f", 1, 0); if n % 3 == 0 then return mock.status(503) end; return { ok = true } end)"#,
        #"mock.get("/t", function(req) return mock.json({ q = req.query.q }, { status = 201, headers = { ["X-A"] = "1" } }) end)"#,
        // string methods on request values, chained
        #"mock.get("/s", function(req) return req.path:sub(2):upper() .. string.format("%d", 3) .. ("%s"):rep(2) end)"#,
        // tables and closures made per request may be changed at will
        """
        mock.get("/list", function(req)
          local out, count = {}, 0
          local function add(v) count = count + 1; out[#out + 1] = v end
          for i = 1, 3 do add(i) end
          table.insert(out, req.path)
          for i, v in ipairs(out) do out[i] = tostring(v) end
          table.sort(out)
          return { items = out, n = count }
        end)
        """,
        // load-time values, only read
        """
        local users = { ["1"] = { name = "Ann" }, ["2"] = { name = "Bob" } }
        local greeting = "hi"
        local function describe(u) return greeting .. " " .. u.name end
        mock.get("/u/:id", function(req)
          local u = users[req.params.id]
          if not u then return mock.status(404) end
          return { text = describe(u), first = users["1"].name }
        end)
        """,
        // a dispatch table of resolvers, picked by the request
        """
        local ops = { GetUser = function(req) return { id = req.json.variables.id } end, Ping = function() return "pong" end }
        mock.post("/graphql", function(req) return ops[req.json.operationName](req) end)
        """,
        // pairs over a load-time list: numeric keys are laid out alike in every VM
        """
        local users = { { id = "1", name = "Ann" }, { id = "2", name = "Bob" } }
        mock.get("/u/:id", function(req)
          for _, u in pairs(users) do if u.id == req.params.id then return u end end
          return mock.status(404)
        end)
        """,
        // whether a request's table is empty, asked of next(): the same in every VM
        """
        mock.get("/q", function(req)
          local empty = next(req.query) == nil
          if next(req.headers) then return { empty = empty, headers = true } end
          if not next(req.query) then return { empty = empty } end
          return { empty = next(req.query) ~= nil }
        end)
        """,
        // a when predicate that only reads; logging, ids and time are the host's
        #"mock.route { method = "GET", path = "/w", when = function(req) return req.headers["x-a"] == "1" end, respond = function() mock.log("hit"); return { id = mock.uuid(), t = os.time(), r = math.random(10) } end }"#,
    ])
    func shareable(script: String) throws {
        let v = try verdict(script)
        #expect(v.shareable, "\(v.reason ?? "")")
        #expect(v.reason == nil)
    }

    @Test("scripts whose answers would differ per VM are not, and the reason names the line", arguments: [
        ("local n = 0\nmock.get('/n', function() n = n + 1; return { n = n } end)", "mocks.lua:2: assigns the variable 'n'"),
        ("mock.get('/g', function() hits = (hits or 0) + 1; return { hits = hits } end)", "mocks.lua:1: assigns the global 'hits'"),
        ("local seen = {}\nmock.get('/s/:id', function(req)\n  seen[req.params.id] = true\n  return {} end)", "mocks.lua:3: assigns into a table made at load"),
        ("local log = {}\nmock.get('/l', function(req) table.insert(log, req.path); return { n = #log } end)", "mocks.lua:2: table.insert changes a table made when the script loaded"),
        ("local t = { a = 1 }\nmock.get('/t', function() t.a = 2; return t end)", "mocks.lua:2: assigns field 'a' of a table made at load"),
        ("mock.get('/p', function(req) local out = {}\nfor k in pairs(req.query) do out[#out + 1] = k end\nreturn out end)", "mocks.lua:2: iterates a table with pairs or next"),
        ("local t = {}\nmock.get('/a', function() return { where = tostring(t) } end)", "mocks.lua:2: tostring of a table or function made at load"),
        // a helper that keeps state, called from a handler
        ("local count = 0\nlocal function bump() count = count + 1; return count end\nmock.get('/b', function() return { n = bump() } end)", "mocks.lua:2: assigns the variable 'count'"),
        // a closure that writes to a table reached through a load-time upvalue
        ("local cache = {}\nmock.get('/c', function(req)\n  local function remember(k) cache[k] = 1 end\n  remember(req.path); return {} end)", "mocks.lua:3: assigns into a table made at load"),
        // a function the check cannot follow
        ("mock.get('/x', function(req)\n  local m = getmetatable(req)\n  return m.__index(req, 'path') end)", "mocks.lua:3: calls a function the check cannot see"),
        // a dispatch table with one function that counts
        ("local n = 0\nlocal ops = { a = function() return 1 end, b = function() n = n + 1; return n end }\nmock.get('/o/:op', function(req) return { v = ops[req.params.op]() } end)", "mocks.lua:2: assigns the variable 'n'"),
        // pairs over a load-time table with string keys: its order is the VM's
        ("local users = { ann = 1, bob = 2 }\nmock.get('/u', function(req) local out = {}\nfor k in pairs(users) do out[#out + 1] = k end\nreturn out end)", "mocks.lua:3: iterates a table with pairs or next"),
        // require keeps its modules per VM
        ("mock.get('/r', function() local m = require('x'); return {} end)", "mocks.lua:1: calls require while answering"),
        // a predicate that counts
        ("local n = 0\nmock.route { method = 'GET', path = '/w', when = function() n = n + 1; return n > 1 end, respond = 'ok' }", "mocks.lua:2: assigns the variable 'n'"),
        // a closure that puts a load-time table in its handler's local, which the handler then changes
        ("local shared = { n = 0 }\nmock.get('/x', function(req)\n  local t = {}\n  local function pick() t = shared end\n  pick()\n  t.n = 1\n  return {}\nend)", "mocks.lua:6: assigns field 'n' of a table made at load"),
        // the key next() returns is the VM's: using it is refused, however it is used
        ("mock.get('/k', function(req) return { first = next(req.query) } end)", "mocks.lua:1: uses the key next() returned"),
        ("mock.get('/k', function(req)\n  local k = next(req.query)\n  if k == 'a' then return 'a' end\n  return 'b' end)", "mocks.lua:3: uses the key next() returned"),
        ("mock.get('/k', function(req)\n  local k = next(req.query) or 'none'\n  return k end)", "mocks.lua:3: uses the key next() returned"),
        ("mock.get('/k', function(req)\n  local k = next(req.query)\n  return 'key ' .. (k and 'x' or 'y') .. k end)", "mocks.lua:3: uses the key next() returned"),
        ("mock.get('/k', function(req) local k, v = next(req.query); return { v = v } end)", "mocks.lua:1: iterates a table with pairs or next"),
        // library functions the script replaced or added are checked as its own code
        ("local n = 0\nstring.bump = function(s) n = n + 1; return s end\nmock.get('/b', function(req) return req.path:bump() end)", "mocks.lua:2: assigns the variable 'n'"),
        ("local n = 0\ntostring = function(v) n = n + 1; return 'x' end\nmock.get('/t', function(req) return tostring(req.path) end)", "mocks.lua:2: assigns the variable 'n'"),
        ("tostring = next\nmock.get('/t', function(req) return tostring(req.query) end)", "mocks.lua:2: iterates a table with pairs or next"),
        // metamethods of a load-time metatable run per request
        ("local n = 0\nlocal V = {}\nV.__add = function(a, b) n = n + 1; return n end\nmock.get('/v', function() local v = setmetatable({}, V); return { s = v + 1 } end)", "mocks.lua:3: assigns the variable 'n'"),
        // marking a load-time table changes what other handlers' answers show
        ("local items = {}\nmock.get('/a', function() return { items = mock.json.array(items) } end)", "mocks.lua:2: mock.json.array marks a table made at load"),
        // coroutines live in a VM
        ("local co = coroutine.wrap(function() coroutine.yield(1) end)\nmock.get('/co', function() return { v = co() } end)", "mocks.lua:2: calls"),
    ])
    func notShareable(script: String, reason: String) throws {
        let v = try verdict(script)
        #expect(!v.shareable)
        #expect(v.reason?.hasPrefix(reason) == true, "\(v.reason ?? "nil")")
    }

    @Test("value responders and rules without Lua code are shareable; the examples are")
    func examples() throws {
        #expect(try verdict(#"mock.get("/a", { ok = true }); mock.get("/b", mock.text("x"))"#).shareable)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for name in ["examples/mocks.lua", "examples/bench/mocks.lua"] {
            let g = try ScriptGeneration.load(file: root.appendingPathComponent(name).path, engine: Engine())
            let v = g.checkSharing()
            #expect(v.shareable, "\(name): \(v.reason ?? "")")
        }
    }

    @Test("finalizers: load-time garbage is collected before the check; a live table with a Lua __gc is refused; library ones pass")
    func finalizers() throws {
        // Collected before the check in every VM alike: each VM's `n` is 1 by then.
        let garbage = try verdict("local n = 0\nsetmetatable({}, { __gc = function() n = n + 1 end })\nmock.get('/n', function() return { n = n } end)")
        #expect(garbage.shareable, "\(garbage.reason ?? "")")
        let live = try verdict("local keep = setmetatable({}, { __gc = function() end })\nmock.get('/k', function() return { k = keep ~= nil } end)")
        #expect(live.reason?.hasPrefix("a table made at load has a __gc metamethod in Lua") == true, "\(live.reason ?? "nil")")
        // --unsafe: io's files have C finalizers; reading a file at request time is still refused.
        var options = ScriptOptions()
        options.unsafe = true
        let io = try ScriptGeneration.load(source: "local f = io.open('/dev/null')\nmock.get('/a', function() return 'x' end)", engine: Engine(), options: options)
        #expect(io.checkSharing().shareable, "\(io.checkSharing().reason ?? "")")
        let reads = try ScriptGeneration.load(source: "local f = io.open('/dev/null')\nmock.get('/a', function() return f:read('a') end)", engine: Engine(), options: options)
        #expect(reads.checkSharing().reason?.hasPrefix("mocks.lua:2: calls a function the check cannot see") == true, "\(reads.checkSharing().reason ?? "nil")")
    }

    @Test("automatic: as many VMs as allowed when shareable, one with the reason otherwise")
    func automatic() throws {
        let folder = try ScriptFolder([
            "shared.lua": #"mock.get("/n", function() return { n = mock.state:incr("n") } end)"#,
            "counting.lua": "local n = 0\nmock.get('/n', function() n = n + 1; return { n = n } end)",
            "random.lua": "local id = mock.uuid()\nmock.get('/id', function() return { id = id } end)",
        ])
        let engine = Engine()
        let shared = try engine.loadScript(file: folder.path("shared.lua"), vms: .automatic(max: 3))
        #expect(shared.vmCount == 3 && shared.sharing?.shareable == true)
        let results = LockedLines()
        DispatchQueue.concurrentPerform(iterations: 60) { _ in results.append(engine.send("GET", "/n").text) }
        #expect(Set(results.all).count == 60)   // one counter whichever VM answered

        let counting = try engine.loadScript(file: folder.path("counting.lua"), vms: .automatic(max: 3))
        #expect(counting.vmCount == 1 && counting.sharing?.reason?.hasPrefix("counting.lua:2: assigns the variable 'n'") == true)
        DispatchQueue.concurrentPerform(iterations: 30) { _ in _ = engine.send("GET", "/n") }
        #expect(engine.send("GET", "/n").text == #"{"n":31}"#)   // one VM counted every request

        // Each load makes its own id: VMs would answer differently, so one VM.
        let random = try engine.loadScript(file: folder.path("random.lua"), vms: .automatic(max: 2))
        #expect(random.vmCount == 1 && random.sharing?.reason?.contains("each load of the script makes different values") == true)
        #expect(try engine.loadScript(file: folder.path("shared.lua"), vms: .exactly(2)).vmCount == 2)
    }

    @Test("a reload decides again, and says so when the answer changes")
    func reload() throws {
        let folder = try ScriptFolder(["mocks.lua": #"mock.get("/n", function() return { n = mock.state:incr("n") } end)"#])
        let host = try ScriptHost(file: folder.path("mocks.lua"), engine: Engine(), vms: .automatic(max: 2))
        #expect(host.status.vms == 2 && host.status.oneVMReason == nil)
        try folder.write("mocks.lua", "local n = 0\nmock.get('/n', function() n = n + 1; return { n = n } end)")
        let counting = host.reload()
        #expect(counting.ok && counting.message.hasSuffix("; now one Lua VM, because mocks.lua:2: assigns the variable 'n', kept from the script's load; each VM has its own copy (keep it in mock.state)"), "\(counting.message)")
        #expect(host.status.vms == 1 && host.status.json["one_vm_reason"] != nil)
        #expect(!host.reload().message.contains("now"))   // the same answer again: nothing to say
        try folder.write("mocks.lua", #"mock.get("/n", function() return { n = 1 } end)"#)
        #expect(host.reload().message.hasSuffix("; now 2 Lua VMs") && host.status.vms == 2)
    }
}

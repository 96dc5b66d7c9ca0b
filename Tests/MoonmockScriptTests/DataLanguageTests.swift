import Foundation
import LuaBridge
import MoonmockCore
import Testing
@testable import MoonmockScript

/// `mock.fake`, `mock.schema`, `mock.resource` and `mock.chaos` as a script author meets them:
/// errors with `file:line`, several VMs answering alike, state kept in `mock.state`.
@Suite("mocks.lua: fake data, schemas, resources and chaos")
struct DataLanguageTests {
    @Test("mistakes name the script's line and what to do", arguments: [
        ("mock.get('/a', function() return { mock.fake.nmae() } end)", "GET", "/a", "mocks.lua:1: mock.fake.nmae is not a function; did you mean mock.fake.name?"),
        ("mock.get('/a', function()\n  return { n = mock.fake.int{ min = 5, max = 1 } }\nend)", "GET", "/a", "mocks.lua:2: mock.fake.int: fake.int: min 5 is more than max 1"),
        ("mock.get('/a', function() return { mock.fake.name('de') } end)", "GET", "/a", "mocks.lua:1: mock.fake.name: options must be a table such as { min = 1 }, got string \"de\""),
        ("mock.get('/a', function() return { mock.fake.name{ locale = 'pt' } } end)", "GET", "/a", "mocks.lua:1: mock.fake.name: no locale 'pt' (en, de, fr, es, ja)"),
        ("mock.get('/a', function() return { mock.fake.seeded('k').nmae() } end)", "GET", "/a", "mocks.lua:1: mock.fake.nmae does not exist; did you mean name?"),
        ("mock.get('/a', function() return { mock.schema(42) } end)", "GET", "/a", "mocks.lua:1: mock.schema: the schema must be a table or a file name, got number"),
        ("mock.get('/a', function() return { mock.schema('missing.json') } end)", "GET", "/a", "mocks.lua:1: mock.schema: 'missing.json' not found in the script's folder"),
    ])
    func handlerErrors(_ script: String, _ method: String, _ path: String, _ expected: String) throws {
        let (engine, _folder) = try makeEngine(script)
        _ = _folder
        let answer = engine.send(method, path)
        #expect(answer.response.status == 500)
        #expect(answer.text.contains(expected), "got: \(answer.text)")
    }

    @Test("load errors name the line", arguments: [
        ("mock.resource('/pets/:id')", "mocks.lua:1: mock.resource: the path must start with / and have no parameters, such as '/pets', got '/pets/:id'"),
        ("mock.resource('/pets', { id = 'serial' })", "mocks.lua:1: mock.resource: id must be \"int\", \"uuid\" or a function(item, req), got string \"serial\""),
        ("mock.resource('/pets', { seed = { count = 'many', item = function() return {} end } })", "mocks.lua:1: mock.resource: seed.count must be an integer from 0, got string \"many\""),
        ("mock.resource('/pets', { sead = {} })", "mocks.lua:1: mock.resource: unknown option 'sead'"),
        ("mock.resource('/pets')\nmock.resource('/pets/')", "mocks.lua:2: mock.resource: '/pets' is declared twice"),
        ("mock.resource('/pets', { seed = 'pets.json' })", "mocks.lua:1: mock.resource: seed file 'pets.json' must hold a JSON array of objects"),
        ("mock.chaos{ eror_rate = 0.1 }", "mocks.lua:1: mock.chaos: unknown setting 'eror_rate'; did you mean 'error_rate'?"),
        ("mock.chaos{ error_rate = 10 }", "mocks.lua:1: mock.chaos: error_rate is a fraction from 0 to 1 (0.1 is 10 %), got 10"),
        ("mock.chaos{ path = '/a' }", "mocks.lua:1: mock.chaos: nothing to do: give error_rate, latency, fault or rate_limit"),
        ("mock.chaos{ fault = 'boom' }", "mocks.lua:1: mock.chaos: fault must be one of connection_reset, empty_response, malformed_chunk, timeout, dribble, got \"boom\""),
        ("mock.chaos{ latency = { min = 10 } }", "mocks.lua:1: mock.chaos: latency needs min and max"),
        ("mock.chaos_profile('x', { error_rate = 1 })\nmock.chaos_profile('x', { error_rate = 1 })", "mocks.lua:2: mock.chaos_profile: profile 'x' is declared twice"),
        ("mock.get('/a', 'ok', { chaos = { path = '/a', error_rate = 1 } })", "mocks.lua:1: mock.get: a rule's chaos has no path (it is the rule's)"),
        ("mock.get('/a', mock.template('{{fake.nmae}}'))", "mocks.lua:1: mock.template: template: {{fake.nmae}}: fake.nmae does not exist; did you mean fake.name?"),
    ])
    func loadErrors(_ script: String, _ expected: String) throws {
        let error = try #require(try loadError(script, files: ["pets.json": #"{"not": "a list"}"#]))
        #expect(error.message.hasPrefix(expected), "got: \(error.message)")
    }

    @Test("fake data, schemas and resources keep a script shareable by several VMs, which answer alike")
    func sharedByVMs() throws {
        let folder = try ScriptFolder(["mocks.lua": #"""
            mock.get("/u/:id", function(req)
              local f = mock.fake.seeded(req.params.id)
              return { name = f.name(), pick = f.pick({ "a", "b", "c" }), schema = mock.schema({ type = "object", required = { "email" },
                       properties = { email = { type = "string", format = "email" } } }, { seed_key = req.params.id }) }
            end)
            mock.resource("/items", { seed = { count = 40, item = function(i) return { title = mock.fake.sentence{ words = 3 }, n = i } end },
                                      on_create = function(item) item.made = true end })
            """#])
        let engine = Engine(environment: pinned)
        let g = try engine.loadScript(file: folder.path("mocks.lua"), vms: .automatic(max: 3))
        #expect(g.vmCount == 3, "\(g.sharing?.reason ?? "")")
        let users = LockedLines(), lists = LockedLines()
        DispatchQueue.concurrentPerform(iterations: 60) { i in
            users.append(engine.send("GET", "/u/\(i % 3)").text)
            lists.append(engine.send("GET", "/items?per_page=5&page=\(1 + i % 2)").text)
        }
        #expect(Set(users.all).count == 3)
        #expect(Set(lists.all).count == 2)
        #expect(engine.send("POST", "/items", body: #"{"title": "new"}"#).response.status == 201)
        // Every VM sees the new item at once (the version in mock.state moved).
        for _ in 0..<6 { #expect(engine.send("GET", "/items?n=0").text.contains(#""made":true"#) == false) }
        for _ in 0..<6 { #expect(engine.send("GET", "/items?title=new").text.contains(#""id":41"#)) }
        // Seed items are the same on every load: the seed stream is keyed by the item's number.
        let other = Engine(environment: pinned)
        try other.loadScript(file: folder.path("mocks.lua"))
        #expect(other.send("GET", "/items?per_page=3").text == engine.send("GET", "/items?per_page=3").text)
    }

    @Test("a resource's hooks and id function: a hook's response answers instead; reset brings the seed back")
    func hooks() throws {
        let (engine, folder) = try makeEngine(#"""
            mock.resource("/notes", {
              id = function(item) return "n-" .. item.title:lower() end,
              seed = { { title = "First" } },
              on_create = function(item, req)
                if item.title == "forbidden" then return mock.json({ error = "no" }, { status = 422 }) end
                item.by = req.headers["x-user"]
              end,
              on_update = function(item, old) item.revision = (old.revision or 0) + 1 end,
            })
            mock.post("/reset", function() mock.resource_reset("/notes"); return mock.status(204) end)
            """#)
        _ = folder
        #expect(engine.send("GET", "/notes/n-first").text == #"{"id":"n-first","title":"First"}"#)
        let made = engine.send("POST", "/notes", headers: ["X-User": "ana"], body: #"{"title": "Hello"}"#)
        #expect(made.response.status == 201 && made.response.headers["Location"] == "/notes/n-hello")
        #expect(made.text == #"{"by":"ana","id":"n-hello","title":"Hello"}"#)
        #expect(engine.send("POST", "/notes", body: #"{"title": "Hello"}"#).response.status == 409)
        #expect(engine.send("POST", "/notes", body: #"{"title": "forbidden"}"#).response.status == 422)
        #expect(engine.send("PATCH", "/notes/n-hello", body: #"{"id": "other", "done": true}"#).text == #"{"by":"ana","done":true,"id":"n-hello","revision":1,"title":"Hello"}"#)
        #expect(engine.send("POST", "/reset").response.status == 204)
        #expect(engine.send("GET", "/notes").text == #"[{"id":"n-first","title":"First"}]"#)
        #expect(engine.resources.declarations == [.init(path: "/notes", idField: "id")])
        let listed = try engine.resources.collections(in: engine.state)
        #expect(listed.first?["count"] == .integer(1))
    }
}

import Foundation
import LuaBridge
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("mocks.lua: response builders")
struct BuilderTests {
    @Test("a table is JSON 200, a string is text/plain 200")
    func plainValues() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/t", { b = 2, a = { 1, 2, 3 } })
        mock.get("/s", "hello")
        mock.get("/f", function() return "from fn" end)
        """)
        let t = engine.send("GET", "/t")
        #expect(t.status == 200 && t.contentType == "application/json; charset=utf-8" && t.text == #"{"a":[1,2,3],"b":2}"#)
        let s = engine.send("GET", "/s")
        #expect(s.status == 200 && s.contentType == "text/plain; charset=utf-8" && s.text == "hello")
        #expect(engine.send("GET", "/f").text == "from fn")
    }

    @Test("mock.json, mock.text and mock.status with status and headers")
    func jsonTextStatus() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/j", mock.json({ error = "nope" }, { status = 422, headers = { ["X-Trace"] = "t1" } }))
        mock.get("/t", mock.text("teapot", { status = 418 }))
        mock.get("/s", mock.status(204))
        mock.get("/sb", mock.status(503, { retry = true }))
        """)
        let j = engine.send("GET", "/j")
        #expect(j.status == 422 && j.text == #"{"error":"nope"}"# && j.response.headers["x-trace"] == "t1")
        #expect(engine.send("GET", "/t").status == 418)
        let s = engine.send("GET", "/s")
        #expect(s.status == 204 && s.response.body.isEmpty && s.contentType == nil)
        #expect(engine.send("GET", "/sb").json == .object(["retry": .bool(true)]))
    }

    @Test("mock.file serves bytes with a content type from the extension")
    func file() throws {
        let (engine, folder) = try makeEngine("""
        mock.get("/users", mock.file("fixtures/users.json"))
        mock.get("/page", mock.file("fixtures/index.html", { status = 202 }))
        """, files: ["fixtures/users.json": #"[{"id":1}]"#, "fixtures/index.html": "<h1>hi</h1>"])
        let users = engine.send("GET", "/users")
        #expect(users.text == #"[{"id":1}]"# && users.contentType == "application/json")
        let page = engine.send("GET", "/page")
        #expect(page.status == 202 && page.contentType == "text/html; charset=utf-8")
        _ = folder
    }

    @Test("mock.template fills request values, uuid, now and state; escapes for JSON")
    func template() throws {
        let (engine, _) = try makeEngine("""
        mock.state:set("plan", "pro")
        mock.post("/orders/:id", mock.template('{"id":"{{uuid}}","order":"{{req.params.id}}","sku":"{{req.json.sku}}","at":"{{now}}","plan":"{{state.plan}}"}', { status = 201 }))
        mock.get("/hello", mock.template("Hello {{req.query.name}}!"))
        mock.get("/tf", mock.template("templates/greeting.txt"))
        """, files: ["templates/greeting.txt": "Hi {{req.headers.x-user}}"])
        let ex = engine.send("POST", "/orders/9", body: #"{"sku":"A\"1"}"#)
        #expect(ex.status == 201)
        #expect(ex.json == .object([
            "id": .string("11111111-1111-4111-8111-111111111111"), "order": .string("9"), "sku": .string("A\"1"),
            "at": .string("2023-11-14T22:13:20.000Z"), "plan": .string("pro"),
        ]))
        let hello = engine.send("GET", "/hello?name=Ada")
        #expect(hello.text == "Hello Ada!" && hello.contentType == "text/plain; charset=utf-8")
        #expect(engine.send("GET", "/tf", headers: ["X-User": "Bo"]).text == "Hi Bo")
    }

    @Test("mock.redirect answers a plain 3xx with Location")
    func redirect() throws {
        let (engine, _) = try makeEngine(#"mock.get("/old", mock.redirect("/new", 301)) mock.get("/tmp", mock.redirect("https://x.test/"))"#)
        let r = engine.send("GET", "/old")
        #expect(r.status == 301 && r.response.headers["location"] == "/new")
        #expect(engine.send("GET", "/tmp").status == 302)
    }

    @Test("mock.fault produces each fault kind")
    func faults() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/reset", mock.fault("connection_reset"))
        mock.get("/empty", mock.fault("empty_response"))
        mock.get("/chunk", mock.fault("malformed_chunk"))
        mock.get("/hang", mock.fault("timeout"))
        mock.get("/slow", mock.text("abcdef", { fault = "dribble", bytes_per_second = 2 }))
        mock.get("/slow2", mock.fault { fault = "dribble", bytes_per_second = 5 })
        """)
        #expect(engine.send("GET", "/reset").response.fault == .connectionReset)
        #expect(engine.send("GET", "/empty").response.fault == .emptyResponse)
        #expect(engine.send("GET", "/chunk").response.fault == .malformedChunk)
        #expect(engine.send("GET", "/hang").response.fault == .timeout)
        let slow = engine.send("GET", "/slow")
        #expect(slow.response.fault == .dribble(bytesPerSecond: 2) && slow.text == "abcdef")
        #expect(engine.send("GET", "/slow2").response.fault == .dribble(bytesPerSecond: 5))
        #expect(engine.journal.entries().first?.fault == .connectionReset)
    }

    @Test("mock.sequence answers one item per hit, then repeats the last")
    func sequence() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/seq", mock.sequence { mock.status(503), mock.status(503), { ok = true } })
        """)
        let statuses: [Int] = (1...4).map { _ in engine.send("GET", "/seq").status }
        #expect(statuses == [503, 503, 200, 200])
    }

    @Test("delays: fixed, uniform and log-normal specs reach the exchange")
    func delays() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/fixed", mock.json({}, { delay = 1500 }))
        mock.get("/uniform", mock.json({}, { delay = { min = 10, max = 20 } }))
        mock.get("/lognormal", mock.json({}, { delay = { median = 100, sigma = 0.3 } }))
        """)
        #expect(engine.send("GET", "/fixed").delayMilliseconds == 1500)
        let u = engine.send("GET", "/uniform").delayMilliseconds
        #expect(u >= 10 && u <= 20)
        #expect(engine.send("GET", "/lognormal").delayMilliseconds > 0)
    }

    @Test("a stateful flaky endpoint fails twice, then succeeds")
    func flaky() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/flaky", function()
          local n = mock.state:incr("flaky", 1, 0)
          if n <= 2 then return mock.json({ attempt = n }, { status = 503 }) end
          return { ok = true, attempt = n }
        end)
        """)
        #expect((1...4).map { _ in engine.send("GET", "/flaky").status } == [503, 503, 200, 200])
        #expect(try engine.state.get("flaky") == .integer(4))
    }

    @Test("mock.proxy is a response value naming its upstream; a bad base URL is a load error at its line")
    func proxyValue() throws {
        let (engine, _) = try makeEngine(#"mock.get("/p", mock.proxy("http://upstream/v2/", { timeout = 1500, insecure = true, headers = { ["X-A"] = "1", ["X-B"] = false } }))"#)
        let proxy = engine.send("GET", "/p?x=1").response.proxy
        #expect(proxy?.base == "http://upstream/v2" && proxy?.timeoutMilliseconds == 1500 && proxy?.insecure == true)
        #expect(proxy?.url(for: MockRequest(method: "GET", url: "http://localhost/p?x=1")) == "http://upstream/v2/p?x=1")
        #expect(proxy?.headers.map(\.name) == ["X-A", "X-B"] && proxy?.headers.map(\.value) == ["1", ""])
        let error = try loadError("mock.get(\"/p\",\n  mock.proxy(\"upstream\"))")
        #expect(error?.message == "mocks.lua:2: mock.proxy: the base URL must start with http:// or https:// and name a host, got 'upstream'")
    }
}

import Foundation
import LuaBridge
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("mocks.lua: rules and matching")
struct LanguageTests {
    @Test("every verb registers a rule for its method; mock.any takes all")
    func verbs() throws {
        let (engine, _) = try makeEngine("""
        for _, m in ipairs { "get", "post", "put", "patch", "delete", "head", "options" } do
          mock[m]("/v", m)
        end
        mock.any("/any", "any")
        """)
        for m in ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] {
            #expect(engine.send(m, "/v").text == m.lowercased())
            #expect(engine.send(m, "/any").text == "any")
        }
        // /v has a rule for each verb but TRACE: 405, Allow listing them.
        #expect(engine.send("TRACE", "/v").status == 405)
    }

    @Test("path parameters in :name, {name} and *rest forms; full URLs pin the host")
    func patterns() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/users/:id", function(req) return { id = req.params.id } end)
        mock.get("/orgs/{org}/repos/{repo}", function(req) return req.params.org .. "/" .. req.params.repo end)
        mock.get("/files/*rest", function(req) return req.params.rest end)
        mock.get("https://api.example.com/pinned", "pinned")
        mock.get("/pinned", "any host")
        mock.get("/wild*", "wild")
        mock.get("/deep/:a/:b/:c/:d/:e/*f", function(req)
          local p = req.params
          return p.a .. p.b .. p.c .. p.d .. p.e .. "|" .. p.f
        end)
        mock.get("/twice/:x/:x", function(req) return req.params.x end)
        mock.get("/none", function(req)
          local p = req.params
          p.added = "kept"
          return type(p) .. " " .. tostring(next(req.params)) .. " " .. req.params.added
        end)
        """)
        #expect(engine.send("GET", "/users/42").json == .object(["id": .string("42")]))
        // More captures than are kept inline, and a name used twice (the later one wins).
        #expect(engine.send("GET", "/deep/1/2/3/4/5/six/seven").text == "12345|six/seven")
        #expect(engine.send("GET", "/twice/first/second").text == "second")
        // A route without captures still has a params table (empty), and it is the same table each time it is read.
        #expect(engine.send("GET", "/none").text == "table added kept")
        #expect(engine.send("GET", "/orgs/apple/repos/swift").text == "apple/swift")
        #expect(engine.send("GET", "/files/a/b/c.json").text == "a/b/c.json")
        #expect(engine.send("GET", "https://api.example.com/pinned").text == "pinned")
        #expect(engine.send("GET", "http://api.example.com/pinned").text == "any host")
        #expect(engine.send("GET", "https://other.example.com/pinned").text == "any host")
    }

    @Test("first match wins, a handler returning nil falls through")
    func firstMatch() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/x", function(req) if req.query.v == "1" then return "one" end end)
        mock.get("/x", "fallback")
        mock.get("/x", "never")
        """)
        #expect(engine.send("GET", "/x?v=1").text == "one")
        #expect(engine.send("GET", "/x").text == "fallback")
    }

    @Test("GraphQL rules match operationName in a single or batched body")
    func graphql() throws {
        let (engine, _) = try makeEngine("""
        mock.graphql("GetUser", function(req) return { data = { user = { id = req.json.variables.id } } } end)
        mock.graphql("GetViewer", mock.json({ data = { viewer = "me" } }), { path = "/api/graphql" })
        mock.graphql("Ping", mock.json({ data = { ping = "pong" } }, { delay = 30 }))
        """)
        let ok = engine.send("POST", "/graphql", body: #"{"operationName":"GetUser","variables":{"id":7}}"#)
        #expect(ok.json == .object(["data": .object(["user": .object(["id": .integer(7)])])]))
        let batch = engine.send("POST", "/graphql", body: #"[{"operationName":"Ping"},{"operationName":"GetUser","variables":{"id":1}}]"#)
        #expect(batch.status == 200)
        #expect(batch.text == #"[{"data":{"ping":"pong"}},{"data":{"user":{"id":1}}}]"#)
        #expect(batch.delayMilliseconds == 30)
        #expect(engine.journal.count(rule: "graphql Ping") == 1)
        #expect(engine.journal.count(rule: "graphql GetUser") == 2)
        let partial = engine.send("POST", "/graphql", body: #"[{"operationName":"Ping"},{"operationName":"Unknown"}]"#)
        #expect(partial.status == 404)
        #expect(partial.nearMisses.first?.mismatches == ["json.operationName: expected GetUser, got a batch [Ping, Unknown]"])
        #expect(engine.send("POST", "/api/graphql", body: #"{"operationName":"GetViewer"}"#).ruleID == "graphql GetViewer")
        let miss = engine.send("POST", "/graphql", body: #"{"operationName":"GetViewer"}"#)
        #expect(miss.status == 404)
        #expect(miss.nearMisses.first?.summary == "method ok; path ok; json.operationName: expected GetUser, got GetViewer")
        // A body that names the operation but is not JSON (cut short) names none: no handler
        // runs on a `req.json` that is nil, and the near miss says where the JSON breaks.
        let cut = engine.send("POST", "/graphql", body: #"{"operationName":"GetUser","variables":{"id":7"#)
        #expect(cut.status == 404)
        #expect(cut.nearMisses.first?.mismatches == ["json: body is not JSON (invalid JSON at byte 46: unexpected end of input)"])
        #expect(engine.send("POST", "/graphql", body: "").nearMisses.first?.mismatches == ["json: body is empty"])
    }

    @Test("mock.route ANDs query, headers, json, body and when")
    func route() throws {
        let (engine, _) = try makeEngine("""
        mock.route {
          method = "PUT", path = "/carts/:id",
          headers = { ["X-Tenant"] = "acme" },
          query = { dry_run = mock.present, debug = mock.absent, v = mock.match("^%d+$") },
          json = { currency = "EUR", meta = { channel = "web" } },
          when = function(req) return req.json.total > 1000 end,
          respond = mock.json({ error = "payment required" }, { status = 402 }),
        }
        mock.route { method = "POST", path = "/echo", body = mock.match("^hello"), respond = "body ok" }
        mock.route { host = "api.test", respond = "host ok", path = "/h" }
        """)
        let body = #"{"currency":"EUR","total":2000,"meta":{"channel":"web","x":1}}"#
        let headers: HTTPHeaders = ["x-tenant": "acme"]
        #expect(engine.send("PUT", "/carts/1?dry_run&v=12", headers: headers, body: body).status == 402)
        #expect(engine.send("PUT", "/carts/1?dry_run&v=12", headers: ["X-TENANT": "acme"], body: body).status == 402)
        #expect(engine.send("PUT", "/carts/1?v=12", headers: headers, body: body).status == 404)
        #expect(engine.send("PUT", "/carts/1?dry_run&v=12&debug=1", headers: headers, body: body).status == 404)
        #expect(engine.send("PUT", "/carts/1?dry_run&v=1x", headers: headers, body: body).status == 404)
        #expect(engine.send("PUT", "/carts/1?dry_run&v=12", headers: headers, body: body.replacingOccurrences(of: "2000", with: "20")).status == 404)
        let miss = engine.send("PUT", "/carts/1?dry_run&v=12", headers: headers, body: body.replacingOccurrences(of: "EUR", with: "USD"))
        #expect(miss.nearMisses.first?.mismatches == ["json.currency: expected EUR, got USD"])
        let whenMiss = engine.send("PUT", "/carts/1?dry_run&v=12", headers: headers, body: body.replacingOccurrences(of: "2000", with: "20"))
        #expect(whenMiss.nearMisses.first?.mismatches == ["when(req) returned false"])
        #expect(engine.send("POST", "/echo", body: "hello world").text == "body ok")
        #expect(engine.send("POST", "/echo", body: "bye").status == 404)
        #expect(engine.send("GET", "http://api.test/h").text == "host ok")
        #expect(engine.send("GET", "http://other.test/h").status == 404)
    }

    @Test("times retires a rule; name sets its id; priority reorders")
    func ruleOptions() throws {
        let (engine, _) = try makeEngine("""
        mock.get("/reset", mock.fault("connection_reset"), { times = 1, name = "reset once" })
        mock.get("/reset", "recovered")
        mock.route { path = "/p", respond = "low" }
        mock.route { path = "/p", respond = "high", priority = 10 }
        """)
        let first = engine.send("GET", "/reset")
        #expect(first.response.fault == .connectionReset)
        #expect(first.ruleID == "reset once")
        #expect(engine.send("GET", "/reset").text == "recovered")
        #expect(engine.send("GET", "/p").text == "high")
    }

    @Test("rule opts set status, headers and delay on handler results")
    func opts() throws {
        let (engine, _) = try makeEngine("""
        mock.post("/o", function() return { ok = true } end, { status = 201, headers = { ["X-Mock"] = "yes" }, delay = 25 })
        mock.post("/explicit", function() return mock.json({}, { status = 409 }) end, { status = 201 })
        """)
        let ex = engine.send("POST", "/o")
        #expect(ex.status == 201)
        #expect(ex.response.headers["x-mock"] == "yes")
        #expect(ex.delayMilliseconds == 25)
        #expect(engine.send("POST", "/explicit").status == 409)
    }

    @Test("the request table carries every field of DESIGN §2.3")
    func requestTable() throws {
        let (engine, _) = try makeEngine("""
        mock.post("/r/:id", function(req)
          return {
            method = req.method, url = req.url, scheme = req.scheme, host = req.host, port = req.port,
            path = req.path, id = req.params.id, q = req.query.tag, all = req.query_all.tag,
            ua = req.headers["user-agent"], cookie = req.cookies.session, body = req.body,
            json_name = req.json.name, rid = req.id,
          }
        end)
        mock.post("/nojson", function(req) return { json_is_nil = req.json == nil } end)
        """)
        let ex = engine.send("POST", "https://api.test:8443/r/5?tag=a&tag=b", headers: ["User-Agent": "t", "Cookie": "session=s1"],
                             body: #"{"name":"n"}"#)
        let j = try #require(ex.json)
        #expect(j["method"] == .string("POST"))
        #expect(j["url"] == .string("https://api.test:8443/r/5?tag=a&tag=b"))
        #expect(j["scheme"] == .string("https"))
        #expect(j["host"] == .string("api.test"))
        #expect(j["port"] == .integer(8443))
        #expect(j["path"] == .string("/r/5"))
        #expect(j["id"] == .string("5"))
        #expect(j["q"] == .string("a"))
        #expect(j["all"] == .array([.string("a"), .string("b")]))
        #expect(j["ua"] == .string("t"))
        #expect(j["cookie"] == .string("s1"))
        #expect(j["body"] == .string(#"{"name":"n"}"#))
        #expect(j["json_name"] == .string("n"))
        #expect(j["rid"] == .integer(Int64(ex.request.id)))
        #expect(engine.send("POST", "/nojson", body: "not json").json == .object(["json_is_nil": .bool(true)]))
    }

    @Test("a binary body reaches Lua byte for byte")
    func binaryBody() throws {
        let (engine, _) = try makeEngine("""
        mock.post("/bin", function(req) return { len = #req.body, third = req.body:byte(3), last = req.body:byte(-1) } end)
        """)
        let ex = engine.handle(MockRequest(method: "POST", url: "http://h/bin", body: [1, 2, 0, 255, 0, 7]))
        #expect(ex.json == .object(["len": .integer(6), "third": .integer(0), "last": .integer(7)]))
    }
}

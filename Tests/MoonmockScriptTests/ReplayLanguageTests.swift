import Foundation
import MoonmockCore
import MoonmockScript
import Testing

/// The rule language a faithful recording is written in: exact queries, repeated and templated
/// header fields, conditional answers, JSON as written, GraphQL variables.
@Suite("mocks.lua: what recordings are written in")
struct ReplayLanguageTests {
    @Test("exact_query: the declared parameters and no other, each once; a list names every value in order")
    func exactQuery() throws {
        let (engine, _) = try makeEngine(#"""
        mock.get("/items", "page 2", { query = { page = "2" }, exact_query = true })
        mock.get("/items", "all", { exact_query = true })
        mock.route { path = "/tags", query = { tag = { "a", "b" }, debug = mock.absent }, exact_query = true, respond = "a then b" }
        mock.get("/loose", "any query", { query = { page = "2" } })
        """#)
        #expect(engine.send("GET", "/items?page=2").response.body == Array("page 2".utf8))
        #expect(engine.send("GET", "/items").response.body == Array("all".utf8))
        #expect(engine.send("GET", "/items?page=2&extra=1").response.status == 404)
        #expect(engine.send("GET", "/items?page=2&page=2").response.status == 404)
        #expect(engine.send("GET", "/tags?tag=a&tag=b").response.body == Array("a then b".utf8))
        #expect(engine.send("GET", "/tags?tag=b&tag=a").response.status == 404)
        #expect(engine.send("GET", "/loose?page=2&extra=1").response.body == Array("any query".utf8))
        let miss = engine.send("GET", "/items?page=3")
        #expect(miss.response.status == 404 && String(decoding: miss.response.body, as: UTF8.self).contains("query"))
    }

    @Test("a header given as a list is repeated; one given as mock.template is built from the request; {{req.origin}}")
    func headers() throws {
        let (engine, _) = try makeEngine(#"""
        mock.get("/login", mock.text("in", { headers = { ["Set-Cookie"] = { "a=1; Path=/", "b=2; Path=/" },
                                                       Location = mock.template("{{req.origin}}/home?from={{req.path}}") } }))
        """#)
        let r = engine.send("GET", "http://127.0.0.1:9000/login").response
        #expect(r.headers.values("Set-Cookie") == ["a=1; Path=/", "b=2; Path=/"])
        #expect(r.headers["location"] == "http://127.0.0.1:9000/home?from=/login")
        #expect(try loadError(#"mock.get("/x", mock.text("x", { headers = { A = 1.5 } }))"#) == nil)   // numbers are strings to Lua
        let bad = try loadError(#"mock.get("/x", mock.text("x", { headers = { A = { 1, {} } } }))"#)
        #expect(bad?.message.contains("headers.A must be a string, a list of strings or a mock.template(...)") == true, "\(String(describing: bad))")
    }

    @Test("conditional = true: 304 with the validators when If-None-Match or If-Modified-Since matches, else the answer")
    func conditional() throws {
        let (engine, _) = try makeEngine(#"""
        mock.get("/a", mock.json({ v = 1 }, { headers = { ETag = 'W/"v1"', ["Last-Modified"] = "Sun, 06 Nov 1994 08:49:37 GMT" }, conditional = true }))
        mock.get("/b", mock.json({ v = 1 }, { headers = { ETag = '"v1"' } }))
        """#)
        func get(_ path: String, _ name: String, _ value: String) -> MockResponse {
            engine.send("GET", path, headers: HTTPHeaders([(name, value)])).response
        }
        let hit = get("/a", "If-None-Match", #""v0", "v1""#)
        #expect(hit.status == 304 && hit.body.isEmpty && hit.headers["etag"] == #"W/"v1""# && hit.headers["content-type"] == nil)
        #expect(get("/a", "If-None-Match", #""v2""#).status == 200)
        #expect(get("/a", "If-None-Match", "*").status == 304)
        #expect(get("/a", "If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT").status == 304)
        #expect(get("/a", "If-Modified-Since", "Sat, 05 Nov 1994 08:49:37 GMT").status == 200)
        #expect(engine.send("POST", "/a", headers: HTTPHeaders([("If-None-Match", #""v1""#)])).response.status == 405)
        #expect(get("/b", "If-None-Match", #""v1""#).status == 200)   // not conditional: the answer, always
        #expect(HTTPDateFormat.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777 && HTTPDateFormat.parse("yesterday") == nil)
    }

    @Test("mock.json.raw answers the text as written; text that is not JSON is a load error at its line")
    func jsonRaw() throws {
        let (engine, _) = try makeEngine(#"mock.get("/a", mock.json.raw('{"z": 1, "a": [2, 3.50]}', { status = 201 }))"#)
        let r = engine.send("GET", "/a").response
        #expect(r.status == 201 && r.body == Array(#"{"z": 1, "a": [2, 3.50]}"#.utf8) && r.headers["content-type"] == "application/json; charset=utf-8")
        let bad = try loadError("\n" + #"mock.get("/a", mock.json.raw('{"z": }'))"#)
        #expect(bad?.message.hasPrefix("mocks.lua:2: mock.json.raw: not JSON") == true, "\(String(describing: bad))")
    }

    @Test("GraphQL variables pick the rule; none given matches an operation without variables")
    func variables() throws {
        let (engine, _) = try makeEngine(#"""
        mock.graphql("GetUser", { data = "seven" }, { variables = { id = "7" } })
        mock.graphql("GetUser", { data = "none" }, { variables = {} })
        """#)
        func ask(_ variables: String) -> String {
            String(decoding: engine.send("POST", "/graphql", body: #"{"operationName":"GetUser","query":"q"\#(variables)}"#).response.body, as: UTF8.self)
        }
        #expect(ask(#","variables":{"id":"7"}"#) == #"{"data":"seven"}"#)
        #expect(ask("") == #"{"data":"none"}"#)
        #expect(ask(#","variables":{"id":"8"}"#).contains("variables: expected"))
    }
}

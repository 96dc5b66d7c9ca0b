import Testing
@testable import MoonmockCore

func request(_ method: String, _ url: String, headers: HTTPHeaders = HTTPHeaders(), body: String = "") -> MockRequest {
    MockRequest(method: method, url: url, headers: headers, body: Array(body.utf8))
}

func rule(_ method: String?, _ pattern: String, id: String? = nil, times: Int? = nil, priority: Int = 0,
          predicates: [Predicate] = [], _ answer: @escaping @Sendable (RequestContext) -> MockResponse?) throws -> Rule {
    try Rule(id: id, method: method, pattern: pattern, predicates: predicates, times: times, priority: priority, responder: answer)
}

@Suite("Routing")
struct RoutingTests {
    @Test("patterns capture parameters in all three spellings")
    func patterns() throws {
        #expect(try RoutePattern("/users/:id").match(request("GET", "http://h/users/7")) == ["id": "7"])
        #expect(try RoutePattern("/users/{id}/posts/{post}").match(request("GET", "http://h/users/7/posts/x%20y")) == ["id": "7", "post": "x y"])
        #expect(try RoutePattern("/files/*rest").match(request("GET", "http://h/files/a/b/c.txt")) == ["rest": "a/b/c.txt"])
        #expect(try RoutePattern("/files/*").match(request("GET", "http://h/files")) == [:])
        #expect(try RoutePattern("/:a/:b/:c/:d/:e/:f").match(request("GET", "http://h/1/2/3/4/5/6"))
                == ["a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"])
        #expect(try RoutePattern("/users").match(request("GET", "http://h/users/")) == [:])
        #expect(try RoutePattern("/users/:id").match(request("GET", "http://h/users")) == nil)
        #expect(try RoutePattern("/users/:id").match(request("GET", "http://h/users/7/extra")) == nil)
    }

    @Test("a Swift responder reads the captures, by name or as a dictionary")
    func captures() throws {
        let engine = Engine()
        engine.setScriptRules(RuleSet([try rule("GET", "/users/:user/orders/{id}/*rest") { ctx in
            .text("\(ctx.captures["user"] ?? "-") \(ctx.captures["id"] ?? "-") \(ctx.captures.count) \(ctx.params.sorted { $0.key < $1.key })")
        }]))
        let text = String(decoding: engine.handle(request("GET", "http://h/users/ann/orders/42/a/b")).response.body, as: UTF8.self)
        #expect(text == #"ann 42 3 [(key: "id", value: "42"), (key: "rest", value: "a/b"), (key: "user", value: "ann")]"#)
    }

    @Test("a full URL pins scheme, host and port; a path matches any host")
    func origins() throws {
        let pinned = try RoutePattern("https://api.example.com/users/:id")
        #expect(pinned.match(request("GET", "https://api.example.com/users/1")) == ["id": "1"])
        #expect(pinned.match(request("GET", "https://API.example.com:443/users/1")) == ["id": "1"])
        #expect(pinned.match(request("GET", "http://api.example.com/users/1")) == nil)
        #expect(pinned.match(request("GET", "https://other.example.com/users/1")) == nil)
        let port = try RoutePattern("http://localhost:8080/x")
        #expect(port.match(request("GET", "http://localhost:8080/x")) != nil)
        #expect(port.match(request("GET", "http://localhost:9090/x")) == nil)
        #expect(try RoutePattern("/x").match(request("GET", "https://anything.test:1234/x")) != nil)
    }

    @Test("query strings in patterns are refused with advice")
    func queryInPattern() {
        let error = #expect(throws: RoutePattern.ParseError.self) { try RoutePattern("/search?q=1") }
        #expect(error?.description.contains("query =") == true)
    }

    @Test("first match wins, nil falls through, times retires a rule")
    func order() throws {
        let engine = Engine(environment: .fixed(now: 0))
        engine.setScriptRules(RuleSet([
            try rule("GET", "/a", id: "once", times: 1) { _ in .text("first") },
            try rule("GET", "/a", id: "maybe") { ctx in ctx.request.query("x") == nil ? nil : .text("x") },
            try rule("GET", "/:any", id: "param") { ctx in .text("param " + ctx.params["any"]!) },
        ]))
        #expect(engine.handle(request("GET", "http://h/a")).response.body == Array("first".utf8))
        #expect(engine.handle(request("GET", "http://h/a?x")).response.body == Array("x".utf8))
        #expect(engine.handle(request("GET", "http://h/a")).response.body == Array("param a".utf8))
        // A path with rules, not for this method: 405 with the methods that are.
        let post = engine.handle(request("POST", "http://h/a")).response
        #expect(post.status == 405)
        #expect(post.headers["Allow"] != nil)
        #expect(engine.scriptRuleSet.rules[0].hits == 1)
        #expect(engine.scriptRuleSet.rules[0].isRetired)
    }

    @Test("runtime rules come before script rules, newest first; priorities come before order")
    func precedence() throws {
        let engine = Engine(environment: .fixed(now: 0))
        engine.setScriptRules(RuleSet([
            try rule("GET", "/p", id: "script") { _ in .text("script") },
            try rule("GET", "/q", id: "low") { _ in .text("low") },
            try rule("GET", "/q", id: "high", priority: 5) { _ in .text("high") },
        ]))
        #expect(engine.handle(request("GET", "http://h/p")).ruleID == "script")
        let older = try rule("GET", "/p", id: "older") { _ in .text("older") }
        engine.add(older)
        engine.add(try rule(nil, "/p", id: "newer") { _ in .text("newer") })
        #expect(engine.handle(request("GET", "http://h/p")).ruleID == "newer")
        #expect(engine.handle(request("GET", "http://h/q")).ruleID == "high")
        engine.removeRuntimeRules()
        #expect(engine.handle(request("GET", "http://h/p")).ruleID == "script")
    }

    @Test("HEAD requests reach GET rules")
    func head() throws {
        let engine = Engine()
        engine.setScriptRules(RuleSet([try rule("GET", "/x") { _ in .text("x") }]))
        #expect(engine.handle(request("HEAD", "http://h/x")).matched)
    }

    @Test("ten thousand rules route correctly through the index")
    func manyRules() throws {
        var rules: [Rule] = []
        for i in 0..<10_000 {
            rules.append(try rule(i % 2 == 0 ? "GET" : "POST", "/r\(i)/items/:id", id: "r\(i)") { ctx in .text(ctx.params["id"]!) })
        }
        rules.append(try rule("GET", "/catch/*rest", id: "catch") { _ in .text("c") })
        let engine = Engine()
        engine.setScriptRules(RuleSet(rules))
        #expect(engine.handle(request("GET", "http://h/r9998/items/5")).ruleID == "r9998")
        #expect(engine.handle(request("POST", "http://h/r9999/items/5")).ruleID == "r9999")
        #expect(engine.handle(request("GET", "http://h/r9999/items/5")).matched == false)
        #expect(engine.handle(request("GET", "http://h/catch/a/b")).ruleID == "catch")
    }

    @Test("the trie finds every literal among many siblings of mixed lengths, encoded or not, and nothing else")
    func manySiblings() throws {
        let names = (0..<300).map { i in String(repeating: "s", count: i % 7 + 1) + "\(i)" } + ["caf\u{e9}", "a b", "x"]
        var rules = try names.enumerated().map { n, name in
            try rule("GET", "/api/" + name.addingPercentEncodingForTest + "/:id", id: "r\(n)") { _ in .text("") }
        }
        rules.append(try rule(nil, "/api/*rest", id: "fallback") { _ in .text("") })
        let set = RuleSet(rules)
        for (n, name) in names.enumerated() {
            let req = request("GET", "http://h/api/" + name.addingPercentEncodingForTest + "/7")
            #expect(set.candidates(for: req) == [n, names.count], "\(name)")
        }
        #expect(set.candidates(for: request("GET", "http://h/api/s1000/7")) == [names.count])
        #expect(set.candidates(for: request("GET", "http://h//api//x//7")) == [names.count - 1, names.count])
        #expect(try RoutePattern("/api/*rest").match(request("GET", "http://h/api//a//b%2Fc")) == ["rest": "a/b/c"])
    }

    @Test("thousands of GraphQL operations on one path are indexed by operationName")
    func manyOperations() throws {
        var rules: [Rule] = []
        for i in 0..<5_000 {
            rules.append(Rule(id: "op\(i)", method: "POST", pattern: try RoutePattern("/graphql"),
                              predicates: [.graphQL(operation: "Op\(i)")], graphQLOperation: "Op\(i)") { _ in .text("\(i)") })
        }
        rules.append(try rule("POST", "/graphql", id: "generic") { _ in .text("generic") })
        let set = RuleSet(rules)
        let req = request("POST", "http://h/graphql", body: #"{"operationName":"Op4999"}"#)
        #expect(set.candidates(for: req) == [4999, 5000])
        let engine = Engine()
        engine.setScriptRules(set)
        #expect(engine.handle(req).ruleID == "op4999")
        #expect(engine.handle(request("POST", "http://h/graphql", body: #"{"operationName":"Nope"}"#)).ruleID == "generic")
    }

    @Test("a throwing responder becomes a 500 with the message; the engine keeps serving")
    func handlerError() throws {
        let engine = Engine()
        engine.setScriptRules(RuleSet([
            try rule("GET", "/boom") { _ in nil },
            try Rule(method: "GET", pattern: "/boom") { _ in throw HandlerFailure(message: "mocks.lua:3: boom", detail: "stack traceback:\n\tx") },
            try rule("GET", "/ok") { _ in .text("ok") },
        ]))
        let ex = engine.handle(request("GET", "http://h/boom"))
        #expect(ex.response.status == 500)
        #expect(String(decoding: ex.response.body, as: UTF8.self).contains("mocks.lua:3: boom\nstack traceback:"))
        #expect(engine.journal.entries().last?.error?.contains("boom") == true)
        #expect(engine.handle(request("GET", "http://h/ok")).response.status == 200)
    }
}

extension String {
    /// Percent-encodes everything but unreserved characters (what a client sends in a path).
    var addingPercentEncodingForTest: String {
        var out = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}

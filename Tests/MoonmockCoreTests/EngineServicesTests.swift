import Foundation
import Testing
@testable import MoonmockCore

@Suite("Engine services")
struct EngineServicesTests {
    @Test("an unmatched request gets a 404 naming the closest rules and why")
    func nearMiss() throws {
        let engine = Engine()
        engine.setScriptRules(RuleSet([
            try rule("GET", "/users/:id", id: "users") { _ in .text("u") },
            try rule("POST", "/graphql", id: "graphql GetViewer", predicates: [.graphQL(operation: "GetViewer")]) { _ in .text("g") },
            try rule("POST", "/search", id: "search", predicates: [.query("q", .present), .header("X-Tenant", .equals("acme"))]) { _ in .text("s") },
        ]))
        let ex = engine.handle(request("POST", "http://h/graphql", body: #"{"operationName":"GetUser"}"#))
        #expect(ex.response.status == 404)
        #expect(ex.nearMisses.first?.ruleID == "graphql GetViewer")
        #expect(ex.nearMisses.first?.summary == "method ok; path ok; json.operationName: expected GetViewer, got GetUser")
        let body = try JSONValue(parsing: ex.response.body)
        #expect(body["closest"]?[0]?["rule"] == .string("graphql GetViewer"))

        let search = engine.handle(request("POST", "http://h/search", headers: ["x-tenant": "other"]))
        #expect(search.nearMisses.first?.mismatches == ["query.q: expected present, got nothing", "headers.x-tenant: expected acme, got other"])
    }

    @Test("the journal keeps the newest entries only and answers verification questions")
    func journal() throws {
        let engine = Engine(journalCapacity: 3)
        engine.setScriptRules(RuleSet([try rule("GET", "/users/:id", id: "users") { _ in .text("u") }]))
        for i in 1...5 { _ = engine.handle(request("GET", "http://h/users/\(i)")) }
        _ = engine.handle(request("GET", "http://h/nope"))
        let entries = engine.journal.entries()
        #expect(entries.map(\.path) == ["/users/4", "/users/5", "/nope"])
        #expect(engine.journal.count(rule: "users") == 2)
        #expect(engine.journal.count(method: "GET", pattern: try RoutePattern("/users/:id")) == 2)
        #expect(engine.journal.unmatched().map(\.path) == ["/nope"])
        #expect(engine.journal.unmatched().first?.nearMisses.first?.ruleID == "users")
        engine.journal.clear()
        #expect(engine.journal.entries().isEmpty)
    }

    @Test("the journal gives back every request exactly as it came, outcome included")
    func journalRoundTrip() throws {
        let engine = Engine()
        engine.setScriptRules(RuleSet([
            try rule("POST", "/orders/:id", id: "orders") { _ in MockResponse(status: 201, headers: .json, body: Array("{}".utf8), fault: .dribble(bytesPerSecond: 5)) },
        ]))
        let big = [UInt8](repeating: 0x61, count: Journal.maxBodyBytes + 10)
        let sent = [
            MockRequest(method: "POST", url: "http://API.example.com:8080/orders/7?x=1&y=%20#frag",
                        headers: ["Content-Type": "application/json", "X-Long-Header-Name-Here": String(repeating: "v", count: 40), "x-empty": ""],
                        body: Array(#"{"sku":"A1","note":"ünïcode"}"#.utf8)),
            MockRequest(method: "POST", scheme: "https", authority: "[::1]:8443", target: "/orders/8", headers: HTTPHeaders(), body: []),
            MockRequest(method: "GET", url: "/nope", headers: ["Host": "h.test"], body: big),
            // A server's header lines, recorded whole.
            MockRequest(method: "GET", scheme: "http", authority: "h.test", target: "/orders/9",
                        headers: HTTPHeaders(validatedLines: Array("Host: h.test\r\nX-Trace:  a:b \r\naccept:*/*\n".utf8)), body: []),
        ]
        let exchanges = sent.map { engine.handle($0) }
        let entries = engine.journal.entries()
        try #require(entries.count == 4)
        for (entry, (request, exchange)) in zip(entries, zip(sent, exchanges)) {
            #expect(entry.id == exchange.request.id)
            #expect(entry.method == request.method && entry.url == request.url && entry.path == request.path)
            #expect(entry.request.rawQuery == request.rawQuery && entry.request.port == request.port && entry.request.host == request.host)
            #expect(entry.request.scheme == request.scheme)
            #expect(entry.headers == request.headers)
            #expect(entry.body == Array(request.body.prefix(Journal.maxBodyBytes)))
            #expect(entry.ruleID == exchange.ruleID)
        }
        #expect(entries[0].status == 0 && entries[0].fault == .dribble(bytesPerSecond: 5))
        #expect(entries[1].request.host == "[::1]" && entries[1].request.port == 8443)
        #expect(entries[2].status == 404 && entries[2].nearMisses.first?.ruleID == "orders")
        #expect(entries[2].body.count == Journal.maxBodyBytes)
        #expect(entries[3].headers.fields.map { "\($0.name)=\($0.value)" } == ["Host=h.test", "X-Trace=a:b", "accept=*/*"])
    }

    @Test("a full journal writes each new entry into the block of one it dropped, whatever their sizes")
    func journalReusesRecords() throws {
        let engine = Engine(journalCapacity: 2)
        engine.setScriptRules(RuleSet([try rule("POST", "/echo/:n", id: "echo") { c in
            c.log("n=\(c.params["n"] ?? "")")
            return .text("ok", status: 200 + c.request.body.count % 7)
        }]))
        // Bodies that grow, shrink to nothing and grow again: some records fit the block they
        // are given, some are far smaller than it, some larger.
        let sizes = [3, 10_000, 0, 5, 4_000, 70_000, 1, 2, 300, 20_000, 0, 9]
        var sent: [(path: String, body: [UInt8], status: Int)] = []
        for (n, size) in sizes.enumerated() {
            let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
            let lines = Array("Host: h.test\r\nX-N: \(n)\r\n".utf8)
            _ = engine.handle(MockRequest(method: "POST", scheme: "http", authority: "h.test", target: "/echo/\(n)",
                                          headers: HTTPHeaders(validatedLines: lines), body: body))
            sent.append(("/echo/\(n)", Array(body.prefix(Journal.maxBodyBytes)), 200 + size % 7))
            let entries = engine.journal.entries()
            let expected = sent.suffix(2)
            try #require(entries.count == expected.count)
            for (entry, want) in zip(entries, expected) {
                #expect(entry.path == want.path && entry.body == want.body, "after request \(n)")
                #expect(entry.status == want.status && entry.ruleID == "echo")
                #expect(entry.logs == ["n=\(want.path.dropFirst(6))"] && entry.headers["x-n"] == String(want.path.dropFirst(6)))
            }
        }
    }

    @Test("a journal record someone still holds is never written over")
    func heldRecordKept() throws {
        func record(_ path: String, _ spare: inout JournalRecord?) -> JournalRecord {
            JournalRecord.make(MockRequest(method: "GET", url: "http://h\(path)"), reusing: &spare, sequence: 1, timestamp: 0,
                               status: 200, ruleID: path, durationMicros: 1, delayMilliseconds: 0, fault: nil, logs: [],
                               error: nil, nearMisses: [])
        }
        var spare: JournalRecord?
        let held = record("/first", &spare)
        spare = held
        let next = record("/other", &spare)
        #expect(spare == nil)
        #expect(held.entry.path == "/first" && held.entry.ruleID == "/first")
        #expect(next.entry.path == "/other" && next.entry.ruleID == "/other")
    }

    @Test("each request's responder sees only its own request, parameters and logs, whatever came before")
    func contextsPerRequest() throws {
        let engine = Engine()
        // The parameters are read (and remembered) before the log line that names them.
        engine.setScriptRules(RuleSet([
            try rule("GET", "/users/:id", id: "user") { ctx in
                let id = ctx.params["id"] ?? "?"
                ctx.log("user \(id) \(ctx.request.path) \(ctx.logs.count)")
                return .text("user \(id) \(ctx.request.path)")
            },
            try rule("GET", "/quiet/:a/:b", id: "quiet") { ctx in
                .text("quiet \(ctx.params.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")) \(ctx.logs.count)")
            },
        ]))
        let paths = ["/users/1", "/users/22", "/quiet/x/y", "/users/333", "/quiet/p/q", "/users/1"]
        let bodies = paths.map { String(decoding: engine.handle(request("GET", "http://h\($0)")).response.body, as: UTF8.self) }
        #expect(bodies == ["user 1 /users/1", "user 22 /users/22", "quiet a=x,b=y 0", "user 333 /users/333", "quiet a=p,b=q 0", "user 1 /users/1"])
        let logs = engine.journal.entries().map(\.logs)
        #expect(logs == [["user 1 /users/1 0"], ["user 22 /users/22 0"], [], ["user 333 /users/333 0"], [], ["user 1 /users/1 0"]])
    }

    @Test("a context a responder keeps stays as it was while later requests are answered")
    func keptContextUnchanged() throws {
        final class Kept: @unchecked Sendable { var contexts: [RequestContext] = [] }
        let kept = Kept()
        let engine = Engine()
        engine.setScriptRules(RuleSet([
            try rule("GET", "/keep/:id", id: "keep") { ctx in
                ctx.log("kept \(ctx.params["id"] ?? "?")")
                kept.contexts.append(ctx)
                return .text("ok")
            },
            try rule("GET", "/other/:id", id: "other") { ctx in .text(ctx.params["id"] ?? "?") },
        ]))
        _ = engine.handle(request("GET", "http://h/keep/1"))
        for i in 0..<3 { _ = engine.handle(request("GET", "http://h/other/\(i)")) }
        _ = engine.handle(request("GET", "http://h/keep/2"))
        #expect(kept.contexts.map(\.request.path) == ["/keep/1", "/keep/2"])
        #expect(kept.contexts.map { $0.params["id"] } == ["1", "2"])
        #expect(kept.contexts.map(\.logs) == [["kept 1"], ["kept 2"]])
        #expect(kept.contexts.map { $0.rule?.id } == ["keep", "keep"])
    }

    @Test("journal timestamps follow the wall clock, or the pinned clock when there is one")
    func timestamps() throws {
        let real = Engine()
        real.setScriptRules(RuleSet([try rule("GET", "/t", id: "t") { _ in .text("t") }]))
        let before = Date().timeIntervalSince1970
        _ = real.handle(request("GET", "http://h/t"))
        usleep(20_000)
        _ = real.handle(request("GET", "http://h/t"))
        let after = Date().timeIntervalSince1970
        let stamps = real.journal.entries().map(\.timestamp)
        #expect(stamps.count == 2 && stamps.allSatisfy { $0 >= before - 0.01 && $0 <= after + 0.01 }, "\(before) \(stamps) \(after)")
        #expect(stamps[1] - stamps[0] >= 0.015)

        var environment = MockEnvironment.system
        environment.now = { 1_700_000_000 }
        let pinned = Engine(environment: environment)
        pinned.setScriptRules(RuleSet([try rule("GET", "/t", id: "t") { _ in .text("t") }]))
        _ = pinned.handle(request("GET", "http://h/t"))
        #expect(pinned.journal.entries().map(\.timestamp) == [1_700_000_000])
    }

    @Test("state: incr, add, set with ttl, delete, keys, flush")
    func state() throws {
        let clock = ManualClock()
        let state = StateStore(clock: { clock.now })
        #expect(try state.incr("n", by: .integer(1), initial: .integer(0)) == .integer(1))
        #expect(try state.incr("n", by: .integer(2)) == .integer(3))
        #expect(try state.add("once", .bool(true)))
        #expect(try !state.add("once", .bool(false)))
        try state.set("token", .string("abc"), ttl: 10)
        #expect(try state.get("token") == .string("abc"))
        clock.now += 11
        #expect(try state.get("token") == nil)
        #expect(try state.keys() == ["n", "once"])
        #expect(throws: StateStore.NotANumber.self) { try state.incr("once") }
        #expect(try state.delete("n"))
        try state.flush()
        #expect(try state.keys().isEmpty)
    }

    @Test("state increments are atomic across threads")
    func stateConcurrency() throws {
        let state = StateStore()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1000 { _ = try? state.incr("hits") }
        }
        #expect(try state.get("hits") == .integer(8000))
    }

    @Test("delays: fixed, uniform within bounds, log-normal around its median")
    func delays() {
        let random = RandomSource(seed: 7)
        #expect(DelaySpec.fixed(150).sample(random) == 150)
        let uniform = (0..<1000).map { _ in DelaySpec.uniform(min: 10, max: 20).sample(random) }
        #expect(uniform.allSatisfy { $0 >= 10 && $0 <= 20 })
        let logNormal = (0..<2001).map { _ in DelaySpec.logNormal(median: 100, sigma: 0.5).sample(random) }.sorted()
        #expect(abs(logNormal[1000] - 100) < 10)
    }

    @Test("the environment can be pinned")
    func environment() {
        let env = MockEnvironment.fixed(now: 1_700_000_000.25, uuids: ["u-1"], seed: 3)
        #expect(env.uuid() == "u-1")
        #expect(env.uuid() == "00000000-0000-4000-8000-000000000002")
        #expect(env.nowISO8601() == "2023-11-14T22:13:20.250Z")
        let a = RandomSource(seed: 3), b = RandomSource(seed: 3)
        #expect((0..<5).map { _ in a.next() } == (0..<5).map { _ in b.next() })
    }

    @Test("state has a size limit: a write past it fails with a clear error, deletes and expiries make room")
    func stateLimit() throws {
        let clock = ManualClock()
        let state = StateStore(clock: { clock.now }, limitBytes: 1000)
        try state.set("a", .string(String(repeating: "x", count: 400)))
        try state.set("b", .string(String(repeating: "y", count: 400)), ttl: 5)
        let error = #expect(throws: StateStore.LimitExceeded.self) { try state.set("c", .string(String(repeating: "z", count: 400))) }
        #expect(error?.description.contains("mock.state is full") == true && error?.description.contains("1000 bytes") == true)
        #expect(try state.get("c") == nil)
        #expect(throws: StateStore.LimitExceeded.self) { try state.add("c", .string(String(repeating: "z", count: 400))) }
        // Replacing a value with a smaller one, numbers and deletes always fit.
        try state.set("a", .string("small"))
        try state.set("c", .string(String(repeating: "z", count: 400)))
        #expect(state.bytesUsed <= 1000)
        clock.now += 6   // "b" expires: its room is free again
        try state.set("d", .string(String(repeating: "w", count: 400)))
        #expect(try state.keys() == ["a", "c", "d"])
        try state.flush()
        #expect(state.bytesUsed == 0)
    }

    @Test("templates look values up and escape them for JSON")
    func templates() throws {
        let env = MockEnvironment.fixed(now: 0, uuids: ["id-1"])
        let state = StateStore(clock: env.now)
        try state.set("plan", .string("pro"))
        let t = try Template(#"{"id":"{{uuid}}","sku":"{{ req.json.sku }}","first":{{req.json.items.1}},"q":"{{req.query.q}}","p":"{{req.params.id}}","plan":"{{state.plan}}","h":"{{req.headers.x-a}}"}"#)
        let req = request("POST", "http://h/o/9?q=a+b", headers: ["X-A": "1"], body: #"{"sku":"A\"B","items":[{"n":1}]}"#)
        let out = try t.render(request: req, params: ["id": "9"], state: state, environment: env, escapeJSON: true)
        let parsed = try JSONValue(parsing: out)
        #expect(parsed == .object([
            "id": .string("id-1"), "sku": .string("A\"B"), "first": .object(["n": .integer(1)]),
            "q": .string("a b"), "p": .string("9"), "plan": .string("pro"), "h": .string("1"),
        ]))
        #expect(throws: Template.ParseError.self) { try Template("{{os.execute}}") }
        #expect(throws: Template.ParseError.self) { try Template("{{req.nope}}") }
        #expect(throws: Template.ParseError.self) { try Template("{{uuid") }
    }

    @Test("requests parse URLs, queries, headers and cookies")
    func requests() {
        let r = request("get", "HTTP://Example.COM:8080/a%20b/c?x=1&x=2&flag&y=%C3%A9#frag",
                        headers: ["Cookie": "a=1; b=2", "Host": "ignored"])
        #expect(r.method == "get")   // as sent: methods are case-sensitive, so never rewritten
        #expect(r.scheme == "http")
        #expect(r.host == "example.com")
        #expect(r.port == 8080)
        #expect(r.pathSegments == ["a b", "c"])
        #expect(r.query("x") == "1")
        #expect(r.query("flag") == "")
        #expect(r.query("y") == "é")
        #expect(r.cookies == ["a": "1", "b": "2"])
        #expect(r.url == "http://example.com:8080/a%20b/c?x=1&x=2&flag&y=%C3%A9")
        let origin = request("GET", "/p?q", headers: ["Host": "api.test:9000"])
        #expect(origin.host == "api.test" && origin.port == 9000 && origin.path == "/p")
        let v6 = request("GET", "http://user:pw@[::1]:81/x")
        #expect(v6.host == "[::1]" && v6.port == 81)
        let badPort = request("GET", "/x", headers: ["Host": "h:8x"])
        #expect(badPort.host == "h" && badPort.port == nil)
    }
}

final class ManualClock: @unchecked Sendable {
    var now: Double = 1000
}

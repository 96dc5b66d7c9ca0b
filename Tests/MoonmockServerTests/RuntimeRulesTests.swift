import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockScript
import MoonmockServer
import Testing

/// A folder with a script, a module and a fixture, served with runtime rules and reload.
final class RulesFixture: @unchecked Sendable {
    let dir: URL
    let host: ScriptHost
    let server: MoonmockServer

    init(script: String = #"mock.get("/t", "script") mock.get("/kept", "from the script")"#,
         configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("data"), withIntermediateDirectories: true)
        try Data(script.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        try Data(#"return { greet = function(n) return "hi " .. n end }"#.utf8).write(to: dir.appendingPathComponent("lib.lua"))
        try Data(#"{"from":"file"}"#.utf8).write(to: dir.appendingPathComponent("data/user.json"))
        let engine = Engine()
        let host = try ScriptHost(file: dir.appendingPathComponent("mocks.lua").path, engine: engine)
        self.host = host
        var configuration = ServerConfiguration()
        configuration.port = 0
        configure(&configuration)
        let rules = try RuntimeRules(engine: engine, baseDirectory: dir.path, origin: "admin API")
        server = MoonmockServer(engine: engine, configuration: configuration,
                                reload: { let o = host.reload(); return .init(ok: o.ok, message: o.message, rules: host.status.rules) },
                                runtimeRules: rules)
        try server.start()
    }

    /// `POST /__moonmock/rules` with `json`: the status and the answer's JSON.
    func add(_ json: String) async throws -> (Int, JSONValue?) {
        let r = try await server.fetch("/__moonmock/rules", method: "POST", body: json)
        return (r.status, try? JSONValue(parsing: Array(r.body.utf8)))
    }

    func json(_ path: String, method: String = "GET", body: String? = nil) async throws -> (Int, JSONValue?) {
        let r = try await server.fetch(path, method: method, body: body)
        return (r.status, try? JSONValue(parsing: Array(r.body.utf8)))
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: dir)
    }
}

@Suite("Runtime rules over HTTP")
struct RuntimeRulesTests {
    @Test("every predicate: method, path captures, host, query and header matchers, JSON subset, body, GraphQL, times, priority")
    func predicates() async throws {
        let f = try RulesFixture()
        let s = f.server
        #expect(try await f.add(#"{"method": "GET", "path": "/q", "query": {"a": "1", "b": {"present": true}, "c": {"absent": true}, "d": {"match": "^%d+$"}}, "respond": {"text": "query ok"}}"#).0 == 201)
        #expect(try await s.fetch("/q?a=1&b=x&d=42").body == "query ok")
        #expect(try await s.fetch("/q?a=1&b=x&d=4x").status == 404)
        #expect(try await s.fetch("/q?a=1&b=x&d=42&c=1").status == 404)
        #expect(try await s.fetch("/q?a=2&b=x&d=42").status == 404)

        _ = try await f.add(#"{"path": "/h", "headers": {"X-Tenant": "acme", "authorization": {"match": "^Bearer "}}, "respond": {"status": 202, "json": {"ok": true}, "headers": {"X-Kind": "h"}}}"#)
        let h = try await s.fetch("/h", headers: ["x-tenant": "acme", "Authorization": "Bearer t"])
        #expect(h.status == 202 && h.body == #"{"ok":true}"# && h.response.value(forHTTPHeaderField: "X-Kind") == "h")
        #expect(h.response.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/json") == true)
        #expect(try await s.fetch("/h", headers: ["x-tenant": "acme", "Authorization": "Basic t"]).status == 404)

        _ = try await f.add(#"{"method": "POST", "path": "/orders/:shop", "json": {"currency": "EUR", "items": [1, 2], "note": null}, "respond": {"status": 201, "json": {"id": "o-1"}}}"#)
        #expect(try await s.fetch("/orders/berlin", method: "POST", body: #"{"currency":"EUR","items":[1,2],"note":null,"total":9}"#).status == 201)
        #expect(try await s.fetch("/orders/berlin", method: "POST", body: #"{"currency":"USD","items":[1,2],"note":null}"#).status == 404)
        #expect(try await s.fetch("/orders/berlin", method: "PUT", body: #"{"currency":"EUR","items":[1,2],"note":null}"#).status == 405)

        _ = try await f.add(#"{"method": "PUT", "path": "/echo", "body": {"match": "hel+o"}, "respond": {"text": "hi"}}"#)
        #expect(try await s.fetch("/echo", method: "PUT", body: "say hello").body == "hi")
        #expect(try await s.fetch("/echo", method: "PUT", body: "say bye").status == 404)

        #expect(try await f.add(#"{"graphql": "GetUser", "respond": {"json": {"data": {"user": {"id": 1}}}}}"#).0 == 201)
        #expect(try await s.fetch("/graphql", method: "POST", body: #"{"operationName":"GetUser","query":"q"}"#).body == #"{"data":{"user":{"id":1}}}"#)
        #expect(try await s.fetch("/graphql", method: "POST", body: #"{"operationName":"Other"}"#).status == 404)

        _ = try await f.add(#"{"path": "/where", "host": "api.example.com", "respond": {"text": "that host"}}"#)
        let port = s.port
        let there = await onThread { RawHTTP.exchange(port, "GET /where HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n") }
        #expect(there.text.hasPrefix("HTTP/1.1 200") && there.text.hasSuffix("that host"))
        #expect(try await s.fetch("/where").status == 404)
        _ = try await f.add(#"{"url": "http://api.example.com/v1/*", "respond": {"text": "pinned"}}"#)
        let pinned = await onThread { RawHTTP.exchange(port, "GET /v1/a/b HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n") }
        #expect(pinned.text.hasSuffix("pinned"))
        #expect(try await s.fetch("/v1/a/b").status == 404)

        // times: the runtime rule answers once, then the script's rule answers.
        _ = try await f.add(#"{"path": "/t", "times": 1, "respond": {"text": "runtime once"}}"#)
        #expect(try await s.fetch("/t").body == "runtime once")
        #expect(try await s.fetch("/t").body == "script")
        // Newest first, unless a priority says otherwise.
        _ = try await f.add(#"{"path": "/p", "priority": 5, "respond": {"text": "high"}}"#)
        _ = try await f.add(#"{"path": "/p", "respond": {"text": "newer"}}"#)
        #expect(try await s.fetch("/p").body == "high")
    }

    @Test("every response kind: json, text, base64, a file of the script's folder, status only, headers, delay, faults")
    func responses() async throws {
        let f = try RulesFixture()
        let s = f.server
        _ = try await f.add(#"[{"path": "/bin", "respond": {"base64": "AAEC/w=="}}, {"path": "/file", "respond": {"file": "data/user.json"}},"#
                            + #" {"method": "DELETE", "path": "/gone", "respond": {"status": 204}}, {"path": "/slow", "respond": {"text": "late", "delay": 300}},"#
                            + #" {"path": "/jitter", "respond": {"json": [], "delay": {"min": 10, "max": 20}}}, {"path": "/reset", "respond": {"fault": "connection_reset"}}]"#)
        let port = s.port
        let bin = await onThread { RawHTTP.exchange(port, "GET /bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(Array(bin.bytes.suffix(4)) == [0, 1, 2, 255])
        #expect(bin.text.contains("Content-Type: application/octet-stream"))
        let file = try await s.fetch("/file")
        #expect(file.body == #"{"from":"file"}"# && file.response.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/json") == true)
        let gone = try await s.fetch("/gone", method: "DELETE")
        #expect(gone.status == 204 && gone.body.isEmpty)
        let started = Date()
        #expect(try await s.fetch("/slow").body == "late")
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(try await s.fetch("/jitter").body == "[]")
        _ = try await f.add(#"[{"path": "/drip", "respond": {"text": "0123456789", "fault": "dribble", "bytes_per_second": 25}},"#
                            + #" {"path": "/lognormal", "respond": {"text": "ln", "delay": {"median": 5, "sigma": 0.1}}}]"#)
        let dripStarted = Date()
        #expect(try await s.fetch("/drip").body == "0123456789")
        #expect(Date().timeIntervalSince(dripStarted) >= 0.3)
        #expect(try await s.fetch("/lognormal").body == "ln")
        await #expect(throws: (any Error).self) { _ = try await s.fetch("/reset") }
        #expect(try await s.fetch("/file").status == 200)   // and the server serves on
    }

    @Test("a bad rule is a 400 naming the field and what was expected; an array with one adds none",
          arguments: [
            (#"{"path": "/a", "respond": {"status": "ok"}}"#, "rule.respond.status: expected an integer from 100 to 599, got \"ok\""),
            (#"{"path": "/a", "respnd": {}}"#, "rule.respnd: unknown field; did you mean 'respond'?"),
            (#"{"path": "/a"}"#, "rule.respond: missing"),
            (#"{"respond": {}}"#, "rule.path: missing"),
            (#"{"path": "/a", "query": {"q": 3}, "respond": {}}"#, "rule.query.q: expected a string, {\"present\": true}"),
            (#"{"path": "/a", "times": 0, "respond": {}}"#, "rule.times: expected a positive integer, got 0"),
            (#"{"path": "/a", "respond": {"delay": "slow"}}"#, "rule.respond.delay: expected milliseconds"),
            (#"{"path": "/a", "respond": {"fault": "explode"}}"#, "rule.respond.fault: expected one of connection_reset"),
            (#"{"path": "/a", "respond": {"json": 1, "text": "x"}}"#, "rule.respond: give one body of json, text, base64 or file"),
            (#"{"path": "/a", "respond": {"base64": "!!"}}"#, "rule.respond.base64: not valid base64"),
            (#"{"path": "/a", "respond": {}, "lua": "function(req) end"}"#, "rule: give respond or lua, not both"),
            (#"{"path": "/a", "lua": "function(req) return end end"}"#, "rule.lua:1: ')' expected near 'end'"),
            (#"{"path": "/a", "lua": "end"}"#, "rule.lua:1: unexpected symbol near 'end'"),
            (#"[{"path": "/ok", "respond": {}}, {"path": "/a", "lua": "function(req)\nreturn {\nend"}]"#, "rules[1].lua:3: unexpected symbol near 'end'"),
            (#"{"path": "/a", "query": {"q": {"match": "[a"}}, "respond": {}}"#, "mock.match: invalid Lua pattern '[a'"),
            (#"{"path": "/a", "respond": {"file": "../../etc/passwd"}}"#, "mock.file"),
            (#"[{"path": "/ok", "respond": {}}, {"path": 7, "respond": {}}]"#, "rules[1].path: expected a non-empty string, got 7"),
            (#"{"path": "/a", "respond": {}"#, "rule: invalid JSON"),
          ])
    func badRules(rule: String, message: String) async throws {
        let f = try RulesFixture()
        let (status, answer) = try await f.add(rule)
        #expect(status == 400)
        #expect(answer?["error"]?.stringValue?.contains(message) == true, "\(answer.map { String(describing: $0) } ?? "")")
        if message.contains(".lua:") { #expect(answer?["field"]?.stringValue.map { message.hasPrefix($0 + ":") } == true) }
        let (_, listed) = try await f.json("/__moonmock/rules")
        guard case .array(let rules)? = listed else { Issue.record("no rule list"); return }
        #expect(!rules.contains { $0["source"] == .string("runtime") })
    }

    @Test("a lua handler runs in the sandbox with the script's modules and mock.state; a runaway one is stopped and the next request served")
    func luaHandlers() async throws {
        let f = try RulesFixture(script: #"mock.get("/count", function() return { n = mock.state:get("n") } end)"#)
        let s = f.server
        _ = try await f.add(#"{"path": "/greet/:name", "lua": "function(req)\n  local lib = require('lib')\n  return { msg = lib.greet(req.params.name), n = mock.state:incr('n') }\nend"}"#)
        #expect(try await s.fetch("/greet/ana").body == #"{"msg":"hi ana","n":1}"#)
        #expect(try await s.fetch("/greet/bo").body == #"{"msg":"hi bo","n":2}"#)
        #expect(try await s.fetch("/count").body == #"{"n":2}"#)   // the script sees the same state
        _ = try await f.add(#"{"path": "/io", "lua": "function(req) return io.open('/etc/passwd'):read('a') end"}"#)
        let io = try await s.fetch("/io")
        #expect(io.status == 500 && io.body.contains("io"))
        _ = try await f.add(#"{"path": "/loop", "lua": "function(req) while true do end end"}"#)
        let started = Date()
        let loop = try await s.fetch("/loop")
        #expect(loop.status == 500 && loop.body.contains("instruction budget"))
        #expect(Date().timeIntervalSince(started) < 10 * timeScale)
        #expect(try await s.fetch("/greet/cy").body == #"{"msg":"hi cy","n":3}"#)
        let notAFunction = try await f.add(#"{"path": "/nil", "lua": "42"}"#)
        #expect(notAFunction.0 == 400 && notAFunction.1?["error"]?.stringValue?.contains("lua: must be a function(req), got number") == true)
    }

    @Test("GET lists runtime rules first with their JSON; DELETE one or all; a name replaces; reloads keep them")
    func listDeleteReload() async throws {
        let f = try RulesFixture()
        let s = f.server
        let (status, one) = try await f.add(#"{"name": "mine", "path": "/kept", "respond": {"text": "runtime"}}"#)
        #expect(status == 201 && one?["id"] == .string("mine"))
        let (_, two) = try await f.add(#"[{"path": "/x", "respond": {"text": "x"}}, {"path": "/y", "respond": {"text": "y"}}]"#)
        guard case .array(let ids)? = two?["ids"], ids.count == 2 else { Issue.record("no ids: \(String(describing: two))"); return }
        let (_, listed) = try await f.json("/__moonmock/rules")
        guard case .array(let rules)? = listed else { Issue.record("no rule list"); return }
        #expect(rules.prefix(3).allSatisfy { $0["source"] == .string("runtime") })
        #expect(rules[0]["id"] == ids[0] && rules[2]["id"] == .string("mine"))
        #expect(rules[2]["definition"]?["respond"]?["text"] == .string("runtime"))
        #expect(rules[2]["location"] == .string("admin API"))
        #expect(rules.suffix(2).allSatisfy { $0["source"] == .string("script") })
        #expect(try await s.fetch("/kept").body == "runtime")

        // A reload replaces the script's rules and keeps the runtime ones.
        try Data(#"mock.get("/kept", "script v2") mock.get("/new", "new")"#.utf8).write(to: f.dir.appendingPathComponent("mocks.lua"))
        #expect(try await s.fetch("/__moonmock/reload", method: "POST").status == 200)
        #expect(try await s.fetch("/new").body == "new")
        #expect(try await s.fetch("/kept").body == "runtime")

        // The same name replaces the rule.
        _ = try await f.add(#"{"name": "mine", "path": "/kept", "respond": {"text": "runtime v2"}}"#)
        #expect(try await s.fetch("/kept").body == "runtime v2")
        #expect(try await s.fetch("/__moonmock/rules/mine", method: "DELETE").status == 200)
        #expect(try await s.fetch("/__moonmock/rules/mine", method: "DELETE").status == 404)
        #expect(try await s.fetch("/__moonmock/rules/GET%20%2Fnew", method: "DELETE").status == 409)
        #expect(try await s.fetch("/kept").body == "script v2")
        let (_, cleared) = try await f.json("/__moonmock/rules?source=runtime", method: "DELETE")
        #expect(cleared?["deleted"] == .integer(2))
        #expect(try await s.fetch("/x").status == 404)
    }

    @Test("state over HTTP: a key's JSON value, the whole store, what handlers see")
    func state() async throws {
        let f = try RulesFixture(script: #"mock.get("/me", function() return { user = mock.state:get("user"), cart = mock.state:get("cart") } end)"#)
        let s = f.server
        #expect(try await s.fetch("/__moonmock/state/user", method: "PUT", body: #""ana""#).status == 200)
        #expect(try await s.fetch("/__moonmock/state/cart", method: "PUT", body: "3").status == 200)
        #expect(try await s.fetch("/me").body == #"{"cart":3,"user":"ana"}"#)
        #expect(try await s.fetch("/__moonmock/state/cart").body == "3")
        #expect(try await s.fetch("/__moonmock/state/user").body == #""ana""#)
        #expect(try await s.fetch("/__moonmock/state/nope").status == 404)
        #expect(try await s.fetch("/__moonmock/state/cart", method: "DELETE").body == #"{"deleted":true,"key":"cart"}"#)
        #expect(try await s.fetch("/__moonmock/state/cart").status == 404)
        let table = try await s.fetch("/__moonmock/state/t", method: "PUT", body: #"{"a":1}"#)
        #expect(table.status == 400 && table.body.contains("strings, numbers and booleans"))
        #expect(try await s.fetch("/__moonmock/state/t", method: "PUT", body: "not json").status == 400)
        let replaced = try await s.fetch("/__moonmock/state", method: "PUT", body: #"{"user":"bo","flag":true}"#)
        #expect(replaced.status == 200 && replaced.body == #"{"flag":true,"user":"bo"}"#)
        #expect(try await s.fetch("/__moonmock/state").body == #"{"flag":true,"user":"bo"}"#)
        #expect(try await s.fetch("/me").body == #"{"user":"bo"}"#)
        #expect(try await s.fetch("/__moonmock/state", method: "PUT", body: "[1]").status == 400)
    }

    @Test("verify: 200 with the count, or 422 with the closest requests and why; since= for pollers")
    func verify() async throws {
        let f = try RulesFixture(script: #"mock.get("/users/:id", function(req) return { id = req.params.id } end, { name = "user" })"#)
        let s = f.server
        _ = try await s.fetch("/users/1")
        _ = try await s.fetch("/users/2?full=1")
        _ = try await s.fetch("/userz/3")
        _ = try await s.fetch("/users/4", method: "POST")
        let ok = try await f.json("/__moonmock/verify", method: "POST", body: #"{"method": "GET", "pattern": "/users/:id", "times": 2}"#)
        #expect(ok.0 == 200 && ok.1 == .object(["ok": .bool(true), "count": .integer(2)]))
        #expect(try await f.json("/__moonmock/verify", method: "POST", body: #"{"rule": "user", "at_least": 2}"#).0 == 200)
        #expect(try await f.json("/__moonmock/verify", method: "POST", body: #"{"url": "/users/2?full=1"}"#).1?["count"] == .integer(1))
        // The URL as the journal shows it, absolute: that request exactly.
        let journaled = try await f.json("/__moonmock/requests")
        let absolute = try #require(journaled.1.flatMap { j -> String? in
            guard case .array(let entries) = j["requests"] ?? j else { return nil }
            return entries.compactMap { $0["url"]?.stringValue }.first { $0.hasSuffix("/users/2?full=1") }
        })
        #expect(absolute.hasPrefix("http://127.0.0.1:"))
        #expect(try await f.json("/__moonmock/verify", method: "POST", body: #"{"url": "\#(absolute)", "times": 1}"#).0 == 200)
        let other = try await f.json("/__moonmock/verify", method: "POST", body: #"{"url": "\#(absolute.replacingOccurrences(of: "full=1", with: "full=2"))"}"#)
        #expect(other.0 == 422 && other.1?["near_misses"]?[0]?["reasons"]?[0]?.stringValue == "url: expected \(absolute.replacingOccurrences(of: "full=1", with: "full=2")), got \(absolute)")
        #expect(try await f.json("/__moonmock/verify", method: "POST", body: #"{"pattern": "/users/:id", "at_most": 2}"#).0 == 422)

        let (status, failed) = try await f.json("/__moonmock/verify", method: "POST", body: #"{"method": "GET", "pattern": "/users/:id", "times": 3}"#)
        #expect(status == 422 && failed?["ok"] == .bool(false) && failed?["count"] == .integer(2))
        #expect(failed?["expected"] == .string("exactly 3"))
        guard case .array(let misses)? = failed?["near_misses"], case .array(let counted)? = failed?["requests"] else {
            Issue.record("no near misses: \(String(describing: failed))"); return
        }
        #expect(counted.count == 2)
        #expect(misses.count == 2)
        #expect(misses.contains { $0["request"]?.stringValue?.hasSuffix("/userz/3") == true
            && $0["reasons"]?[0]?.stringValue == "path: expected /users/:id, got /userz/3" })
        #expect(misses.contains { $0["request"]?.stringValue?.hasPrefix("POST ") == true
            && $0["reasons"]?[0]?.stringValue == "method: expected GET, got POST" })
        #expect(try await f.json("/__moonmock/verify", method: "POST", body: #"{"pattern": "/users/:id", "times": 1, "at_most": 2}"#).0 == 400)
        #expect(try await f.json("/__moonmock/verify", method: "POST", body: #"{"patern": "/users/:id"}"#).0 == 400)

        // since=: only what came after that entry.
        let (_, all) = try await f.json("/__moonmock/requests")
        guard case .array(let entries)? = all, case .integer(let second)? = entries[1]["id"] else { Issue.record("no journal"); return }
        let (_, newer) = try await f.json("/__moonmock/requests?since=\(second)")
        guard case .array(let after)? = newer else { Issue.record("no newer entries"); return }
        #expect(after.compactMap { $0["url"]?.stringValue?.split(separator: "/").last.map(String.init) } == ["3", "4"])
    }
}

import Foundation
import MoonmockCore
import MoonmockScript

/// The admin API under `/__moonmock/` (DESIGN §5), answered as JSON:
///
/// | request | answer |
/// |---|---|
/// | `GET /__moonmock/health` | status, rule and request counts, requests in flight, open connections per worker |
/// | `GET /__moonmock/rules` | rules in evaluation order with hit counts |
/// | `GET`/`DELETE /__moonmock/requests` | the journal (filter: `?rule=`, `?method=&pattern=`) / clear it |
/// | `GET /__moonmock/requests/count` | how many requests match the same filters |
/// | `GET /__moonmock/requests/unmatched` | unmatched requests with near-miss reports |
/// | `GET`/`DELETE /__moonmock/state` | `mock.state` / flush it |
/// | `GET /__moonmock/variants` | rules with variants and the active one |
/// | `PUT /__moonmock/variants/{url-encoded rule id}` | `{"active": "name"}` switches (`null`: no stub) |
/// | `GET`/`PUT /__moonmock/bundle` | the Mock-Bundle folders / `{"path": "dir"}` swaps one |
/// | `POST /__moonmock/reload` | reload the script, report the result |
/// | `POST /__moonmock/reset` | clear runtime rules, journal and state |
/// | `GET /__moonmock/` | the dashboard page |
///
/// Every call must name the server in `Host` (the bound address, a loopback name or an
/// `--admin-host`), and a state-changing one (`POST`, `PUT`, `PATCH`, `DELETE`) that a browser
/// sends with an `Origin` must come from the server's own origin: a page elsewhere can neither
/// read the journal through DNS rebinding nor change rules or state behind the user's back.
/// With a token, every call needs `Authorization: Bearer TOKEN`, or the session cookie that
/// `POST /__moonmock/login` with `{"token": …}` sets (the dashboard's sign-in form).
struct AdminAPI: Sendable {
    static let prefix = "/__moonmock"

    /// Whether `path` is `/__moonmock` or under it: compared as bytes, since every request asks.
    static func owns(_ path: String) -> Bool {
        let literal: StaticString = "/__moonmock"
        let n = literal.utf8CodeUnitCount
        return path.withUTF8Bytes { b in
            guard b.count >= n, let base = b.baseAddress, memcmp(base, literal.utf8Start, n) == 0 else { return false }
            return b.count == n || base[n] == UInt8(ascii: "/")
        }
    }

    let engine: Engine
    let token: String?
    /// The host names `Host` may give (lowercased).
    let hosts: Set<String>
    let sessions = AdminSessions()
    let startedAt = Date()
    let rulesSlot: RuntimeRulesSlot

    /// The server's runtime rules (made on first use).
    func runtimeRules() throws -> RuntimeRules { try rulesSlot.get() }

    func handle(_ request: MockRequest, server: MoonmockServer) -> MockResponse {
        var path = String(request.path.dropFirst(Self.prefix.count))
        if path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        if let refusal = guardOrigin(request, server: server) { return refusal }
        switch (request.method, path) {
        case ("GET", ""), ("GET", "/"):
            // The page holds no data: it signs in (when there is a token) and reads the API.
            return MockResponse(status: 200, headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"],
                                body: Array(Dashboard.html.utf8))
        case ("POST", "/login"):
            return login(request)
        case ("POST", "/logout"):
            return logout(request)
        default:
            break
        }
        if let token, !authorized(request, token) {
            var r = MockResponse.json(.object(["error": .string("admin API needs Authorization: Bearer <token> (or the dashboard's sign-in)")]), status: 401)
            r.headers["WWW-Authenticate"] = "Bearer"
            return r
        }
        switch (request.method, path) {
        case ("GET", "/health"):
            var health: [String: JSONValue] = [
                "status": .string("ok"),
                "rules": .integer(Int64(engine.allRules.count)),
                "requests": .integer(Int64(engine.journal.entries().count)),
                "in_flight": .integer(Int64(server.requestsInFlight)),
                "connections_per_worker": .array(server.connectionsPerWorker.map { .integer(Int64($0)) }),
                "uptime_seconds": .double((Date().timeIntervalSince(startedAt) * 1000).rounded() / 1000),
            ]
            if let script = server.scriptStatus?() { health["script"] = script }
            return .json(.object(health))
        case ("GET", "/rules"):
            return listRules()
        case ("POST", "/rules"):
            return addRules(request)
        case ("DELETE", "/rules"):
            return deleteRules(request)
        case ("DELETE", let p) where p.hasPrefix("/rules/"):
            return deleteRule(p.dropFirst("/rules/".count))
        case (_, let p) where p.hasPrefix("/state/"):
            return stateKey(request, p.dropFirst("/state/".count))
        case ("PUT", "/state"):
            return replaceState(request)
        case ("POST", "/verify"):
            return verify(request)
        case ("GET", "/requests"), ("GET", "/requests/count"):
            // Verification: ?rule=ID, ?method=GET&pattern=/users/:id (either or both).
            var entries = engine.journal.entries()
            if let rule = request.query("rule") { entries = entries.filter { $0.ruleID == rule } }
            if let pattern = request.query("pattern") {
                guard let p = try? RoutePattern(pattern) else {
                    return .json(.object(["error": .string("invalid pattern '\(pattern)'")]), status: 400)
                }
                entries = entries.filter { p.match($0.request) != nil }
            }
            if let method = request.query("method")?.asciiUppercased { entries = entries.filter { $0.method == method } }
            if let since = request.query("since") {
                guard let id = Int(since) else { return Self.error("since must be a request id (an integer)", 400) }
                // Ids are unique but not in time order across workers: "newer" is what the journal
                // recorded after that entry. An id no longer kept (cleared, or pushed out) gives all.
                let all = engine.journal.entries()
                if let at = all.lastIndex(where: { $0.id == id }) {
                    let newer = Set(all[(at + 1)...].map(\.id))
                    entries = entries.filter { newer.contains($0.id) }
                }
            }
            if path == "/requests/count" { return .json(.object(["count": .integer(Int64(entries.count))])) }
            return .json(.array(entries.map(Self.json)))
        case ("DELETE", "/requests"):
            engine.journal.clear()
            return .json(.object(["cleared": .bool(true)]))
        case ("GET", "/requests/unmatched"):
            return .json(.array(engine.journal.unmatched().map(Self.json)))
        case ("GET", "/state"):
            return .json(.object(engine.state.snapshot().mapValues(\.json)))
        case ("DELETE", "/state"):
            engine.state.flush()
            return .json(.object(["flushed": .bool(true)]))
        case ("GET", "/variants"):
            return .json(.array(engine.variants.list().map { v in
                .object(["rule": .string(v.rule), "variants": .array(v.names.map(JSONValue.string)), "active": v.active.map(JSONValue.string) ?? .null])
            }))
        case ("PUT", let p) where p.hasPrefix("/variants/"):
            let rule = PercentDecoding.decode(p.dropFirst("/variants/".count))
            guard case .object(let body)? = request.json, let active = body["active"] else {
                return .json(.object(["error": .string(#"send {"active": "variant name"}"#)]), status: 400)
            }
            do {
                if active == .null {
                    try engine.variants.deactivate(rule)
                } else if let name = active.stringValue {
                    try engine.variants.activate(name, for: rule)
                } else {
                    return .json(.object(["error": .string("active must be a name or null")]), status: 400)
                }
                return .json(.object(["rule": .string(rule), "active": engine.variants.active(for: rule).map(JSONValue.string) ?? .null]))
            } catch {
                let known = engine.variants.list().contains { $0.rule == rule }
                return .json(.object(["error": .string(String(describing: error))]), status: known ? 422 : 404)
            }
        case ("GET", "/bundle"):
            return .json(.array(engine.bundles.list().map { .object(["rule": .string($0.rule), "path": .string($0.path)]) }))
        case ("PUT", "/bundle"):
            guard case .object(let body)? = request.json, let path = body["path"]?.stringValue else {
                return .json(.object(["error": .string(#"send {"path": "folder relative to the script"}"#)]), status: 400)
            }
            do {
                let rule = try engine.bundles.switchTo(path, rule: body["rule"]?.stringValue)
                return .json(.object(["rule": .string(rule), "path": .string(path)]))
            } catch {
                return .json(.object(["error": .string(String(describing: error))]), status: 422)
            }
        case ("POST", "/reset"):
            engine.reset()
            return .json(.object(["reset": .bool(true)]))
        case ("POST", "/reload"):
            guard let reload = server.reloader else {
                return .json(.object(["error": .string("this server has no script to reload")]), status: 501)
            }
            do {
                let result = try reload()
                return .json(.object(["ok": .bool(result.ok), "message": .string(result.message), "rules": .integer(Int64(result.rules))]),
                             status: result.ok ? 200 : 422)
            } catch {
                return .json(.object(["ok": .bool(false), "message": .string(String(describing: error))]), status: 422)
            }
        default:
            return .json(.object([
                "error": .string("no admin endpoint \(request.method) \(request.path)"),
                "endpoints": .array(["GET /__moonmock/health", "GET|POST|DELETE /__moonmock/rules", "DELETE /__moonmock/rules/{id}",
                                     "GET|DELETE /__moonmock/requests?since=", "GET /__moonmock/requests/count?rule=|method=&pattern=",
                                     "GET /__moonmock/requests/unmatched", "GET|PUT|DELETE /__moonmock/state",
                                     "GET|PUT|DELETE /__moonmock/state/{key}", "POST /__moonmock/verify",
                                     "GET /__moonmock/variants", "PUT /__moonmock/variants/{rule}", "GET|PUT /__moonmock/bundle",
                                     "POST /__moonmock/reload", "POST /__moonmock/reset"].map(JSONValue.string)),
            ]), status: 404)
        }
    }

    static func json(_ rule: Rule) -> JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(rule.id),
            "method": rule.method.map(JSONValue.string) ?? .string("ANY"),
            "pattern": .string(rule.pattern.source),
            "hits": .integer(Int64(rule.hits)),
            "priority": .integer(Int64(rule.priority)),
            "retired": .bool(rule.isRetired),
            "conditions": .array(rule.predicates.map { .string($0.description) }),
        ]
        if let times = rule.times { o["times"] = .integer(Int64(times)) }
        if let location = rule.location { o["location"] = .string(location) }
        return .object(o)
    }

    static func json(_ e: JournalEntry) -> JSONValue {
        var o: [String: JSONValue] = [
            "id": .integer(Int64(e.id)),
            "timestamp": .double(e.timestamp),
            "method": .string(e.method),
            "url": .string(e.url),
            "status": .integer(Int64(e.status)),
            "rule": e.ruleID.map(JSONValue.string) ?? .null,
            "duration_us": .integer(Int64(e.durationMicros)),
            "headers": .object(Dictionary(e.headers.fields.map { ($0.name.asciiLowercased, JSONValue.string($0.value)) }) { a, b in
                .string((a.stringValue ?? "") + ", " + (b.stringValue ?? "")) }),
            "body": .string(String(decoding: e.body, as: UTF8.self)),
            "logs": .array(e.logs.map(JSONValue.string)),
        ]
        if e.delayMilliseconds > 0 { o["delay_ms"] = .double(e.delayMilliseconds) }
        if let fault = e.fault { o["fault"] = .string(fault.description) }
        if let error = e.error { o["error"] = .string(error) }
        if !e.nearMisses.isEmpty { o["near_misses"] = .array(e.nearMisses.map(\.json)) }
        return .object(o)
    }
}

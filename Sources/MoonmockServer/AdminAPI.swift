import Foundation
import MoonmockCore
import MoonmockScript

/// The admin API under `/__moonmock/` (DESIGN §7), answered as JSON. The endpoints are the
/// table ``routes`` (AdminAPI+Routes.swift), each documented in `docs/admin-api.yaml`
/// (OpenAPI 3): health, rules (runtime rules added and removed), the journal and verification,
/// `mock.state`, variants and bundles, reload and reset, the dashboard page.
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
        var path = Substring(request.path.dropFirst(Self.prefix.count))
        if path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        if path.isEmpty { path = "/" }
        if let refusal = guardOrigin(request, server: server) { return refusal }
        let found = Self.routes.lazy.compactMap { route in route.match(request.method, path).map { (route, $0) } }.first
        guard let (route, parameter) = found else { return notFound(request, path) }
        if !route.open, let token, !authorized(request, token) {
            var r = MockResponse.json(.object(["error": .string("admin API needs Authorization: Bearer <token> (or the dashboard's sign-in)")]), status: 401)
            r.headers["WWW-Authenticate"] = "Bearer"
            return r
        }
        do {
            return try route.handle(self, AdminCall(request: request, server: server, parameter: parameter))
        } catch {
            // The shared store is away (a handler throws nothing else): say so, and that it retries.
            return Self.error("\(error); the server reconnects by itself", 503)
        }
    }

    /// `404` listing the endpoints; `405` when the path exists for other methods.
    private func notFound(_ request: MockRequest, _ path: Substring) -> MockResponse {
        let methods = Self.routes.filter { $0.match(nil, path) != nil }.map(\.method)
        if !methods.isEmpty {
            var r = Self.error("\(request.method) is not allowed on \(request.path): \(methods.joined(separator: ", "))", 405)
            r.headers["Allow"] = methods.joined(separator: ", ")
            return r
        }
        return .json(.object([
            "error": .string("no admin endpoint \(request.method) \(request.path)"),
            "endpoints": .array(Self.routes.map { JSONValue.string("\($0.method) \(Self.prefix)\($0.path)") }),
        ]), status: 404)
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
        if let replica = e.replica { o["replica"] = .string(replica) }
        // Bytes that are not UTF-8 (an image upload, protobuf) also come whole, as base64.
        if String(validating: e.body, as: UTF8.self) == nil { o["body_base64"] = .string(Data(e.body).base64EncodedString()) }
        if e.delayMilliseconds > 0 { o["delay_ms"] = .double(e.delayMilliseconds) }
        switch e.fault {
        case .stream(let plan)?:
            o["stream"] = e.stream?.json ?? .object(["kind": .string(plan.kind), "chunks": .integer(0), "ended": .null])
        case .websocket?:
            // The messages both ways, once the socket opened (a plain request got the 426).
            if let transcript = e.stream { o["websocket"] = transcript.json }
        case let fault?:
            o["fault"] = .string(fault.description)
        case nil:
            break
        }
        if let error = e.error { o["error"] = .string(error) }
        if !e.nearMisses.isEmpty { o["near_misses"] = .array(e.nearMisses.map(\.json)) }
        if let contract = e.contract { o["contract"] = contract }
        if let chaos = e.chaos { o["chaos"] = .string(chaos) }
        if !e.outbound.isEmpty { o["outbound"] = .array(e.outbound.map(\.json)) }
        if e.fault == nil || e.responseBodyLength > 0 || !e.responseHeaders.fields.isEmpty { o["response"] = response(e) }
        return .object(o)
    }

    /// The answer as the rule gave it: its header fields, and its body as text when it is
    /// UTF-8, else in base64 (cut to the journal's limit: `body_bytes` is the whole length).
    static func response(_ e: JournalEntry) -> JSONValue {
        var o: [String: JSONValue] = [
            "headers": .object(Dictionary(e.responseHeaders.fields.map { ($0.name.asciiLowercased, JSONValue.string($0.value)) }) { a, b in
                .string((a.stringValue ?? "") + ", " + (b.stringValue ?? "")) }),
            "body_bytes": .integer(Int64(e.responseBodyLength)),
        ]
        if let text = String(validating: e.responseBody, as: UTF8.self) {
            o["body"] = .string(text)
        } else {
            o["body_base64"] = .string(Data(e.responseBody).base64EncodedString())
        }
        if e.responseBody.count < e.responseBodyLength { o["truncated"] = .bool(true) }
        return .object(o)
    }
}

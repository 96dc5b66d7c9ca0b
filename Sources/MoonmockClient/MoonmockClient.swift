import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client for a running `moonmock serve`'s admin API, for the tests that cannot reach the
/// in-process door: an XCUITest drives the app in another process, so it drives the server the
/// app is pointed at. Foundation only (no Lua, no server inside): it builds for UI-test targets.
///
/// ```swift
/// let mm = MoonmockClient(url: URL(string: "http://127.0.0.1:8080")!)
/// try await mm.stub("GET", "/users/7", status: 404, json: ["error": "no such user"])
/// app.launch()   // the app's requests go to the server
/// try await mm.verify("GET", "/users/:id", times: 1)
/// ```
public struct MoonmockClient: Sendable {
    /// The server's base URL (`http://127.0.0.1:8080`).
    public let url: URL
    /// `Authorization: Bearer TOKEN` for a server started with `--admin-token`.
    public let token: String?
    private let session: URLSession

    /// `session`: by default one of its own (`.ephemeral`), so that a process that routes
    /// `URLSession.shared` to mocks still reaches the real server.
    public init(url: URL, token: String? = nil, session: URLSession? = nil) {
        self.url = url
        self.token = token
        self.session = session ?? URLSession(configuration: .ephemeral)
    }

    // MARK: rules

    /// Answers `method path` (a pattern: `/users/:id`) ahead of the script's rules; the rule's id.
    @discardableResult
    public func stub(_ method: String, _ path: String, status: Int = 200, json: (any Encodable)? = nil, text: String? = nil,
                     headers: [String: String] = [:]) async throws -> String {
        var respond: [String: Any] = ["status": status]
        if let json { respond["json"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(AnyEncodable(json)), options: [.fragmentsAllowed]) }
        if let text { respond["text"] = text }
        if !headers.isEmpty { respond["headers"] = headers }
        let rule: [String: Any] = ["method": method, "path": path, "respond": respond]
        return try await addRule(json: String(decoding: JSONSerialization.data(withJSONObject: rule), as: UTF8.self)).first ?? ""
    }

    /// Adds a rule (or an array of them) given as the server's rule JSON; the ids.
    @discardableResult
    public func addRule(json: String) async throws -> [String] {
        let answer = try await call("POST", "/__moonmock/rules", body: Data(json.utf8))
        if let ids = answer["ids"] as? [String] { return ids }
        return (answer["id"] as? String).map { [$0] } ?? []
    }

    /// Every rule in evaluation order, as the server lists them (runtime rules first).
    public func rules() async throws -> [[String: Any]] {
        try await callArray("GET", "/__moonmock/rules")
    }

    public func removeRule(id: String) async throws {
        _ = try await call("DELETE", "/__moonmock/rules/" + Self.escape(id))
    }

    // MARK: journal and verification

    /// Asserts how many requests matched `method` and `pattern`; the count. A failure is a
    /// ``MoonmockClientError`` whose description lists the closest requests and why.
    @discardableResult
    public func verify(_ method: String, _ pattern: String, times: Int) async throws -> Int {
        let body = try JSONSerialization.data(withJSONObject: ["method": method, "pattern": pattern, "times": times])
        let (status, answer) = try await request("POST", "/__moonmock/verify", body: body)
        let object = answer as? [String: Any] ?? [:]
        if status == 200 { return (object["count"] as? Int) ?? 0 }
        guard status == 422 else { throw MoonmockClientError.server(status: status, message: Self.message(object, answer)) }
        var lines = [(object["message"] as? String) ?? "verification failed"]
        for miss in object["near_misses"] as? [[String: Any]] ?? [] {
            lines.append("  closest: \(miss["request"] as? String ?? "?"): " + ((miss["reasons"] as? [String]) ?? []).joined(separator: "; "))
        }
        throw MoonmockClientError.verification(lines.joined(separator: "\n"))
    }

    /// Asserts how often handlers called out (`mock.fetch`, webhooks): by the whole `url` or its
    /// `path`, with `method` and `kind`; the count. A failure lists the calls made.
    @discardableResult
    public func verifyOutbound(url: String? = nil, path: String? = nil, method: String? = nil, kind: String? = nil,
                               times: Int) async throws -> Int {
        var outbound: [String: Any] = [:]
        for (key, value) in [("url", url), ("path", path), ("method", method), ("kind", kind)] { if let value { outbound[key] = value } }
        let body = try JSONSerialization.data(withJSONObject: ["outbound": outbound, "times": times])
        let (status, answer) = try await request("POST", "/__moonmock/verify", body: body)
        let object = answer as? [String: Any] ?? [:]
        if status == 200 { return (object["count"] as? Int) ?? 0 }
        guard status == 422 else { throw MoonmockClientError.server(status: status, message: Self.message(object, answer)) }
        var lines = [(object["message"] as? String) ?? "verification failed"]
        for call in object["calls"] as? [[String: Any]] ?? [] {
            lines.append("  made: \(call["kind"] as? String ?? "") \(call["method"] as? String ?? "") \(call["url"] as? String ?? "")")
        }
        throw MoonmockClientError.verification(lines.joined(separator: "\n"))
    }

    /// Waits until every webhook and `mock.after` function is done: `pending` (0), `sent`, `failed`.
    @discardableResult
    public func flushWebhooks(timeoutMilliseconds: Int = 10_000) async throws -> [String: Any] {
        try await call("POST", "/__moonmock/webhooks/flush?timeout_ms=\(timeoutMilliseconds)", body: Data("{}".utf8))
    }

    /// What the specs (`--spec`, `mock.spec`) say of the requests so far: `operations` (each
    /// with its requests and violations), `uncovered`, `violations`.
    public func contract() async throws -> [String: Any] { try await call("GET", "/__moonmock/contract") }

    /// Throws ``MoonmockClientError/verification(_:)`` listing each violation when a request or
    /// an answer broke a spec since the start or the last reset.
    ///
    /// ```swift
    /// try await mock.assertContractClean()   // in a UI test's tearDown
    /// ```
    public func assertContractClean() async throws {
        let (status, answer) = try await request("POST", "/__moonmock/verify", body: Data(#"{"contract":"clean"}"#.utf8))
        let object = answer as? [String: Any] ?? [:]
        if status == 200 { return }
        guard status == 422 else { throw MoonmockClientError.server(status: status, message: Self.message(object, answer)) }
        var lines = [(object["message"] as? String) ?? "the contract was broken"]
        for v in (object["violations"] as? [[String: Any]] ?? []).prefix(20) {
            for e in v["errors"] as? [[String: Any]] ?? [] {
                let at = e["instance_path"] as? String ?? ""
                lines.append("  #\(v["request_id"] as? Int ?? 0) \(v["operation"] as? String ?? "no operation") \(v["direction"] as? String ?? ""): "
                             + (at.isEmpty ? "" : at + ": ") + (e["message"] as? String ?? ""))
            }
        }
        throw MoonmockClientError.verification(lines.joined(separator: "\n"))
    }

    // MARK: chaos and resources

    /// Switches on a chaos profile the script named (`mock.chaos_profile`) from the next
    /// request, for `durationMilliseconds` or until ``stopChaos()``; what is on now.
    ///
    /// ```swift
    /// try await mock.chaos(profile: "bad-day", durationMilliseconds: 60_000)
    /// ```
    @discardableResult
    public func chaos(profile: String, durationMilliseconds: Double? = nil) async throws -> [String: Any] {
        var body: [String: Any] = ["profile": profile]
        if let durationMilliseconds { body["duration_ms"] = durationMilliseconds }
        return try await call("PUT", "/__moonmock/chaos", body: try JSONSerialization.data(withJSONObject: body))
    }

    /// Switches on chaos settings (`["error_rate": 0.1, "status": 503]`, `latency`, `fault`,
    /// `fault_rate`, `rate_limit`, `path`, `host`).
    @discardableResult
    public func chaos(_ settings: [String: any Sendable], durationMilliseconds: Double? = nil) async throws -> [String: Any] {
        var body: [String: Any] = settings
        if let durationMilliseconds { body["duration_ms"] = durationMilliseconds }
        return try await call("PUT", "/__moonmock/chaos", body: try JSONSerialization.data(withJSONObject: body))
    }

    /// Ends runtime chaos and pauses the script's own until chaos is switched on again.
    @discardableResult
    public func stopChaos() async throws -> [String: Any] { try await call("DELETE", "/__moonmock/chaos") }

    /// Each `mock.resource` collection: `path`, `count`, `items`.
    public func resources() async throws -> [[String: Any]] {
        (try await call("GET", "/__moonmock/resources"))["resources"] as? [[String: Any]] ?? []
    }

    /// The journal, oldest first; `since` gives only the entries recorded after that id.
    public func requests(since: Int? = nil) async throws -> [[String: Any]] {
        try await callArray("GET", "/__moonmock/requests" + (since.map { "?since=\($0)" } ?? ""))
    }

    // MARK: state, switches, lifecycle

    /// A `mock.state` value (as JSON decodes it: `String`, `Int`, `Double`, `Bool`); `nil` when absent.
    public func state(_ key: String) async throws -> Any? {
        let (status, answer) = try await request("GET", "/__moonmock/state/" + Self.escape(key))
        if status == 404 { return nil }
        if status >= 400 { throw MoonmockClientError.server(status: status, message: Self.message(answer as? [String: Any] ?? [:], answer)) }
        return answer
    }

    public func setState(_ key: String, _ value: any Encodable & Sendable) async throws {
        _ = try await call("PUT", "/__moonmock/state/" + Self.escape(key), body: JSONEncoder().encode(AnyEncodable(value)))
    }

    public func deleteState(_ key: String) async throws {
        _ = try await call("DELETE", "/__moonmock/state/" + Self.escape(key))
    }

    /// Makes `variant` the active one of `rule` (`nil`: no stub endpoint active).
    public func switchVariant(_ rule: String, to variant: String?) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["active": variant as Any? ?? NSNull()])
        _ = try await call("PUT", "/__moonmock/variants/" + Self.escape(rule), body: body)
    }

    /// Runtime rules, journal and state cleared; variants back to their defaults.
    public func reset() async throws {
        _ = try await call("POST", "/__moonmock/reset")
    }

    public func health() async throws -> [String: Any] {
        try await call("GET", "/__moonmock/health")
    }

    // MARK: transport

    private func call(_ method: String, _ path: String, body: Data? = nil) async throws -> [String: Any] {
        let (status, answer) = try await request(method, path, body: body)
        let object = answer as? [String: Any] ?? [:]
        if status >= 400 { throw Self.failure(status, object, answer) }
        return object
    }

    private func callArray(_ method: String, _ path: String) async throws -> [[String: Any]] {
        let (status, answer) = try await request(method, path)
        if status >= 400 { throw Self.failure(status, answer as? [String: Any] ?? [:], answer) }
        return answer as? [[String: Any]] ?? []
    }

    private static func failure(_ status: Int, _ object: [String: Any], _ answer: Any?) -> MoonmockClientError {
        if let field = object["field"] as? String { return .rule(field: field, message: message(object, answer)) }
        return .server(status: status, message: message(object, answer))
    }

    private static func message(_ object: [String: Any], _ answer: Any?) -> String {
        (object["error"] as? String) ?? (object["message"] as? String) ?? answer.map { "\($0)" } ?? "no answer"
    }

    private func request(_ method: String, _ path: String, body: Data? = nil) async throws -> (Int, Any?) {
        guard let target = URL(string: url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path) else {
            throw MoonmockClientError.server(status: 0, message: "not a URL: \(url)\(path)")
        }
        var request = URLRequest(url: target, timeoutInterval: 10)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body { request.httpBody = body } else if method != "GET" && method != "DELETE" { request.httpBody = Data("null".utf8) }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let answer = data.isEmpty ? nil : (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) ?? String(decoding: data, as: UTF8.self)
        return (status, answer)
    }

    private static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? s
    }
}

/// What the server refused: a rule (``rule(field:message:)``, `field` names the part at fault),
/// a verification (its description lists the closest requests), or any other call.
public enum MoonmockClientError: Error, CustomStringConvertible, Equatable {
    case server(status: Int, message: String)
    case rule(field: String, message: String)
    case verification(String)

    public var description: String {
        switch self {
        case .server(let status, let message): return "moonmock: \(message) (HTTP \(status))"
        case .rule(_, let message): return "moonmock: \(message)"
        case .verification(let text): return text
        }
    }

    /// The field a refused rule names (`rule.respond.status`); `nil` for other errors.
    public var field: String? {
        if case .rule(let field, _) = self { return field }
        return nil
    }
}

/// Any `Encodable` as one, for `JSONEncoder`.
private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

import Foundation
import MoonmockCore

/// The sessions the dashboard's sign-in opens: random ids, held by the server while it runs.
final class AdminSessions: Sendable {
    private let ids = Locked<Set<String>>([])

    /// A new session id (32 random bytes, hex).
    func open() -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        _ = ids.withLock { $0.insert(id) }
        return id
    }

    func isOpen(_ id: String) -> Bool { ids.withLock { $0.contains(id) } }
    func close(_ id: String) { _ = ids.withLock { $0.remove(id) } }
}

extension AdminAPI {
    static let sessionCookie = "moonmock_admin"

    /// `403` for a `Host` that does not name this server (DNS rebinding), or for a state-changing
    /// request a browser sent from another origin (a page elsewhere posting to the admin API).
    func guardOrigin(_ request: MockRequest, server: MoonmockServer) -> MockResponse? {
        let host = request.host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if !hosts.contains(host) {
            return Self.forbidden("the admin API answers only requests to this server (Host '\(request.host)' is not "
                + "\(hosts.sorted().joined(separator: ", ")); add --admin-host \(request.host.isEmpty ? "NAME" : request.host) to allow it)")
        }
        guard ["POST", "PUT", "PATCH", "DELETE"].contains(request.method), let origin = request.headers["origin"] else { return nil }
        let own = "\(request.scheme)://\(request.headers["host"] ?? "")".lowercased()
        // A page elsewhere may change things only when --cors-origin or mock.cors names its origin.
        if origin.lowercased() != own && server.cors(for: request)?.names(origin) != true {
            return Self.forbidden("the admin API takes changes only from its own origin (\(own)), not from '\(origin)' (--cors-origin \(origin) allows it)")
        }
        return nil
    }

    static func forbidden(_ message: String) -> MockResponse {
        .json(.object(["error": .string(message)]), status: 403)
    }

    /// The bearer token, or an open session's cookie.
    func authorized(_ request: MockRequest, _ token: String) -> Bool {
        if let header = request.headers["authorization"], Self.constantTimeEqual(header, "Bearer \(token)") { return true }
        if let session = request.cookies[Self.sessionCookie], sessions.isOpen(session) { return true }
        return false
    }

    /// `POST /__moonmock/login` with `{"token": "…"}`: a session cookie for the dashboard.
    func login(_ request: MockRequest) -> MockResponse {
        guard let token else { return .json(.object(["ok": .bool(true), "token_required": .bool(false)])) }
        guard let given = request.json?["token"]?.stringValue else {
            return .json(.object(["error": .string(#"send {"token": "the --admin-token"}"#)]), status: 400)
        }
        guard Self.constantTimeEqual(given, token) else {
            return .json(.object(["error": .string("wrong token")]), status: 401)
        }
        var response = MockResponse.json(.object(["ok": .bool(true)]))
        // HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it.
        response.headers.add("Set-Cookie", "\(Self.sessionCookie)=\(sessions.open()); Path=\(Self.prefix); HttpOnly; SameSite=Strict"
                             + (request.scheme == "https" ? "; Secure" : ""))
        return response
    }

    /// `POST /__moonmock/logout`: ends the session of the cookie sent.
    func logout(_ request: MockRequest) -> MockResponse {
        if let session = request.cookies[Self.sessionCookie] { sessions.close(session) }
        var response = MockResponse.json(.object(["ok": .bool(true)]))
        response.headers.add("Set-Cookie", "\(Self.sessionCookie)=; Path=\(Self.prefix); Max-Age=0; HttpOnly; SameSite=Strict")
        return response
    }

    /// Compares without stopping at the first difference (a token's prefix cannot be timed out of it).
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) { difference |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0) }
        return difference == 0
    }
}

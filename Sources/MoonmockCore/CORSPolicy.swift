/// Cross-origin access for browser apps calling the socket server (`moonmock serve --cors`,
/// `mock.cors{...}`): preflights are answered, and every answer to a request with an allowed
/// `Origin` says so (`Access-Control-Allow-Origin` naming that origin, the response's fields
/// exposed).
///
/// ```swift
/// let cors = CORSPolicy(origins: ["http://localhost:3000"], credentials: true)
/// cors.preflight(request)        // a 204 for an OPTIONS with Access-Control-Request-Method
/// cors.decorate(&response, for: request)
/// ```
public struct CORSPolicy: Sendable, Equatable {
    /// The origins allowed (`scheme://host[:port]`); empty: any.
    public var origins: [String]
    /// Request fields a preflight may ask for; empty: whatever it asks.
    public var headers: [String]
    /// `Access-Control-Allow-Credentials: true` (cookies and `Authorization` from the browser).
    public var credentials: Bool
    /// How long a browser may keep a preflight's answer.
    public var maxAgeSeconds: Int

    public init(origins: [String] = [], headers: [String] = [], credentials: Bool = false, maxAgeSeconds: Int = 600) {
        self.origins = origins.map { $0.lowercased() }
        self.headers = headers
        self.credentials = credentials
        self.maxAgeSeconds = maxAgeSeconds
    }

    /// Whether a page at `origin` may read the answers.
    public func allows(_ origin: String) -> Bool { origins.isEmpty || origins.contains(origin.lowercased()) }

    /// Whether `origin` is named in ``origins`` (not only allowed because any is): the admin API
    /// takes changes from a page elsewhere only then.
    public func names(_ origin: String) -> Bool { origins.contains(origin.lowercased()) }

    /// Whether `request` is a browser's preflight (`OPTIONS` with `Origin` and
    /// `Access-Control-Request-Method`).
    public static func isPreflight(_ request: MockRequest) -> Bool {
        request.method == "OPTIONS" && request.headers["origin"] != nil && request.headers["access-control-request-method"] != nil
    }

    /// The answer to a preflight: `204` with what is allowed, or `403` saying which origins are.
    public func preflight(_ request: MockRequest) -> MockResponse {
        let origin = request.headers["origin"] ?? ""
        guard allows(origin) else {
            return .json(.object(["error": .string("CORS: origin '\(origin)' is not allowed (allowed: \(origins.joined(separator: ", ")))")]), status: 403)
        }
        var response = MockResponse(status: 204)
        response.headers.add("Access-Control-Allow-Origin", origin)
        response.headers.add("Access-Control-Allow-Methods", request.headers["access-control-request-method"].map {
            Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", $0.asciiUppercased]).sorted().joined(separator: ", ")
        } ?? "GET")
        let asked = request.headers["access-control-request-headers"]
        if let allowed = headers.isEmpty ? asked : headers.joined(separator: ", "), !allowed.isEmpty {
            response.headers.add("Access-Control-Allow-Headers", allowed)
        }
        if credentials { response.headers.add("Access-Control-Allow-Credentials", "true") }
        response.headers.add("Access-Control-Max-Age", String(maxAgeSeconds))
        response.headers.add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
        return response
    }

    /// Adds the CORS fields to an answer of a request with an allowed `Origin`; `false` (and
    /// nothing changed) otherwise.
    @discardableResult
    public func decorate(_ response: inout MockResponse, for request: MockRequest) -> Bool {
        // A browser sends `Origin` with a same-origin POST too: that is no cross-origin request.
        guard let origin = request.headers["origin"], allows(origin), response.headers["access-control-allow-origin"] == nil,
              !origin.equalsIgnoringASCIICase(request.origin) else {
            return false
        }
        // Every field the answer has, and the Date the transport adds: a page reads them all.
        var exposed = response.headers.fields.map(\.name).filter { !$0.lowercased().hasPrefix("access-control-") }
        if !exposed.contains(where: { $0.lowercased() == "date" }) { exposed.append("Date") }
        response.headers.add("Access-Control-Allow-Origin", origin)
        response.headers.add("Access-Control-Expose-Headers", exposed.joined(separator: ", "))
        if credentials { response.headers.add("Access-Control-Allow-Credentials", "true") }
        response.headers.add("Vary", "Origin")
        return true
    }
}

import Foundation

/// A request a handler sends (`mock.fetch`, `mock.webhook`, `mock.proxy` with a `transform`).
///
/// ```swift
/// let request = OutboundRequest(method: "POST", url: "http://127.0.0.1:9000/hooks", body: Array("{}".utf8))
/// ```
public struct OutboundRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The whole transfer's limit, in milliseconds.
    public var timeoutMilliseconds: Int
    /// Whether the server's certificate goes unchecked (`insecure = true`).
    public var insecure: Bool
    /// A PEM file of certificate authorities to trust instead of the system's (`ca = "ca.pem"`).
    public var caFile: String?
    /// The request span this call is sent for, and what sends it (`fetch`, `webhook`, `proxy`):
    /// a traced client (``TracedOutbound``) records the call as that span's child and tells the
    /// receiver in `traceparent`.
    public var trace: OutboundTrace?

    public init(method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                timeoutMilliseconds: Int = 10_000, insecure: Bool = false, caFile: String? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
        self.insecure = insecure
        self.caFile = caFile
    }

    /// `GET http://…`: how messages name it.
    public var summary: String { "\(method) \(url)" }
}

/// What came back: the status, the header fields and the body as sent (no content coding undone).
public struct OutboundResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why no answer came: refused, timed out, a TLS failure, cancelled. `description` is the
/// transport's own words.
public struct OutboundFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Sends outbound requests without holding a thread per request: libcurl's multi interface on
/// the server (``MoonmockProxy``), `URLSession` in-process. `send` returns at once; `completion`
/// runs later on the client's thread. The returned closure cancels (no completion then).
public protocol OutboundClient: Sendable {
    func send(_ request: OutboundRequest, completion: @escaping @Sendable (Result<OutboundResponse, OutboundFailure>) -> Void) -> @Sendable () -> Void
}

/// One outbound call as the journal keeps it: what was sent, by what, and how it ended.
public struct OutboundCall: Sendable, Equatable {
    /// `fetch`, `webhook` or `proxy`.
    public var kind: String
    public var method: String
    public var url: String
    /// The final status; `nil` when no answer came (`error` says why).
    public var status: Int?
    public var error: String?
    /// Milliseconds from the first attempt's start to the last one's end.
    public var durationMilliseconds: Double
    /// Attempts made (webhooks retry).
    public var attempts: Int
    /// Seconds since 1970 when the (first) attempt started.
    public var startedAt: Double
    /// The request body as sent (cut to 4 KiB), for the inspector.
    public var body: String

    public init(kind: String, request: OutboundRequest, status: Int?, error: String?, durationMilliseconds: Double, attempts: Int = 1,
                startedAt: Double) {
        self.kind = kind
        method = request.method
        url = request.url
        self.status = status
        self.error = error
        self.durationMilliseconds = durationMilliseconds
        self.attempts = attempts
        self.startedAt = startedAt
        body = String(decoding: request.body.prefix(4096), as: UTF8.self)
    }

    /// The journal's `outbound` member.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "kind": .string(kind), "method": .string(method), "url": .string(url),
            "status": status.map { .integer(Int64($0)) } ?? .null,
            "duration_ms": .double((durationMilliseconds * 10).rounded() / 10), "attempts": .integer(Int64(attempts)),
            "started_at": .double(startedAt),
        ]
        if let error { o["error"] = .string(error) }
        if !body.isEmpty { o["body"] = .string(body) }
        return .object(o)
    }
}

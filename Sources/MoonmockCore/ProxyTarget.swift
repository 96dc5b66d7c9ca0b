/// Where `mock.proxy(base_url, opts)` forwards a request: the door that delivers the response
/// sends the request there instead (the server through libcurl, in-process through the
/// pass-through session) and answers with what comes back.
///
/// ```swift
/// var r = MockResponse()
/// r.proxy = ProxyTarget(base: "https://api.example.com", timeoutMilliseconds: 5000)
/// ```
public final class ProxyTarget: Sendable, Equatable, CustomStringConvertible {
    /// Scheme, host, port and an optional path prefix: `https://api.example.com/v2`.
    public let base: String
    /// Request fields to add or replace (`opts.headers`); a field given as `""` is removed.
    public let headers: [(name: String, value: String)]
    public let timeoutMilliseconds: Int
    /// Skip the verification of the upstream's TLS certificate (`opts.insecure`).
    public let insecure: Bool
    /// The journal entry of the request being forwarded (set on a per-request copy, see
    /// ``forJournal(_:)``): the door records the upstream's status there.
    public let journalID: Int?

    public init(base: String, headers: [(name: String, value: String)] = [], timeoutMilliseconds: Int = 30_000, insecure: Bool = false,
                journalID: Int? = nil) {
        self.journalID = journalID
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.headers = headers
        self.timeoutMilliseconds = timeoutMilliseconds
        self.insecure = insecure
    }

    /// This target for one request, whose journal entry is `id`.
    public func forJournal(_ id: Int) -> ProxyTarget {
        ProxyTarget(base: base, headers: headers, timeoutMilliseconds: timeoutMilliseconds, insecure: insecure, journalID: id)
    }

    /// The upstream URL for `request`: the base, then the request's path and query.
    public func url(for request: MockRequest) -> String {
        base + request.path + (request.rawQuery.map { "?" + $0 } ?? "")
    }

    /// The request's fields as the upstream gets them: hop-by-hop fields and `Host` dropped
    /// (the client library names the upstream's host), `headers` applied.
    public func forwardedHeaders(_ request: MockRequest) -> HTTPHeaders {
        var out = HTTPHeaders()
        let replaced = Set(headers.map { $0.name.lowercased() })
        for field in request.headers {
            let name = field.name.lowercased()
            if Self.hopByHop.contains(name) || replaced.contains(name) { continue }
            out.add(field.name, field.value)
        }
        for field in headers where !field.value.isEmpty { out.add(field.name, field.value) }
        return out
    }

    /// Fields that belong to one connection, not to the message (RFC 9110 §7.6.1), and those the
    /// transport sets itself.
    public static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                                               "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
                                               "host", "content-length", "expect"]

    public var description: String { "proxy to \(base)" }

    public static func == (a: ProxyTarget, b: ProxyTarget) -> Bool {
        a.base == b.base && a.timeoutMilliseconds == b.timeoutMilliseconds && a.insecure == b.insecure
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}

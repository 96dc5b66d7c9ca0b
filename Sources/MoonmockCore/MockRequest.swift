import Foundation

/// An HTTP request as both transports hand it to the ``Engine``.
///
/// ```swift
/// let req = MockRequest(method: "POST", url: "http://localhost/graphql",
///                       headers: ["Content-Type": "application/json"],
///                       body: Array(#"{"operationName":"GetUser"}"#.utf8))
/// req.json?["operationName"]   // .string("GetUser")
/// ```
public struct MockRequest: Sendable {
    /// The method as sent: methods are case-sensitive (RFC 9110 §9.1), so `get` is not `GET`.
    public var method: String { storage.method }
    public var scheme: String { storage.scheme }
    /// Lower-cased host, without the port.
    public var host: String { storage.host }
    /// The port when the URL or `Host` header names one.
    public var port: Int? { storage.port }
    /// `scheme://host[:port]`, as the client addressed the server (its `Host`): what a URL
    /// pointing back at whoever answers starts with (`{{req.origin}}` in templates).
    public var origin: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(h)" + (port.map { ":\($0)" } ?? "")
    }
    /// The path as received (percent-encoded), without the query; never empty.
    public var path: String { storage.path }
    /// The query string without `?`, or `nil`.
    public var rawQuery: String? { storage.rawQuery }
    public var headers: HTTPHeaders { storage.headers }
    /// The raw body bytes.
    public var body: [UInt8] { storage.body }
    /// The journal id, assigned by the engine.
    public var id: Int = 0
    /// The request's span while it is answered, when the engine traces (``Engine/tracer``).
    public var span: OpenSpan? { storage.span }

    /// One reference for all fields, so that passing a request around costs one retain.
    private var storage: Storage

    /// Builds a request from an absolute URL (`http://host:port/path?query`) or an
    /// origin-form target (`/path?query`, host taken from the `Host` header or `localhost`).
    public init(method: String, url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        storage = Storage(method: method, url: url, headers: headers, body: body)
    }

    /// Builds a request from what a server knows: the scheme of its listener, the `Host`
    /// header (or its own address) and the request target (`/path?query`) as received.
    ///
    /// The header list and body are taken over (`consuming`): a transport that built them for
    /// this request hands them on without a retain and a release each.
    public init(method: String, scheme: String, authority: String, target: String, headers: consuming HTTPHeaders, body: consuming [UInt8]) {
        let (host, port) = authority.withUTF8Bytes { MockRequest.splitHostPort($0) }
        storage = Storage(method: method, scheme: scheme, host: host, port: port, target: target, headers: headers, body: body)
    }

    /// The same, with the authority already split by ``hostAndPort(of:)``: a server that
    /// sees the same `Host` on request after request splits it once.
    ///
    /// ```swift
    /// let (host, port) = MockRequest.hostAndPort(of: "api.example.com:8080")
    /// let req = MockRequest(method: "GET", scheme: "http", host: host, port: port, target: "/users/7",
    ///                       headers: HTTPHeaders(), body: [])
    /// req.port   // 8080
    /// ```
    public init(method: String, scheme: String, host: String, port: Int?, target: String, headers: consuming HTTPHeaders,
                body: consuming [UInt8]) {
        storage = Storage(method: method, scheme: scheme, host: host, port: port, target: target, headers: headers, body: body)
    }

    /// A server's request, built in the storage of `spare` when nothing else holds that any
    /// more (the last request the server answered, usually): its header lines and body are
    /// copied into the blocks the last request had, so a request on a keep-alive connection
    /// allocates nothing for them. Otherwise a new request. `spare` is left `nil`; give the
    /// request back to it once answered.
    ///
    /// ```swift
    /// var spare: MockRequest?
    /// let lines = Array("Host: example.com\r\n".utf8)
    /// let req = lines.withUnsafeBytes { l in
    ///     MockRequest.recycling(&spare, method: "GET", scheme: "http", host: "example.com", port: nil,
    ///                           target: "/users/7", headerLines: l, body: UnsafeRawBufferPointer(start: nil, count: 0))
    /// }
    /// req.path   // "/users/7"
    /// spare = req   // the next request reuses its storage
    /// ```
    /// `namesRange`: whether the parser saw a `Range` field (``ByteRanges`` looks only then).
    package static func recycling(_ spare: inout MockRequest?, method: String, scheme: String, host: String, port: Int?,
                                  target: String, headerLines: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer,
                                  namesRange: Bool = true) -> MockRequest {
        if var request = spare.take(), isKnownUniquelyReferenced(&request.storage) {
            request.storage.refill(method: method, scheme: scheme, host: host, port: port, target: target,
                                   headerLines: headerLines, body: body)
            request.storage.namesRange = namesRange
            request.id = 0
            return request
        }
        let request = MockRequest(method: method, scheme: scheme, host: host, port: port, target: target,
                                  headers: HTTPHeaders(validatedLines: Array(headerLines)), body: Array(body))
        request.storage.namesRange = namesRange
        return request
    }

    /// `false` only when the transport knows the request has no `Range` field.
    var mayNameRange: Bool { storage.namesRange }

    /// Set by the engine as it takes the request (its one holder then).
    func attach(_ span: OpenSpan) { storage.span = span }

    /// `host[:port]` split as requests split it: host lowercased, bracketed IPv6 literals kept
    /// whole, `user@` dropped, a port of digits only.
    public static func hostAndPort(of authority: String) -> (host: String, port: Int?) {
        authority.withUTF8Bytes { splitHostPort($0) }
    }

    /// Splits `host[:port]`, handling bracketed IPv6 literals and dropping `user@`.
    static func splitHostPort(_ authority: Substring) -> (String, Int?) {
        if let result = authority.utf8.withContiguousStorageIfAvailable({ splitHostPort($0) }) { return result }
        var authority = authority
        return authority.withUTF8 { splitHostPort($0) }
    }

    static func splitHostPort(_ all: UnsafeBufferPointer<UInt8>) -> (String, Int?) {
        // Index loops over the bytes: this runs for every request a server receives.
        guard let base = all.baseAddress else { return ("", nil) }
        let count = all.count
        var start = count
        while start > 0 && base[start - 1] != 0x40 { start -= 1 }   // after the last '@', if any
        var hostEnd = count
        var portStart = -1
        var close = start
        if start < count && base[start] == 0x5B {                    // '[' IPv6 literal ']'
            while close < count && base[close] != 0x5D { close += 1 }
        }
        if start < count && base[start] == 0x5B && close < count {
            hostEnd = close + 1
            if hostEnd < count && base[hostEnd] == 0x3A { portStart = hostEnd + 1 }
        } else {
            var colon = count
            while colon > start && base[colon - 1] != 0x3A { colon -= 1 }
            if colon > start { hostEnd = colon - 1; portStart = colon }
        }
        var upper = false
        for i in start..<hostEnd where base[i] >= 0x41 && base[i] <= 0x5A { upper = true; break }
        let hostBytes = UnsafeBufferPointer(start: base + start, count: hostEnd - start)
        let host = upper
            ? String(decoding: hostBytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
            : String(decoding: hostBytes, as: UTF8.self)
        // Digits only, as in a URL; more than 9 digits is no port.
        guard portStart >= 0, portStart < count, count - portStart <= 9 else { return (host, nil) }
        var port = 0
        for i in portStart..<count {
            guard base[i] >= 0x30 && base[i] <= 0x39 else { return (host, nil) }
            port = port * 10 + Int(base[i] - 0x30)
        }
        return (host, port)
    }

    /// The absolute URL, with the port only when it is not the scheme's default.
    public var url: String {
        var s = scheme + "://" + host
        if let port, !(scheme == "http" && port == 80) && !(scheme == "https" && port == 443) { s += ":\(port)" }
        s += path
        if let rawQuery { s += "?" + rawQuery }
        return s
    }

    /// Path segments, percent-decoded, without empty segments from a trailing slash.
    public var pathSegments: [String] {
        if let s = storage.segments { return s }
        // Split on the UTF-8 bytes: Character-based splitting is far slower and '/' is ASCII.
        var segments: [String] = []
        let bytes = path.utf8
        var start = bytes.startIndex
        var i = start
        while true {
            if i == bytes.endIndex || bytes[i] == UInt8(ascii: "/") {
                if start < i {
                    let piece = Substring(bytes[start..<i])
                    segments.append(piece.utf8.contains(UInt8(ascii: "%")) ? PercentDecoding.decode(piece) : String(piece))
                }
                if i == bytes.endIndex { break }
                start = bytes.index(after: i)
            }
            i = bytes.index(after: i)
        }
        storage.segments = segments
        return segments
    }

    /// Query items in order, percent-decoded (`+` is a space).
    public var queryItems: [(name: String, value: String?)] {
        if let q = storage.query { return q }
        var items: [(name: String, value: String?)] = []
        for part in (rawQuery ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            if let eq = part.firstIndex(of: "=") {
                items.append((PercentDecoding.decode(part[..<eq], plusAsSpace: true),
                              PercentDecoding.decode(part[part.index(after: eq)...], plusAsSpace: true)))
            } else {
                items.append((PercentDecoding.decode(part, plusAsSpace: true), nil))
            }
        }
        storage.query = items
        return items
    }

    /// The first value of a query item; an item without `=` has the value `""`.
    public func query(_ name: String) -> String? {
        for item in queryItems where item.name == name { return item.value ?? "" }
        return nil
    }

    /// Cookies from the `Cookie` headers.
    public var cookies: [String: String] {
        var out: [String: String] = [:]
        for header in headers.values("cookie") {
            for pair in header.split(separator: ";") {
                let p = pair.drop(while: { $0 == " " })
                guard let eq = p.firstIndex(of: "=") else { continue }
                let name = String(p[..<eq])
                if out[name] == nil { out[name] = String(p[p.index(after: eq)...]) }
            }
        }
        return out
    }

    /// The body parsed as JSON (once, then cached), or `nil` when it is not JSON.
    public var json: JSONValue? {
        if let parsed = storage.json { return parsed }
        let parsed: JSONValue? = body.isEmpty ? nil : try? JSONValue(parsing: body)
        storage.json = .some(parsed)
        return parsed
    }

    /// The `operationName` of a GraphQL body that is a JSON object, read without decoding the
    /// rest of the body (cached). `nil` for other bodies.
    public var graphQLOperationName: String? {
        if let cached = storage.operationName { return cached }
        let name: String?
        if let json = storage.json {
            name = json?["operationName"]?.stringValue
        } else {
            name = body.first(where: { $0 > 0x20 }) == UInt8(ascii: "{") ? JSONValue.topLevelString("operationName", in: body) : nil
        }
        storage.operationName = .some(name)
        return name
    }

    /// Whether the body has been decoded as JSON already (then ``json`` costs nothing).
    public var hasDecodedJSON: Bool { storage.json != nil }

    /// Whether the body starts like a JSON array (a GraphQL batch), without decoding it.
    public var bodyLooksLikeJSONArray: Bool { body.first(where: { $0 > 0x20 }) == UInt8(ascii: "[") }

    /// The body as text (invalid UTF-8 repaired).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The request's fields and a memo of derived values. The fields change only while nothing
    /// else holds the storage (``MockRequest/recycling(_:method:scheme:host:port:target:headerLines:body:)``);
    /// the memo is filled by the one thread handling the request. No run-time exclusivity checks:
    /// nothing can be reading a field the one holder is changing.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var span: OpenSpan?
        /// Set by a transport that parsed the fields (``MockRequest/recycling(_:method:scheme:host:port:target:headerLines:body:namesRange:)``).
        var namesRange = true
        init(method: String, scheme: String, host: String, port: Int?, target: String, headers: consuming HTTPHeaders,
             body: consuming [UInt8]) {
            self.method = Self.method(method)
            self.scheme = scheme
            self.headers = headers
            self.body = body
            self.host = host
            self.port = port
            self.target = target
            (path, rawQuery) = Self.split(target)
        }

        /// The same fields as `init` gives them, in this storage; the memo is forgotten.
        func refill(method: String, scheme: String, host: String, port: Int?, target: String,
                    headerLines: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
            self.method = Self.method(method)
            self.scheme = scheme
            self.host = host
            self.port = port
            // A client asking for the same target again (the parser hands back the same string).
            if target != self.target {
                self.target = target
                (path, rawQuery) = Self.split(target)
            }
            headers.replaceValidatedLines(headerLines)
            // A large body's block is let go rather than kept for requests that need little.
            if self.body.capacity > Self.keptBodyCapacity && body.count <= Self.keptBodyCapacity {
                self.body = Array(body)
            } else {
                self.body.removeAll(keepingCapacity: true)
                self.body.append(contentsOf: body)
            }
            segments = nil
            query = nil
            json = nil
            operationName = nil
            span = nil
        }

        private static let keptBodyCapacity = 64 << 10

        /// The method as sent (never rewritten: RFC 9110 §9.1 makes methods case-sensitive).
        @inline(__always)
        private static func method(_ method: String) -> String { method }

        /// The path (with a leading `/`) and the query of an origin-form target; a fragment is dropped.
        private static func split(_ target: String) -> (path: String, rawQuery: String?) {
            // Where the path ends and the query lies, found with memchr in the target's bytes.
            let (pathEnd, query) = target.withUTF8Bytes { b -> (Int, Range<Int>?) in
                guard let base = b.baseAddress else { return (0, nil) }
                var end = b.count
                if let hash = memchr(base, 0x23, end) { end = UnsafeRawPointer(hash) - UnsafeRawPointer(base) }
                guard let q = memchr(base, 0x3F, end) else { return (end, nil) }
                let at = UnsafeRawPointer(q) - UnsafeRawPointer(base)
                return (at, (at + 1)..<end)
            }
            let b = target.utf8
            let rawQuery = query.map { String(Substring(b[b.index(b.startIndex, offsetBy: $0.lowerBound)..<b.index(b.startIndex, offsetBy: $0.upperBound)])) }
            // A target that is all path is the path itself: no copy.
            let p = pathEnd == b.count ? target : String(Substring(b.prefix(pathEnd)))
            return (p.utf8.first == UInt8(ascii: "/") ? p : "/" + p, rawQuery)
        }

        @exclusivity(unchecked) private(set) var method: String
        @exclusivity(unchecked) private(set) var scheme: String
        @exclusivity(unchecked) private(set) var host: String
        @exclusivity(unchecked) private(set) var port: Int?
        @exclusivity(unchecked) private(set) var path: String
        @exclusivity(unchecked) private(set) var rawQuery: String?
        @exclusivity(unchecked) private(set) var headers: HTTPHeaders
        @exclusivity(unchecked) private(set) var body: [UInt8]
        /// The origin-form target `path` and `rawQuery` were split from (`nil`: from a URL).
        private var target: String?
        var segments: [String]?
        var query: [(name: String, value: String?)]?
        var json: JSONValue??
        var operationName: String??

        init(method: String, url: String, headers: HTTPHeaders, body: [UInt8]) {
            self.method = method
            self.headers = headers
            self.body = body
            // Byte-level parsing, in place: this runs for every request of both transports.
            var url = url
            let parts = url.withUTF8 { b -> (String, String, Int?, String?, String) in
                func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self) }
                var i = 0
                var schemeEnd: Int?
                while i + 2 < b.count, b[i] != UInt8(ascii: "/"), b[i] != UInt8(ascii: "?") {
                    if b[i] == UInt8(ascii: ":"), b[i + 1] == UInt8(ascii: "/"), b[i + 2] == UInt8(ascii: "/") { schemeEnd = i; break }
                    i += 1
                }
                var rest = 0
                let scheme: String
                let host: String
                let port: Int?
                if let schemeEnd {
                    scheme = text(0..<schemeEnd).asciiLowercased
                    let authorityStart = schemeEnd + 3
                    var authorityEnd = authorityStart
                    while authorityEnd < b.count, b[authorityEnd] != UInt8(ascii: "/"), b[authorityEnd] != UInt8(ascii: "?"),
                          b[authorityEnd] != UInt8(ascii: "#") { authorityEnd += 1 }
                    (host, port) = MockRequest.splitHostPort(UnsafeBufferPointer(rebasing: b[authorityStart..<authorityEnd]))
                    rest = authorityEnd
                } else {
                    scheme = "http"
                    (host, port) = MockRequest.splitHostPort(Substring(headers["host"] ?? "localhost"))
                }
                var end = b.count
                if let hash = b[rest...].firstIndex(of: UInt8(ascii: "#")) { end = hash }
                var rawQuery: String?
                if let q = b[rest..<end].firstIndex(of: UInt8(ascii: "?")) {
                    rawQuery = text((q + 1)..<end)
                    end = q
                }
                return (scheme, host, port, rawQuery, rest < end ? text(rest..<end) : "/")
            }
            (scheme, host, port, rawQuery) = (parts.0, parts.1, parts.2, parts.3)
            let p = parts.4
            path = p.utf8.first == UInt8(ascii: "/") ? p : "/" + p
        }
    }
}

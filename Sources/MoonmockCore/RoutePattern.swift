/// A rule's URL pattern: path segments with `:name` / `{name}` parameters and a trailing
/// `*rest` / `*` wildcard, optionally pinned to a scheme, host and port by a full URL.
///
/// ```swift
/// let p = try RoutePattern("https://api.example.com/users/:id")
/// p.match(MockRequest(method: "GET", url: "https://api.example.com/users/7"))?["id"]  // "7"
/// ```
public struct RoutePattern: Sendable, Equatable, CustomStringConvertible {
    public enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        /// Matches the rest of the path (zero or more segments); the name may be empty.
        case rest(String)
    }

    public let segments: [Segment]

    /// The names of the pattern's parameters (`:id`, `{id}`, `*rest`), in order.
    public var parameterNames: [String] {
        segments.compactMap { segment in
            switch segment {
            case .parameter(let name): return name
            case .rest(let name): return name.isEmpty ? nil : name
            case .literal: return nil
            }
        }
    }
    public let scheme: String?
    public let host: String?
    public let port: Int?
    /// The text the pattern was written as.
    public let source: String

    /// A pattern that could not be parsed.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(_ source: String) throws {
        self.source = source
        var path = Substring(source)
        if let r = path.range(of: "://") {
            let scheme = String(path[..<r.lowerBound]).asciiLowercased
            self.scheme = scheme.isEmpty ? nil : scheme
            let rest = path[r.upperBound...]
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            let (h, p) = MockRequest.splitHostPort(rest[..<end])
            host = h.isEmpty ? nil : h
            port = p
            path = rest[end...]
        } else {
            scheme = nil; host = nil; port = nil
        }
        if path.contains("?") {
            throw ParseError(description: "pattern '\(source)' contains a query string; match query items with query = { ... }")
        }
        if path.isEmpty { path = "/" }
        guard path.hasPrefix("/") || path == "*" else {
            throw ParseError(description: "pattern '\(source)' must start with '/' (or be a full URL)")
        }
        var segments: [Segment] = []
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        for (n, part) in parts.enumerated() {
            let isLast = n == parts.count - 1
            if part.hasPrefix("*") {
                guard isLast else { throw ParseError(description: "pattern '\(source)': '\(part)' must be the last segment") }
                segments.append(.rest(String(part.dropFirst())))
            } else if part.hasPrefix(":") && part.count > 1 {
                segments.append(.parameter(String(part.dropFirst())))
            } else if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                segments.append(.parameter(String(part.dropFirst().dropLast())))
            } else {
                segments.append(.literal(PercentDecoding.decode(part)))
            }
        }
        self.segments = segments
    }

    public var description: String { source }

    /// Whether `path`, read as a pattern, matches only itself: no segment is a `:name`, a
    /// `{name}` or a `*rest` (what a recorded path can be written as).
    public static func isLiteral(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.contains("?") && !path.contains("://") && path.split(separator: "/").allSatisfy { p in
            !(p.hasPrefix("*") || (p.hasPrefix(":") && p.count > 1) || (p.hasPrefix("{") && p.hasSuffix("}") && p.count > 2))
        }
    }

    /// The parameters when `request` matches (path, and scheme/host/port when pinned), else `nil`.
    public func match(_ request: MockRequest) -> [String: String]? {
        guard originMatches(request) == nil else { return nil }
        return request.withPathSegments { matchPath($0)?.dictionary }
    }

    /// ``match(_:)`` with the request's segments already split (the engine splits them once).
    func match(_ request: MockRequest, _ path: PathSegments) -> RouteCaptures? {
        guard originMatches(request) == nil else { return nil }
        return matchPath(path)
    }

    /// Matches segments read in place, building a `String` only for each parameter.
    func matchPath(_ path: PathSegments) -> RouteCaptures? {
        var params = RouteCaptures()
        var i = 0
        // Indexed, not iterated: an iterator would retain the pattern's array, whose reference
        // count every worker thread shares.
        for k in segments.indices {
            switch segments[k] {
            case .literal(let s):
                guard i < path.count, path.segment(i, equals: s) else { return nil }
            case .parameter(let name):
                guard i < path.count else { return nil }
                params.append(name, path.string(i))
            case .rest(let name):
                if !name.isEmpty { params.append(name, path.joined(from: i)) }
                return params
            }
            i += 1
        }
        return i == path.count ? params : nil
    }

    /// `nil` when the pinned scheme/host/port accept the request, else the reason they do not.
    public func originMatches(_ request: MockRequest) -> String? {
        if let scheme, scheme != request.scheme { return "scheme: expected \(scheme), got \(request.scheme)" }
        if let host, host != request.host { return "host: expected \(host), got \(request.host)" }
        if let port, port != request.effectivePort {
            return "port: expected \(port), got \(request.effectivePort.map(String.init) ?? "none")"
        }
        return nil
    }

    /// Matches percent-decoded path segments, returning the parameters.
    public func matchPath(_ path: [String]) -> [String: String]? {
        var params: [String: String] = [:]
        var i = 0
        for segment in segments {
            switch segment {
            case .literal(let s):
                guard i < path.count, path[i] == s else { return nil }
            case .parameter(let name):
                guard i < path.count else { return nil }
                params[name] = path[i]
            case .rest(let name):
                if !name.isEmpty { params[name] = path[i...].joined(separator: "/") }
                return params
            }
            i += 1
        }
        return i == path.count ? params : nil
    }
}

extension MockRequest {
    /// The port, or the scheme's default when none is given.
    public var effectivePort: Int? { port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) }
}

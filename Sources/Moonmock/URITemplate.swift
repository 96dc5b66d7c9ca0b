import MoonmockCore

/// An RFC 6570 level-1 URI template used as a matcher: `{name}` matches one value (no `/`,
/// `?` or `#`) and captures it. A template that starts with `/` matches the path of any host;
/// one with a scheme or `//host` must match the URL's origin too. A `?` part matches the
/// query string exactly (after expansion).
///
/// ```swift
/// let t = URITemplate("/{user}/{repo}")
/// t.match(request)   // ["user": "apple", "repo": "swift"] for https://github.test/apple/swift
/// ```
public struct URITemplate: Sendable, CustomStringConvertible {
    enum Token: Sendable, Equatable {
        case literal([UInt8])
        case variable(String)
    }

    let tokens: [Token]
    let pathOnly: Bool
    public let description: String

    public init(_ template: String) {
        description = template
        pathOnly = template.hasPrefix("/")
        var tokens: [Token] = []
        var literal: [UInt8] = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            literal += Array(rest[..<open].utf8)
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            if !literal.isEmpty { tokens.append(.literal(literal)); literal = [] }
            tokens.append(.variable(String(rest[rest.index(after: open)..<close])))
            rest = rest[rest.index(after: close)...]
        }
        literal += Array(rest.utf8)
        if !literal.isEmpty { tokens.append(.literal(literal)) }
        self.tokens = tokens
    }

    /// The captured variables when `request` matches, else `nil`.
    public func match(_ request: MockRequest) -> [String: String]? {
        let hasQuery = tokens.contains { if case .literal(let l) = $0 { return l.contains(UInt8(ascii: "?")) } else { return false } }
        var target = request.path + (hasQuery ? request.rawQuery.map { "?" + $0 } ?? "" : "")
        if !pathOnly {
            var authority = request.host
            if let port = request.port { authority += ":\(port)" }
            let schemeless = description.hasPrefix("//")
            target = (schemeless ? "//" : request.scheme + "://") + authority + target
        }
        var captures: [String: String] = [:]
        var failed = Set<Int>()
        guard Self.match(tokens[...], Array(target.utf8)[...], &captures, &failed) else { return nil }
        return captures.mapValues { PercentDecoding.decode($0) }
    }

    /// Whether `tokens` match all of `input`, filling `captures`. `failed` remembers the (token,
    /// position) pairs known not to match: adjacent variables (`{a}{b}{c}`) would otherwise try
    /// every split of the segment, exponentially many (found by fuzzing).
    private static func match(_ tokens: ArraySlice<Token>, _ input: ArraySlice<UInt8>, _ captures: inout [String: String],
                              _ failed: inout Set<Int>) -> Bool {
        guard let first = tokens.first else { return input.isEmpty }
        let key = tokens.startIndex &* 1_000_003 &+ input.startIndex
        if failed.contains(key) { return false }
        switch first {
        case .literal(let l):
            if input.starts(with: l), match(tokens.dropFirst(), input.dropFirst(l.count), &captures, &failed) { return true }
        case .variable(let name):
            // Longest value first, never across '/', '?' or '#'.
            let stop = input.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? input.endIndex
            var end = stop
            while end > input.startIndex {
                captures[name] = String(decoding: input[input.startIndex..<end], as: UTF8.self)
                if match(tokens.dropFirst(), input[end...], &captures, &failed) { return true }
                end -= 1
            }
            captures[name] = nil
        }
        failed.insert(key)
        return false
    }
}

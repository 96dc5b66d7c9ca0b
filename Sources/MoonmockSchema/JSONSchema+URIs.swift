import Foundation
import MoonmockCore

/// URI references as `$id` and `$ref` use them (RFC 3986 resolution), and JSON pointers (RFC 6901).
enum URIs {
    static func stripFragment(_ uri: String) -> String {
        guard let hash = uri.utf8.firstIndex(of: UInt8(ascii: "#")) else { return uri }
        return String(uri[..<hash])
    }

    static func fragment(_ uri: String) -> String? {
        guard let hash = uri.firstIndex(of: "#") else { return nil }
        return String(uri[uri.index(after: hash)...])
    }

    /// `reference` resolved against `base`.
    static func resolve(_ reference: String, against base: String) -> String {
        if reference.isEmpty { return base }
        if reference.hasPrefix("#") { return stripFragment(base) + reference }
        if hasScheme(reference) { return reference }
        // urn: and other URIs without a hierarchy: a relative reference replaces all but the scheme.
        if let url = URL(string: base), url.host != nil || base.hasPrefix("file:"), let resolved = URL(string: reference, relativeTo: url) {
            return resolved.absoluteString
        }
        if reference.hasPrefix("/") || !base.contains("/") {
            return base.prefix { $0 != ":" } + ":" + reference
        }
        let directory = stripFragment(base).split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return directory + "/" + reference
    }

    static func hasScheme(_ s: String) -> Bool {
        guard let colon = s.firstIndex(of: ":"), colon != s.startIndex else { return false }
        return s[..<colon].allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." } && s.first!.isLetter
    }

    /// The value at a JSON pointer (`/a/0/b`, percent-decoded, `~1` and `~0` undone).
    static func pointer(_ pointer: String, in value: JSONValue) -> JSONValue? {
        let decoded = decodePercents(pointer)
        if decoded.isEmpty { return value }
        guard decoded.hasPrefix("/") else { return nil }
        var current = value
        for raw in decoded.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = unescape(raw)
            switch current {
            case .object(let o):
                guard let next = o[token] else { return nil }
                current = next
            case .array(let a):
                guard let i = Int(token), i >= 0, i < a.count, String(i) == token else { return nil }
                current = a[i]
            default:
                return nil
            }
        }
        return current
    }

    /// A JSON pointer token for `key` (`~0`, `~1`).
    /// A pointer token with `~1` and `~0` undone (Foundation's string search only when there is a `~`).
    static func unescape(_ raw: Substring) -> String {
        guard raw.utf8.contains(UInt8(ascii: "~")) else { return String(raw) }
        return raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }

    /// Percent-decoding, only when there is a `%`.
    static func decodePercents(_ s: String) -> String {
        guard s.utf8.contains(UInt8(ascii: "%")) else { return s }
        return s.removingPercentEncoding ?? s
    }

    static func escape(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return key }
        return key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}

/// JSON equality as JSON Schema means it: numbers by value (`1` is `1.0`), objects by members.
func jsonEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.string(let x), .string(let y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)   // code points, not canonical equivalence
    case (.integer(let x), .integer(let y)): return x == y
    case (.integer, .double), (.double, .integer), (.double, .double): return number(a) == number(b)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(jsonEqual)
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { jsonEqual(value, $0) } ?? false }
    default: return false
    }
}

func number(_ v: JSONValue) -> Double? {
    switch v {
    case .integer(let i): return Double(i)
    case .double(let d): return d
    default: return nil
    }
}

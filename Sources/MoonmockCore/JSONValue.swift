/// A JSON value. Integers stay integers (`Int64`); objects encode with sorted keys.
///
/// ```swift
/// let v = try JSONValue(parsing: Array(#"{"id": 7, "tags": ["a"]}"#.utf8))
/// v["id"]            // .integer(7)
/// v.encoded()        // {"id":7,"tags":["a"]}
/// ```
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Member of an object, or `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// Element of an array, or `nil`.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// `true` when every key of `pattern` is present here with an equal value, recursively
    /// for objects; arrays and scalars compare whole (integers equal to equal doubles).
    public func contains(_ pattern: JSONValue) -> Bool { firstMismatch(pattern, path: "json") == nil }

    /// The first place where `pattern` is not contained, as `"json.a.b: expected X, got Y"`.
    public func firstMismatch(_ pattern: JSONValue, path: String) -> String? {
        switch (pattern, self) {
        case (.object(let want), .object(let have)):
            for key in want.keys.sorted() {
                let sub = path + "." + key
                guard let value = have[key] else { return "\(sub): expected \(want[key]!.brief), got nothing" }
                if let m = value.firstMismatch(want[key]!, path: sub) { return m }
            }
            return nil
        case (.integer(let a), .double(let b)), (.double(let b), .integer(let a)):
            return Double(a) == b ? nil : "\(path): expected \(pattern.brief), got \(brief)"
        default:
            return pattern == self ? nil : "\(path): expected \(pattern.brief), got \(brief)"
        }
    }

    /// A short human rendering: strings bare, everything else as compact JSON (cut at 60 bytes).
    public var brief: String {
        if case .string(let s) = self { return s.count > 60 ? String(s.prefix(57)) + "..." : s }
        let text = String(decoding: encoded(), as: UTF8.self)
        return text.count > 60 ? String(text.prefix(57)) + "..." : text
    }
}

import Foundation
import MoonmockCore

/// Answers for OpenAPI responses: the documented example when there is one (`example`, the
/// first of `examples`, a schema's own `example`/`examples`/`default`), else a value made from
/// the schema — its types, formats, enums, required and other properties, `$ref`s, `allOf`,
/// the first of `oneOf`/`anyOf`, and OpenAPI 3.1's type lists.
struct SchemaExamples {
    let document: JSONValue
    var notes: [WriterNote] = []

    init(document: JSONValue) { self.document = document }

    /// Follows `$ref: "#/components/..."` (a few levels: refs to refs).
    func resolve(_ v: JSONValue) -> JSONValue {
        var current = v
        for _ in 0..<8 {
            guard let ref = current["$ref"]?.stringValue else { return current }
            guard let target = lookup(ref) else { return current }
            current = target
        }
        return current
    }

    private func lookup(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#/") else { return nil }
        var node: JSONValue? = document
        for part in ref.dropFirst(2).split(separator: "/") {
            let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            node = node?[key]
        }
        return node
    }

    /// The fields and body of one documented response.
    mutating func body(of response: JSONValue, source: String, _ notes: inout [WriterNote]) -> (HTTPHeaders, [UInt8]) {
        guard case .object(let content)? = response["content"], !content.isEmpty else { return (HTTPHeaders(), []) }
        let type = content.keys.first { $0.contains("json") } ?? content.keys.sorted()[0]
        let media = resolve(content[type]!)
        var headers = HTTPHeaders()
        headers.add("Content-Type", type == "*/*" ? "application/json" : type)
        if let example = media["example"] { return (headers, encode(example, type)) }
        if case .object(let examples)? = media["examples"], let first = examples.keys.sorted().first,
           let value = resolve(examples[first]!)["value"] {
            return (headers, encode(value, type))
        }
        guard let schema = media["schema"] else { return (headers, []) }
        var seen: Set<String> = []
        return (headers, encode(example(schema, &seen, depth: 0), type))
    }

    private func encode(_ v: JSONValue, _ type: String) -> [UInt8] {
        if !type.contains("json"), case .string(let s) = v { return Array(s.utf8) }
        return v.encoded()
    }

    /// A value that the schema accepts.
    func example(_ raw: JSONValue, _ seen: inout Set<String>, depth: Int) -> JSONValue {
        if let ref = raw["$ref"]?.stringValue {
            guard !seen.contains(ref), depth < 12, let target = lookup(ref) else { return .null }   // a cycle: stop there
            seen.insert(ref)
            defer { seen.remove(ref) }
            return example(target, &seen, depth: depth + 1)
        }
        let s = raw
        if let e = s["example"] { return e }
        if case .array(let list)? = s["examples"], let first = list.first { return first }
        if let d = s["default"] { return d }
        if let c = s["const"] { return c }
        if case .array(let values)? = s["enum"], let first = values.first { return first }
        if case .array(let parts)? = s["allOf"] {
            var merged: [String: JSONValue] = [:]
            for part in parts { if case .object(let o) = example(part, &seen, depth: depth + 1) { merged.merge(o) { a, _ in a } } }
            return .object(merged)
        }
        for key in ["oneOf", "anyOf"] {
            if case .array(let options)? = s[key], let first = options.first(where: { $0["type"]?.stringValue != "null" }) ?? options.first {
                return example(first, &seen, depth: depth + 1)
            }
        }
        var type = s["type"]?.stringValue
        if case .array(let types)? = s["type"] { type = types.compactMap(\.stringValue).first { $0 != "null" } }   // 3.1
        if type == nil { type = s["properties"] != nil ? "object" : s["items"] != nil ? "array" : nil }
        switch type {
        case "object":
            var o: [String: JSONValue] = [:]
            if case .object(let properties)? = s["properties"], depth < 12 {
                for (name, property) in properties { o[name] = example(property, &seen, depth: depth + 1) }
            }
            return .object(o)
        case "array":
            guard let items = s["items"], depth < 12 else { return .array([]) }
            let item = example(items, &seen, depth: depth + 1)
            return .array(item == .null ? [] : [item])   // (a schema that refers back to itself ends in an empty list)
        case "integer":
            if case .integer(let min)? = s["minimum"] { return .integer(min) }
            return .integer(1)
        case "number":
            if let min = s["minimum"] { return min }
            return .double(1.5)
        case "boolean": return .bool(true)
        case "string": return .string(Self.string(format: s["format"]?.stringValue, pattern: s["pattern"]?.stringValue))
        case "null": return .null
        default: return .null
        }
    }

    static func string(format: String?, pattern: String?) -> String {
        switch format {
        case "date-time": return "2026-01-01T12:00:00Z"
        case "date": return "2026-01-01"
        case "time": return "12:00:00"
        case "uuid": return "3fa85f64-5717-4562-b3fc-2c963f66afa6"
        case "email": return "user@example.com"
        case "uri", "url": return "https://example.com/"
        case "hostname": return "example.com"
        case "ipv4": return "192.0.2.1"
        case "ipv6": return "2001:db8::1"
        case "byte": return "ZXhhbXBsZQ=="
        default: return "string"
        }
    }
}

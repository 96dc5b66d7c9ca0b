import Foundation
import MoonmockCore

/// The Lua that a checked ``RuleJSON`` becomes: literals written so that any bytes survive
/// (a string is a quoted Lua literal with every byte outside printable ASCII escaped), JSON
/// values decoded by `mock.json.decode` (so `null` and `[]` keep their meaning).
extension RuleJSON {
    /// A Lua literal for a string, number or boolean; anything else as decoded JSON.
    static func lua(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): return quoted(Array(s.utf8))
        case .integer(let i): return String(i)
        case .double(let d): return d.isFinite ? "\(d)" : "0"
        case .bool(let b): return b ? "true" : "false"
        default: return decoded(v)
        }
    }

    /// `mock.json.decode("…")` of the value's JSON text.
    static func decoded(_ v: JSONValue) -> String { "mock.json.decode(\(quoted(v.encoded())))" }

    /// A Lua string literal holding exactly `bytes`.
    static func quoted(_ bytes: [UInt8]) -> String { LuaLiteral.quoted(bytes) }

    /// A query, header or body matcher: a string, `mock.present`, `mock.absent` or `mock.match(…)`.
    static func matcher(_ v: JSONValue) -> String {
        if case .array(let items) = v {
            return "{ " + items.map { quoted(Array(($0.stringValue ?? "").utf8)) }.joined(separator: ", ") + " }"
        }
        if case .object(let o) = v {
            if o["present"] != nil { return "mock.present" }
            if o["absent"] != nil { return "mock.absent" }
            if let p = o["match"]?.stringValue { return "mock.match(\(quoted(Array(p.utf8))))" }
        }
        return lua(v)
    }

    /// The builder call for a checked `respond` object.
    static func response(_ v: JSONValue) -> String {
        guard case .object(let o) = v else { return "mock.status(200)" }
        var opts: [String] = []
        if let s = o["status"].flatMap(integer) { opts.append("status = \(s)") }
        var headers: [(String, String)] = []
        if case .object(let hs)? = o["headers"] {
            headers = hs.keys.sorted().compactMap { k in
                if case .array(let items)? = hs[k] {
                    return (k, "{ " + items.map { quoted(Array(($0.stringValue ?? "").utf8)) }.joined(separator: ", ") + " }")
                }
                return hs[k]?.stringValue.map { (k, quoted(Array($0.utf8))) }
            }
        }
        if o["base64"] != nil && !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
            headers.append(("Content-Type", quoted(Array("application/octet-stream".utf8))))
        }
        if !headers.isEmpty {
            opts.append("headers = { " + headers.map { "[\(quoted(Array($0.0.utf8)))] = \($0.1)" }.joined(separator: ", ") + " }")
        }
        if let d = o["delay"] {
            if case .object(let parts) = d {
                opts.append("delay = { " + parts.keys.sorted().map { "\($0) = \(lua(parts[$0]!))" }.joined(separator: ", ") + " }")
            } else {
                opts.append("delay = \(lua(d))")
            }
        }
        if let f = o["fault"] { opts.append("fault = \(lua(f))") }
        if let r = o["bytes_per_second"] { opts.append("bytes_per_second = \(lua(r))") }
        if o["conditional"] == .bool(true) { opts.append("conditional = true") }
        let table = "{ " + opts.joined(separator: ", ") + " }"
        if let json = o["json"] { return "mock.json(\(decoded(json)), \(table))" }
        if let text = o["text"]?.stringValue { return "mock.text(\(quoted(Array(text.utf8))), \(table))" }
        if let b = o["base64"]?.stringValue, let data = Data(base64Encoded: b) { return "mock.text(\(quoted(Array(data))), \(table))" }
        if let file = o["file"]?.stringValue { return "mock.file(\(quoted(Array(file.utf8))), \(table))" }
        if let f = o["fault"] { return "mock.fault(\(lua(f)), \(table))" }
        return "mock.status(\(o["status"].flatMap(integer) ?? 200), nil, \(table))"
    }
}

/// A rule JSON that cannot be used: `description` names the field and what was expected,
/// e.g. `rules[1].respond.status: expected an integer from 100 to 599, got "ok"`.
public struct RuleJSONError: Error, CustomStringConvertible, Sendable {
    private enum Kind: Sendable {
        case expected(what: String, got: String)
        case missing(what: String)
        case unknown(nearest: String?, known: [String])
        case conflict(String)
        case invalid(String)
    }

    /// The field at fault, as a path: `rule.respond.status`, `rules[2].query.page`.
    public let field: String
    private let kind: Kind

    private init(_ field: String, _ kind: Kind) {
        self.field = field
        self.kind = kind
    }

    static func expected(_ field: String, _ what: String, _ got: JSONValue) -> RuleJSONError {
        var shown = String(decoding: got.encoded(), as: UTF8.self)
        if shown.count > 60 { shown = String(shown.prefix(57)) + "..." }
        return RuleJSONError(field, .expected(what: what, got: shown))
    }
    static func missing(_ field: String, _ what: String) -> RuleJSONError { RuleJSONError(field, .missing(what: what)) }
    static func unknown(_ field: String, _ nearest: String?, _ known: [String]) -> RuleJSONError {
        RuleJSONError(field, .unknown(nearest: nearest, known: known))
    }
    static func conflict(_ field: String, _ message: String) -> RuleJSONError { RuleJSONError(field, .conflict(message)) }
    static func invalid(_ field: String, _ message: String) -> RuleJSONError { RuleJSONError(field, .invalid(message)) }

    public var description: String {
        switch kind {
        case .expected(let what, let got): return "\(field): expected \(what), got \(got)"
        case .missing(let what): return "\(field): missing; give \(what)"
        case .unknown(let nearest, let known):
            let hint = nearest.map { "did you mean '\($0)'? " } ?? ""
            return "\(field): unknown field; \(hint)(fields: \(known.joined(separator: ", ")))"
        case .conflict(let message), .invalid(let message): return "\(field): \(message)"
        }
    }
}

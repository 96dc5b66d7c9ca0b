/// Lua source for values: what every generator of `mocks.lua` text writes (the converters,
/// recording, the rule JSON of the admin API), so that any bytes and any JSON come out as
/// the same value when the script runs.
///
/// ```swift
/// LuaLiteral.string("a \"b\"\n")                                  // "a \"b\"\n"
/// LuaLiteral.value(.object(["id": .integer(7), "tags": .array([])]))  // { id = 7, tags = mock.json.array() }
/// ```
public enum LuaLiteral {
    /// A quoted Lua string holding exactly `bytes`: controls, quotes and backslashes escaped,
    /// UTF-8 text kept readable, any other byte as a decimal escape.
    public static func quoted(_ bytes: some Collection<UInt8>) -> String {
        let keepHigh = String(validating: Array(bytes), as: UTF8.self) != nil
        var out = "\""
        out.reserveCapacity(bytes.count + 2)
        var raw: [UInt8] = []
        func flush() {
            if !raw.isEmpty { out += String(decoding: raw, as: UTF8.self); raw.removeAll(keepingCapacity: true) }
        }
        for b in bytes {
            switch b {
            case UInt8(ascii: "\""): flush(); out += "\\\""
            case UInt8(ascii: "\\"): flush(); out += "\\\\"
            case 0x0A: flush(); out += "\\n"
            case 0x09: flush(); out += "\\t"
            case 0x0D: flush(); out += "\\r"
            case 0x20...0x7E: raw.append(b)
            case 0x80...0xFF where keepHigh: raw.append(b)
            default:
                flush()
                // Three digits, so that a digit after it is not read as part of the escape.
                let d = Int(b)
                out += "\\" + String(d / 100) + String(d / 10 % 10) + String(d % 10)
            }
        }
        flush()
        return out + "\""
    }

    /// ``quoted(_:)`` of a string's UTF-8.
    public static func string(_ s: String) -> String { quoted(Array(s.utf8)) }

    /// A long bracket string (`[[…]]`, `[=[…]=]`, …) holding exactly `text`, which reads as the
    /// text itself (JSON in a script stays JSON); a quoted literal when a long string would
    /// change it (a carriage return, which Lua reads as a newline, a leading newline, which it
    /// drops, or a control character).
    ///
    /// ```swift
    /// LuaLiteral.long(#"{"a": [1]}"#)   // [[{"a": [1]}]]
    /// ```
    public static func long(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.first != 0x0A, bytes.allSatisfy({ $0 >= 0x20 || $0 == 0x0A || $0 == 0x09 }), String(validating: bytes, as: UTF8.self) != nil
        else { return quoted(bytes) }
        var level = ""
        while text.contains("]" + level + "]") || text.hasSuffix("]" + level) { level += "=" }
        return "[" + level + "[" + text + "]" + level + "]"
    }

    /// Whether `name` can be written bare as a table key (`name = …`).
    public static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, first == UInt8(ascii: "_") || (first | 0x20 >= 0x61 && first | 0x20 <= 0x7A) else { return false }
        let ok = name.utf8.allSatisfy { $0 == UInt8(ascii: "_") || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) }
        return ok && !keywords.contains(name)
    }

    /// `name = ` or `["na-me"] = `.
    public static func key(_ name: String) -> String { isIdentifier(name) ? name : "[\(string(name))]" }

    /// A JSON value as the Lua value `mock.json` encodes back to it: objects as tables with
    /// their keys sorted, arrays as sequences (`mock.json.array()` when empty), `null` as
    /// `mock.null`. Containers with more than `wrap` characters go over several lines,
    /// indented from `indent`.
    public static func value(_ v: JSONValue, indent: String = "", wrap: Int = 80) -> String {
        switch v {
        case .null: return "mock.null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .double(let d): return d.isFinite ? JSONValue.format(d) : "0"
        case .string(let s): return string(s)
        case .array(let items):
            if items.isEmpty { return "mock.json.array()" }
            return container(items.map { value($0, indent: indent + "  ", wrap: wrap) }, indent: indent, wrap: wrap)
        case .object(let members):
            if members.isEmpty { return "{}" }
            return container(members.keys.sorted().map { "\(key($0)) = \(value(members[$0]!, indent: indent + "  ", wrap: wrap))" },
                             indent: indent, wrap: wrap)
        }
    }

    private static func container(_ parts: [String], indent: String, wrap: Int) -> String {
        let inline = "{ " + parts.joined(separator: ", ") + " }"
        if inline.count + indent.count <= wrap && !inline.contains("\n") { return inline }
        return "{\n" + parts.map { indent + "  " + $0 + ",\n" }.joined() + indent + "}"
    }

    static let keywords: Set<String> = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
                                        "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"]
}

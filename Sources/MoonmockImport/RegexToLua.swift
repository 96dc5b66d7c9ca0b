/// A Java-style regular expression (WireMock's `matches`, `urlPattern`) as a Lua pattern, for
/// the part the two languages share: literals, `.`, classes (`[a-z]`, `\d`, `\w`, `\s` and
/// their negations), `*`, `+`, `?`, lazy `*?`, bounded repeats (`{n}`, `{n,m}`, `{n,}`) and the
/// anchors. Groups and alternation have no Lua equivalent: `nil`, and the caller says so.
///
/// ```swift
/// RegexToLua.translate("/users/[0-9]+", whole: true)   // "^/users/[0-9]+$"
/// RegexToLua.translate("(a|b)", whole: true)           // nil
/// ```
public enum RegexToLua {
    /// `whole`: the pattern must match the whole subject (WireMock's matching), so it is anchored.
    public static func translate(_ regex: String, whole: Bool) -> String? {
        // By scalar, not by Character: "[" followed by a combining mark is one Character, but two
        // bytes Lua reads apart.
        var chars = Array(regex.unicodeScalars)
        var anchoredStart = false, anchoredEnd = false
        if chars.first == "^" { anchoredStart = true; chars.removeFirst() }
        if chars.last == "$" && !(chars.count >= 2 && chars[chars.count - 2] == "\\") { anchoredEnd = true; chars.removeLast() }
        var items: [String] = []   // one Lua item per regex item, quantifiers attached
        var i = 0
        while i < chars.count {
            let c = chars[i]
            var item: String
            switch c {
            case "(", ")", "|", "^", "$": return nil
            case "{", "}", "*", "+", "?": return nil   // a quantifier with nothing before it
            case ".": item = "."; i += 1
            case "\\":
                guard i + 1 < chars.count, let escaped = escape(chars[i + 1]) else { return nil }
                item = escaped; i += 2
            case "[":
                guard let (cls, next) = characterClass(chars, from: i) else { return nil }
                item = cls; i = next
            default:
                item = literal(c); i += 1
            }
            // Quantifiers.
            if i < chars.count {
                switch chars[i] {
                case "*":
                    if i + 1 < chars.count && chars[i + 1] == "?" { item += "-"; i += 2 } else { item += "*"; i += 1 }
                case "+":
                    if i + 1 < chars.count && chars[i + 1] == "?" { return nil }
                    item += "+"; i += 1
                case "?":
                    if i + 1 < chars.count && chars[i + 1] == "?" { return nil }
                    item += "?"; i += 1
                case "{":
                    guard let close = chars[i...].firstIndex(of: "}") else { return nil }
                    var inside = ""
                    inside.unicodeScalars.append(contentsOf: chars[(i + 1)..<close])
                    let bounds = inside.split(separator: ",", omittingEmptySubsequences: false)
                    guard let low = Int(bounds.first ?? ""), (0...32).contains(low) else { return nil }
                    var repeated = String(repeating: item, count: low)
                    if bounds.count == 2 {
                        if bounds[1].isEmpty { repeated += item + "*" } else {
                            guard let high = Int(bounds[1]), high >= low, high <= 32 else { return nil }
                            repeated += String(repeating: item + "?", count: high - low)
                        }
                    } else if bounds.count > 2 { return nil }
                    item = repeated
                    i = close + 1
                default: break
                }
            }
            items.append(item)
        }
        let body = items.joined()
        return ((whole || anchoredStart) ? "^" : "") + body + ((whole || anchoredEnd) ? "$" : "")
    }

    /// A literal character, escaped when Lua would read it as magic.
    static func literal(_ c: Unicode.Scalar) -> String {
        "^$()%.[]*+-?".unicodeScalars.contains(c) ? "%" + String(c) : String(c)
    }

    /// `text` matched literally: every magic character escaped.
    static func literal(_ text: String) -> String { text.unicodeScalars.map(literal).joined() }

    private static func isAlphanumeric(_ c: Unicode.Scalar) -> Bool {
        c.properties.isAlphabetic || c.properties.numericType != nil
    }

    /// `\x` of a regex as a Lua item.
    private static func escape(_ c: Unicode.Scalar) -> String? {
        switch c {
        case "d": return "%d"
        case "D": return "%D"
        case "w": return "[%w_]"
        case "W": return "[^%w_]"
        case "s": return "%s"
        case "S": return "%S"
        default:
            guard !isAlphanumeric(c) else { return nil }   // \b, \1, \p{..}: no equivalent
            return literal(c)
        }
    }

    /// `[...]` from `start`; the Lua set and the index after it.
    private static func characterClass(_ chars: [Unicode.Scalar], from start: Int) -> (String, Int)? {
        var i = start + 1
        var out = "["
        if i < chars.count && chars[i] == "^" { out += "^"; i += 1 }
        var first = true
        while i < chars.count {
            let c = chars[i]
            if c == "]" && !first { return (out + "]", i + 1) }
            first = false
            switch c {
            case "\\":
                guard i + 1 < chars.count else { return nil }
                switch chars[i + 1] {
                case "d": out += "%d"
                case "w": out += "%w_"
                case "s": out += "%s"
                case "D", "W", "S": return nil   // a negation inside a set has no Lua form
                case let e where !isAlphanumeric(e): out += "%" + String(e)
                default: return nil
                }
                i += 2
            case "[": return nil   // nested sets, [[:alpha:]]
            case "%", "]": out += "%" + String(c); i += 1
            default: out += String(c); i += 1
            }
        }
        return nil
    }
}

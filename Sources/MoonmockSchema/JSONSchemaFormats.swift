import Foundation

/// The `format` values checked as assertions: `date`, `date-time`, `time` (RFC 3339), `email`,
/// `uuid`, `uri`, `ipv4`, `ipv6`, `hostname`, and OpenAPI's `byte`, `int32`, `int64`. Any other
/// format is an annotation (`nil`: not checked).
public enum JSONSchemaFormats {
    public static let asserted: Set<String> = ["date", "date-time", "time", "email", "uuid", "uri", "ipv4", "ipv6", "hostname", "byte", "int32", "int64"]

    public static func check(_ format: String, _ s: String) -> Bool? {
        switch format {
        case "date": return date(s)
        case "time": return time(s)
        case "date-time":
            guard let t = s.firstIndex(where: { $0 == "T" || $0 == "t" }) else { return false }
            return date(String(s[..<t])) && time(String(s[s.index(after: t)...]))
        case "email": return email(s)
        case "uuid":
            let bytes = Array(s.utf8)
            guard bytes.count == 36 else { return false }
            for (i, b) in bytes.enumerated() {
                if i == 8 || i == 13 || i == 18 || i == 23 { if b != UInt8(ascii: "-") { return false } }
                else if !((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)) { return false }
            }
            return true
        case "uri": return uri(s)
        case "ipv4": return ipv4(s)
        case "ipv6": return ipv6(s)
        case "hostname": return hostname(s)
        case "byte": return s.count % 4 == 0 && Data(base64Encoded: s) != nil
        default: return nil
        }
    }

    public static func checkNumber(_ format: String, _ x: Double) -> Bool? {
        switch format {
        case "int32": return x == x.rounded() && x >= -2_147_483_648 && x <= 2_147_483_647
        case "int64": return x == x.rounded() && x >= -9_223_372_036_854_775_808 && x < 9_223_372_036_854_775_808
        default: return nil
        }
    }

    static func digits(_ s: Substring, _ n: Int) -> Int? {
        guard s.count == n, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(s)
    }

    static func date(_ s: String) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, let y = digits(parts[0], 4), let m = digits(parts[1], 2), let d = digits(parts[2], 2), (1...12).contains(m) else { return false }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
        return (1...days).contains(d)
    }

    static func time(_ s: String) -> Bool {
        var rest = Substring(s)
        guard rest.count >= 9 else { return false }
        guard let h = digits(rest.prefix(2), 2), rest.dropFirst(2).first == ":", let m = digits(rest.dropFirst(3).prefix(2), 2),
              rest.dropFirst(5).first == ":", let sec = digits(rest.dropFirst(6).prefix(2), 2), h <= 23, m <= 59, sec <= 60 else { return false }
        rest = rest.dropFirst(8)
        if rest.first == "." {
            rest = rest.dropFirst()
            let fraction = rest.prefix { $0.isASCII && $0.isNumber }
            guard !fraction.isEmpty else { return false }
            rest = rest.dropFirst(fraction.count)
        }
        var offsetMinutes = 0
        if rest == "Z" || rest == "z" {
            offsetMinutes = 0
        } else if let sign = rest.first, sign == "+" || sign == "-", rest.count == 6, let oh = digits(rest.dropFirst().prefix(2), 2),
                  rest.dropFirst(3).first == ":", let om = digits(rest.dropFirst(4), 2), oh <= 23, om <= 59 {
            offsetMinutes = (sign == "+" ? 1 : -1) * (oh * 60 + om)
        } else {
            return false
        }
        if sec == 60 {   // a leap second only at 23:59:60 UTC
            let utc = ((h * 60 + m - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    static func email(_ s: String) -> Bool {
        guard let at = s.lastIndex(of: "@") else { return false }
        let local = s[..<at], domain = s[s.index(after: at)...]
        guard !local.isEmpty, !domain.isEmpty else { return false }
        if local.hasPrefix("\"") && local.hasSuffix("\"") && local.count >= 2 {
            // A quoted local part: any printable ASCII, quotes and backslashes escaped.
            var escaped = false
            for c in local.dropFirst().dropLast() {
                guard c.isASCII, c.asciiValue! >= 0x20, c.asciiValue! < 0x7F else { return false }
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { return false }
            }
        } else {
            var previous: UInt8 = UInt8(ascii: ".")
            for b in local.utf8 {
                guard b < 0x80, Self.atextTable[Int(b)] else { return false }
                if b == UInt8(ascii: ".") && previous == UInt8(ascii: ".") { return false }   // a leading dot, or two in a row
                previous = b
            }
            if previous == UInt8(ascii: ".") { return false }
        }
        if domain.hasPrefix("[") && domain.hasSuffix("]") {
            let inner = domain.dropFirst().dropLast()
            return inner.hasPrefix("IPv6:") ? ipv6(String(inner.dropFirst(5))) : ipv4(String(inner))
        }
        return hostname(String(domain))
    }

    /// RFC 5322's atext (and the dot), by ASCII code.
    static let atextTable: [Bool] = (0..<128).map { code in
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_`{|}~-.".utf8.contains(UInt8(code))
    }
    static let uriCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%")

    static func ipv4(_ s: String) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { p in
            !p.isEmpty && p.count <= 3 && p.allSatisfy { $0.isASCII && $0.isNumber } && (p.count == 1 || p.first != "0") && Int(p)! <= 255
        }
    }

    static func ipv6(_ s: String) -> Bool {
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }) else { return false }
        var text = Substring(s)
        var groups = 0
        if let lastColon = text.lastIndex(of: ":"), text[text.index(after: lastColon)...].contains(".") {
            guard ipv4(String(text[text.index(after: lastColon)...])) else { return false }
            groups += 2
            text = text[...lastColon]
            if text.hasSuffix(":") && !text.hasSuffix("::") { text = text.dropLast() }
        }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return false }
        for half in halves where !half.isEmpty {
            let parts = half.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(\.isHexDigit) }) else { return false }
            groups += parts.count
        }
        return halves.count == 2 ? groups <= 7 : groups == 8
    }

    static func hostname(_ s: String) -> Bool {
        // RFC 1123 labels of letters, digits and hyphens (not first or last), 63 bytes each, 253 in all.
        var label = 0, total = 0
        var previous: UInt8 = 0
        for b in s.utf8 {
            total += 1
            if b == UInt8(ascii: ".") {
                if label == 0 || previous == UInt8(ascii: "-") { return false }
                label = 0
                previous = b
                continue
            }
            let alnum = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            guard alnum || b == UInt8(ascii: "-") else { return false }
            if label == 0 && b == UInt8(ascii: "-") { return false }
            label += 1
            if label > 63 { return false }
            previous = b
        }
        return label > 0 && previous != UInt8(ascii: "-") && total <= 253
    }

    static func uri(_ s: String) -> Bool {
        guard let colon = s.firstIndex(of: ":"), colon != s.startIndex, s.first!.isLetter,
              s[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return false }
        guard s.unicodeScalars.allSatisfy({ Self.uriCharacters.contains($0) }) else { return false }
        var i = s.startIndex
        while let p = s[i...].firstIndex(of: "%") {   // every % starts an escape
            let hex = s[s.index(after: p)...].prefix(2)
            guard hex.count == 2, hex.allSatisfy(\.isHexDigit) else { return false }
            i = s.index(after: p)
        }
        var rest = s[s.index(after: colon)...]
        if let authorityStart = s.range(of: "://") {
            let authority = s[authorityStart.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            rest = s[authority.endIndex...]
            if authority.contains("[") != authority.contains("]") { return false }
            let hostPort = authority.split(separator: "@").last ?? ""

            if !hostPort.hasPrefix("["), let portColon = hostPort.lastIndex(of: ":") {
                if !hostPort[hostPort.index(after: portColon)...].allSatisfy({ $0.isASCII && $0.isNumber }) { return false }
            }
        }
        // Square brackets belong to an IP literal host, never to the path, query or fragment.
        let path = rest.prefix { $0 != "#" }
        if path.contains("[") || path.contains("]") { return false }
        return true
    }
}

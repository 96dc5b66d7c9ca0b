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
        case "date-time": return dateTime(s)
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

    /// `n` ASCII digits at `i` of `b`, as a number; `nil` otherwise. (Dates and times are read
    /// as bytes: they are the formats an API's bodies carry most.)
    @inline(__always)
    static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: Int, _ n: Int) -> Int? {
        guard i + n <= b.count else { return nil }
        var v = 0
        for k in i..<(i + n) {
            let d = b[k] &- 0x30
            guard d < 10 else { return nil }
            v = v * 10 + Int(d)
        }
        return v
    }

    static func date(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { date($0[...]) }
    }

    static func date(_ b: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let b = UnsafeBufferPointer(rebasing: b)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let y = number(b, 0, 4), let m = number(b, 5, 2), let d = number(b, 8, 2), (1...12).contains(m) else { return false }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let days = m == 2 ? (leap ? 29 : 28) : (m == 4 || m == 6 || m == 9 || m == 11 ? 30 : 31)
        return (1...days).contains(d)
    }

    static func time(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { time($0[...]) }
    }

    static func time(_ slice: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let b = UnsafeBufferPointer(rebasing: slice)
        guard b.count >= 9, let h = number(b, 0, 2), b[2] == UInt8(ascii: ":"), let m = number(b, 3, 2), b[5] == UInt8(ascii: ":"),
              let sec = number(b, 6, 2), h <= 23, m <= 59, sec <= 60 else { return false }
        var i = 8
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, b[i] &- 0x30 < 10 { i += 1 }
            guard i > start else { return false }
        }
        var offsetMinutes = 0
        let rest = b.count - i
        if rest == 1 && (b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z")) {
            offsetMinutes = 0
        } else if rest == 6, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), let oh = number(b, i + 1, 2), b[i + 3] == UInt8(ascii: ":"),
                  let om = number(b, i + 4, 2), oh <= 23, om <= 59 {
            offsetMinutes = (b[i] == UInt8(ascii: "+") ? 1 : -1) * (oh * 60 + om)
        } else {
            return false
        }
        if sec == 60 {   // a leap second only at 23:59:60 UTC
            let utc = ((h * 60 + m - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    static func dateTime(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { b in
            guard let t = b.firstIndex(where: { $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: "t") }) else { return false }
            return date(b[..<t]) && time(b[(t + 1)...])
        }
    }

    static func email(_ s: String) -> Bool {
        let u = s.utf8
        guard let at = u.lastIndex(of: UInt8(ascii: "@")) else { return false }
        let local = u[..<at], domain = u[u.index(after: at)...]
        guard !local.isEmpty, !domain.isEmpty else { return false }
        let quote = UInt8(ascii: "\"")
        if local.first == quote && local.last == quote && local.count >= 2 {
            // A quoted local part: any printable ASCII, quotes and backslashes escaped.
            var escaped = false
            for b in local.dropFirst().dropLast() {
                guard b >= 0x20, b < 0x7F else { return false }
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == quote { return false }
            }
        } else {
            var previous: UInt8 = UInt8(ascii: ".")
            for b in local {
                guard b < 0x80, Self.atextTable[Int(b)] else { return false }
                if b == UInt8(ascii: ".") && previous == UInt8(ascii: ".") { return false }   // a leading dot, or two in a row
                previous = b
            }
            if previous == UInt8(ascii: ".") { return false }
        }
        if domain.first == UInt8(ascii: "[") && domain.last == UInt8(ascii: "]") {
            let inner = String(s[domain.index(after: domain.startIndex)..<domain.index(before: domain.endIndex)])
            return inner.hasPrefix("IPv6:") ? ipv6(String(inner.dropFirst(5))) : ipv4(inner)
        }
        return hostname(domain)
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

    static func hostname(_ s: String) -> Bool { hostname(s.utf8[...]) }

    static func hostname(_ bytes: Substring.UTF8View) -> Bool {
        // RFC 1123 labels of letters, digits and hyphens (not first or last), 63 bytes each, 253 in all.
        var label = 0, total = 0
        var previous: UInt8 = 0
        for b in bytes {
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

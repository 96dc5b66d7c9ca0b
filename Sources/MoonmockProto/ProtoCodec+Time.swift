import MoonmockCore

/// `Timestamp` and `Duration` text (RFC 3339 in UTC; seconds with 0, 3, 6 or 9 fractional
/// digits), from calendar arithmetic on days: no `DateFormatter`, the same on every platform.
extension ProtoCodec {
    /// Seconds from 0001-01-01 to 9999-12-31, as protobuf allows.
    static let timestampRange: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    static func timestamp(_ seconds: Int64, _ nanos: Int32) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = CivilDate.date(days: days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var year = String(y)
        while year.count < 4 { year = "0" + year }
        return "\(year)-\(two(m))-\(two(d))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))\(fraction(nanos))Z"
    }

    static func duration(_ seconds: Int64, _ nanos: Int32) -> String {
        let negative = seconds < 0 || nanos < 0
        return (negative ? "-" : "") + "\(abs(seconds))\(fraction(abs(nanos)))s"
    }

    /// `.123`, `.123456` or `.123456789`, or nothing for whole seconds.
    static func fraction(_ nanos: Int32) -> String {
        guard nanos > 0 else { return "" }
        var digits = String(nanos)
        while digits.count < 9 { digits = "0" + digits }
        if digits.hasSuffix("000000") { return "." + digits.prefix(3) }
        if digits.hasSuffix("000") { return "." + digits.prefix(6) }
        return "." + digits
    }

    static func parseTimestamp(_ text: String) -> (Int64, Int32)? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var n: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 48 && b[i] <= 57 else { return nil }
                n = n * 10 + Int64(b[i] - 48)
            }
            return n
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58,
              let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2), let h = number(11, 2), let mi = number(14, 2),
              let s = number(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48 && b[i] <= 57 {
                if digits < 9 { nanos = nanos * 10 + Int64(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 9) { nanos *= 10 }
        }
        var offset: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if (b[i] == 43 || b[i] == 45), i + 6 == b.count, b[i + 3] == 58, let oh = number(i + 1, 2), let om = number(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = CivilDate.days(year: y, month: mo, day: d) * 86_400 + h * 3600 + mi * 60 + min(s, 59) - offset
        guard timestampRange.contains(seconds) else { return nil }
        return (seconds, Int32(nanos))
    }

    static func parseDuration(_ text: String) -> (Int64, Int32)? {
        guard text.hasSuffix("s") else { return nil }
        var body = Substring(text.dropLast())
        let negative = body.hasPrefix("-")
        if negative { body = body.dropFirst() }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = Int64(parts[0]), whole <= 315_576_000_000, !parts[0].hasPrefix("+") else { return nil }
        var nanos: Int64 = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            nanos = Int64(digits)! * Int64([1, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1000, 100, 10, 1][digits.count])
        }
        return negative ? (-whole, Int32(-nanos)) : (whole, Int32(nanos))
    }
}

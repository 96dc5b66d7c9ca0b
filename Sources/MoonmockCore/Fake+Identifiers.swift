/// Identifiers that pass their own checks (UUID version 4, ULID, IBAN's mod 97, a card's Luhn
/// digit), addresses and dates.
extension Fake {
    mutating func uuid() -> String {
        let a = random.next(), b = random.next()
        var out = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        Self.hex(a >> 32, into: &out, at: 0, width: 8)
        Self.hex(a >> 16, into: &out, at: 9, width: 4)
        out[14] = UInt8(ascii: "4")
        Self.hex(a, into: &out, at: 15, width: 3)
        out[19] = [UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")][Int(b >> 62)]
        Self.hex(b >> 48, into: &out, at: 20, width: 3)
        Self.hex(b, into: &out, at: 24, width: 12)
        return String(decoding: out, as: UTF8.self)
    }

    /// Crockford base 32: 48 bits of milliseconds (a seeded moment of 2020…2029, not the clock:
    /// the same seed, the same id) and 80 random bits.
    mutating func ulid() -> String {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        let millis = UInt64(1_577_836_800_000) + random.next() % UInt64(315_360_000_000)
        var out = ""
        for i in stride(from: 9, through: 0, by: -1) { out.append(alphabet[Int((millis >> (UInt64(i) * 5)) & 31)]) }
        for _ in 0..<16 { out.append(alphabet[random.below(32)]) }
        return out
    }

    /// A valid IBAN (check digits by ISO 7064 mod 97, and the national check digits where the
    /// country has them) for DE, GB, FR, ES or NL; by default the locale's country (GB for `en`
    /// and `ja`).
    mutating func iban(_ country: String?) throws -> String {
        let code = country?.uppercased() ?? ["GB", "DE", "FR", "ES", "GB"][locale.index]
        let bban: String
        switch code {
        case "DE": bban = digits("########") + digits("##########")
        case "GB": bban = pick(["NWBK", "BARC", "LOYD", "HBUK", "MIDL"]) + digits("######") + digits("########")
        case "NL": bban = pick(["ABNA", "INGB", "RABO", "TRIO"]) + digits("##########")
        case "FR":
            let bank = digits("#####"), branch = digits("#####"), account = digits("###########")
            let key = 97 - (89 * mod97(bank) + 15 * mod97(branch) + 3 * mod97(account)) % 97
            bban = bank + branch + account + (key < 10 ? "0" : "") + String(key)
        case "ES":
            let bank = digits("####"), branch = digits("####"), account = digits("##########")
            bban = bank + branch + Self.spanishControl("00" + bank + branch) + Self.spanishControl(account) + account
        default: throw Failure(description: "fake.iban: country must be DE, GB, FR, ES or NL, got \(code)")
        }
        let check = 98 - mod97(bban + code + "00")
        return code + (check < 10 ? "0" : "") + String(check) + bban
    }

    /// The number of letters-as-digits text (A = 10 … Z = 35) modulo 97.
    func mod97(_ text: String) -> Int {
        var r = 0
        for c in text.utf8 {
            if c >= 65 { r = (r * 100 + Int(c) - 55) % 97 } else { r = (r * 10 + Int(c) - 48) % 97 }
        }
        return r
    }

    static func spanishControl(_ ten: String) -> String {
        let weights = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6]
        let sum = zip(ten.utf8, weights).reduce(0) { $0 + Int($1.0 - 48) * $1.1 }
        let d = 11 - sum % 11
        return String(d == 11 ? 0 : d == 10 ? 1 : d)
    }

    /// A card number with its Luhn digit: `visa` (16 digits), `mastercard` (16), `amex` (15).
    mutating func creditCard(_ brand: String) throws -> String {
        var number: [Int]
        switch brand.lowercased() {
        case "visa": number = [4]
        case "mastercard": number = [5, 1 + random.below(5)]
        case "amex": number = [3, random.below(2) == 0 ? 4 : 7]
        default: throw Failure(description: "fake.credit_card: brand must be visa, mastercard or amex, got \(brand)")
        }
        let length = brand.lowercased() == "amex" ? 15 : 16
        while number.count < length - 1 { number.append(random.below(10)) }
        var sum = 0
        for (i, d) in number.reversed().enumerated() {
            let v = i % 2 == 0 ? d * 2 : d
            sum += v > 9 ? v - 9 : v
        }
        number.append((10 - sum % 10) % 10)
        return number.map(String.init).joined()
    }

    /// A public-looking address: not private (10/8, 172.16/12, 192.168/16), loopback, link-local or multicast.
    mutating func ipv4() -> String {
        while true {
            let a = 1 + random.below(223), b = random.below(256)
            if a == 10 || a == 127 || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168) || (a == 169 && b == 254) { continue }
            return "\(a).\(b).\(random.below(256)).\(1 + random.below(254))"
        }
    }

    // MARK: dates

    /// `YYYY-MM-DD` between `from` and `to` (dates in that form; 1990-01-01 … 2025-12-31 by default).
    mutating func date(_ args: [String: JSONValue]) throws -> String {
        let (low, high) = try range(args, "date", defaults: (Self.dateFrom, Self.dateTo), unit: 1)
        return String(Self.iso8601(Double(random.integer(low, high)) * 86_400).prefix(10))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` between `from` and `to` (dates or date-times; 2015 … 2025 by default).
    mutating func datetime(_ args: [String: JSONValue]) throws -> String {
        let (low, high) = try range(args, "datetime", defaults: (Self.dateTimeFrom, Self.dateTimeTo), unit: 86_400)
        return Self.iso8601(Double(random.integer(low, high)))
    }

    private func range(_ args: [String: JSONValue], _ kind: String, defaults: (Int64, Int64), unit: Int64) throws -> (Int64, Int64) {
        func read(_ name: String, end: Bool) throws -> Int64? {
            guard let v = args[name], v != .null else { return nil }
            guard let text = v.stringValue, let seconds = Self.seconds(text) else {
                throw Failure(description: "fake.\(kind): \(name) must be a date (2024-01-31) or date-time (2024-01-31T12:00:00Z)")
            }
            // A bare date as `to` means the whole day.
            if unit == 1 { return seconds / 86_400 }
            return end && text.count == 10 ? seconds + 86_399 : seconds
        }
        let low = try read("from", end: false) ?? defaults.0, high = try read("to", end: true) ?? defaults.1
        guard low <= high else { throw Failure(description: "fake.\(kind): from is after to") }
        return (low, high)
    }

    // The default ranges: 1990-01-01 … 2025-12-31 (days), 2015-01-01 … 2025-12-31 (seconds).
    static let dateFrom = days("1990-01-01")!, dateTo = days("2025-12-31")!
    static let dateTimeFrom = days("2015-01-01")! * 86_400, dateTimeTo = days("2025-12-31")! * 86_400 + 86_399

    /// Seconds since 1970 of `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS[Z]`.
    static func seconds(_ text: String) -> Int64? {
        guard let day = days(String(text.prefix(10))) else { return nil }
        if text.count == 10 { return day * 86_400 }
        let b = Array(text.utf8)
        guard b.count >= 19, b[10] == 84 || b[10] == 116 || b[10] == 32, let h = Int64(String(decoding: b[11..<13], as: UTF8.self)),
              let m = Int64(String(decoding: b[14..<16], as: UTF8.self)), let s = Int64(String(decoding: b[17..<19], as: UTF8.self)),
              h < 24, m < 60, s < 61 else { return nil }
        return day * 86_400 + h * 3600 + m * 60 + s
    }

    /// Days since 1970-01-01 of a proleptic Gregorian `YYYY-MM-DD`.
    static func days(_ text: String) -> Int64? {
        let parts = text.split(separator: "-")
        guard text.count == 10, parts.count == 3, let y = Int64(parts[0]), let m = Int64(parts[1]), let d = Int64(parts[2]),
              (1...12).contains(m), (1...31).contains(d) else { return nil }
        return CivilDate.days(year: y, month: m, day: d)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` of seconds since 1970 (UTC).
    public static func iso8601(_ seconds: Double) -> String {
        let t = Int64(seconds.rounded(.down))
        let day = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let rest = t - day * 86_400
        let (y, m, d) = CivilDate.date(days: day)
        guard (0...9999).contains(y) else { return String(y) + "-01-01T00:00:00Z" }
        var out = Array("0000-00-00T00:00:00Z".utf8)
        func put(_ n: Int64, _ at: Int, _ width: Int) {
            var x = n
            for i in stride(from: at + width - 1, through: at, by: -1) { out[i] = 48 + UInt8(x % 10); x /= 10 }
        }
        put(y, 0, 4); put(m, 5, 2); put(d, 8, 2); put(rest / 3600, 11, 2); put(rest / 60 % 60, 14, 2); put(rest % 60, 17, 2)
        return String(decoding: out, as: UTF8.self)
    }
}

import Foundation

/// Seeded fake data: names, addresses, identifiers, numbers, dates and text that look like
/// production and come out the same for the same seed on every machine (``SeededRandom``, no
/// platform generator, no locale services). `mock.fake` in scripts and `{{fake.…}}` in
/// templates call ``value(_:_:)``.
///
/// ```swift
/// var fake = Fake(seed: SeededRandom.seed("user:7"), locale: .de)
/// fake.name()    // "Sophie Schneider", on every machine
/// try fake.value("int", ["min": .integer(1), "max": .integer(9)])
/// ```
public struct Fake: Sendable {
    public var random: SeededRandom
    public var locale: FakeLocale
    /// Seconds since 1970 that `past` and `future` count from.
    public var now: Double

    public init(seed: UInt64, locale: FakeLocale = .en, now: Double = 0) {
        random = SeededRandom(seed: seed)
        self.locale = locale
        self.now = now
    }

    /// A bad argument or an unknown kind: said as `fake.KIND: what is wrong`.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// What ``value(_:_:)`` makes; the raw value is the script's name (`"first_name"`).
    public enum Kind: String, CaseIterable, Sendable {
        case name = "name"
        case firstName = "first_name"
        case lastName = "last_name"
        case email = "email"
        case username = "username"
        case phone = "phone"
        case company = "company"
        case jobTitle = "job_title"
        case street = "street"
        case city = "city"
        case postcode = "postcode"
        case country = "country"
        case countryCode = "country_code"
        case latitude = "latitude"
        case longitude = "longitude"
        case uuid = "uuid"
        case ulid = "ulid"
        case iban = "iban"
        case creditCard = "credit_card"
        case date = "date"
        case datetime = "datetime"
        case past = "past"
        case future = "future"
        case integer = "int"
        case decimal = "float"
        case boolean = "bool"
        case sentence = "sentence"
        case paragraph = "paragraph"
        case words = "words"
        case imageUrl = "image_url"
        case colorHex = "color_hex"
        case ipv4 = "ipv4"
        case ipv6 = "ipv6"
        case userAgent = "user_agent"
    }

    /// Every kind's name, in the order the docs list them.
    public static let kinds = Kind.allCases.map(\.rawValue)

    /// One value of `kind` with its arguments (`min`, `max`, `digits`, `p`, `from`, `to`, `days`,
    /// `words`, `n`, `w`, `h`, `brand`, `country`, `sentences`).
    public mutating func value(_ kind: String, _ args: [String: JSONValue] = [:]) throws -> JSONValue {
        guard let k = Kind(rawValue: kind) else {
            let near = EditDistance.nearest(to: kind, among: Self.kinds)
            throw Failure(description: "fake.\(kind) does not exist" + (near.map { "; did you mean fake.\($0)?" } ?? ""))
        }
        return try value(k, args)
    }

    /// ``value(_:_:)-(String,_)`` by kind (no name to look up).
    public mutating func value(_ kind: Kind, _ args: [String: JSONValue] = [:]) throws -> JSONValue {
        let label = kind.rawValue
        switch kind {
        case .name: return .string(self.name())
        case .firstName: return .string(firstName().text)
        case .lastName: return .string(lastName().text)
        case .email: return .string(email())
        case .username: return .string(username())
        case .phone: return .string(digits(locale.data.phone[random.below(locale.data.phone.count)]))
        case .company: return .string(company())
        case .jobTitle: return .string(pick(FakeData.jobTitles))
        case .street: return .string(street())
        case .city: return .string(pick(locale.data.cities))
        case .postcode: return .string(digits(locale.data.postcode))
        case .country: return .string(FakeData.countries[random.below(FakeData.countries.count)].names[locale.index])
        case .countryCode: return .string(FakeData.countries[random.below(FakeData.countries.count)].code)
        case .latitude: return .double(decimal(-90, 90, 6))
        case .longitude: return .double(decimal(-180, 180, 6))
        case .uuid: return .string(uuid())
        case .ulid: return .string(ulid())
        case .iban: return .string(try iban(args["country"]?.stringValue))
        case .creditCard: return .string(try creditCard(args["brand"]?.stringValue ?? "visa"))
        case .date: return .string(try date(args))
        case .datetime: return .string(try datetime(args))
        case .past, .future:
            let days = try number(args, "days", label) ?? 365
            guard days > 0 && days <= 3_650_000 else { throw Failure(description: "fake.\(label): days must be more than 0 (and at most 3650000)") }
            let offset = random.unit() * days * 86_400
            return .string(Self.iso8601((now + (kind == .past ? -offset : offset)).rounded(.down)))
        case .integer:
            let low = try integer(args, "min", label) ?? 0, high = try integer(args, "max", label) ?? 1000
            guard low <= high else { throw Failure(description: "fake.int: min \(low) is more than max \(high)") }
            return .integer(random.integer(low, high))
        case .decimal:
            let low = try number(args, "min", label) ?? 0, high = try number(args, "max", label) ?? 1
            guard low <= high else { throw Failure(description: "fake.float: min \(low) is more than max \(high)") }
            guard (high - low).isFinite && abs(low) < 1e300 && abs(high) < 1e300 else { throw Failure(description: "fake.float: min and max must lie within ±1e300") }
            let places = try integer(args, "digits", label) ?? 2
            guard (0...15).contains(places) else { throw Failure(description: "fake.float: digits must be 0 to 15") }
            return .double(decimal(low, high, Int(places)))
        case .boolean:
            let p = try number(args, "p", label) ?? 0.5
            guard (0...1).contains(p) else { throw Failure(description: "fake.bool: p is a probability from 0 to 1, got \(p)") }
            return .bool(random.unit() < p)
        case .sentence: return .string(sentence(words: Int(try integer(args, "words", label) ?? Int64(6 + random.below(7)))))
        case .paragraph:
            let n = Int(try integer(args, "sentences", label) ?? Int64(3 + random.below(3)))
            return .string((0..<max(1, min(n, 100))).map { _ in sentence(words: 6 + random.below(9)) }.joined(separator: " "))
        case .words:
            let n = Int(try integer(args, "n", label) ?? 3)
            return .string((0..<max(1, min(n, 1000))).map { _ in pick(FakeData.lorem) }.joined(separator: " "))
        case .imageUrl:
            let w = try integer(args, "w", label) ?? 640, h = try integer(args, "h", label) ?? 480
            guard (1...10_000).contains(w) && (1...10_000).contains(h) else { throw Failure(description: "fake.image_url: w and h are 1 to 10000 pixels") }
            return .string("https://picsum.photos/seed/\(hex(random.next() & 0xFFFF_FFFF, 8))/\(w)/\(h)")
        case .colorHex: return .string("#" + hex(random.next() & 0xFF_FFFF, 6))
        case .ipv4: return .string(ipv4())
        case .ipv6: return .string((0..<8).map { i in String(i == 0 ? 0x2000 | (random.next() & 0x0FFF) : random.next() & 0xFFFF, radix: 16) }.joined(separator: ":"))
        case .userAgent: return .string(pick(FakeData.userAgents))
        }
    }

    // MARK: people and places

    public mutating func name() -> String {
        switch locale {
        case .ja: return lastName().text + " " + firstName().text
        case .es: return firstName().text + " " + lastName().text + " " + lastName().text
        default: return firstName().text + " " + lastName().text
        }
    }

    /// A name part, and its ASCII spelling (for e-mail addresses and user names) when asked for.
    struct Part {
        let entry: String
        /// Where `|` is: a Japanese entry's romanisation follows it.
        let bar: String.Index?
        var text: String { bar.map { String(entry[..<$0]) } ?? entry }
        var ascii: String { bar.map { String(entry[entry.index(after: $0)...]) } ?? FakeData.asciiFolded(entry) }
    }

    mutating func firstName() -> Part { Self.part(pick(locale.data.firstNames)) }
    mutating func lastName() -> Part { Self.part(pick(locale.data.lastNames)) }

    static func part(_ entry: String) -> Part {
        // Only Japanese entries hold a `|`, and they are the only ones that are not ASCII-first.
        guard let first = entry.utf8.first, first >= 0x80 else { return Part(entry: entry, bar: nil) }
        return Part(entry: entry, bar: entry.utf8.firstIndex(of: UInt8(ascii: "|")))
    }

    mutating func email() -> String {
        let first = firstName().ascii, last = lastName().ascii
        let local: String
        switch random.below(4) {
        case 0: local = first + "." + last
        case 1: local = first + last + String(random.below(90) + 10)
        case 2: local = String(first.prefix(1)) + last
        default: local = first + "_" + last
        }
        return local + "@" + pick(FakeData.mailDomains)
    }

    mutating func username() -> String {
        let first = firstName().ascii, last = lastName().ascii
        return random.below(2) == 0 ? first + "." + last : first + String(last.prefix(1)) + String(random.below(900) + 100)
    }

    mutating func company() -> String {
        let last = lastName().text
        let suffixes = locale.data.companySuffixes
        let suffix = suffixes[random.below(suffixes.count)]
        return suffix.contains("%") ? suffix.replacingOccurrences(of: "%", with: last) : last + " " + suffix
    }

    mutating func street() -> String {
        let name = pick(locale.data.streets)
        let n = String(random.below(locale == .ja ? 9 : 240) + 1)
        switch locale {
        case .en: return n + " " + name + " " + pick(FakeData.englishStreetSuffixes)
        case .de: return name + " " + n
        case .fr: return n + " " + name
        case .es: return name + ", " + n
        case .ja: return name + n + "-" + String(random.below(30) + 1) + "-" + String(random.below(20) + 1)
        }
    }

    // MARK: helpers

    mutating func pick(_ list: [String]) -> String { list[random.below(list.count)] }

    /// A format's `#` as any digit, `!` as 2…9, `@` as 1…9 (byte by byte: the formats' other
    /// characters are copied as they are, UTF-8 included).
    mutating func digits(_ format: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(format.utf8.count)
        for c in format.utf8 {
            switch c {
            case UInt8(ascii: "#"): out.append(48 + UInt8(random.below(10)))
            case UInt8(ascii: "!"): out.append(50 + UInt8(random.below(8)))
            case UInt8(ascii: "@"): out.append(49 + UInt8(random.below(9)))
            default: out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    mutating func decimal(_ low: Double, _ high: Double, _ places: Int) -> Double {
        let scale = pow(10, Double(places))
        let x = ((low + (high - low) * random.unit()) * scale).rounded() / scale
        return Swift.min(Swift.max(x, low), high)
    }

    /// Lorem words, the first capitalised, and a full stop (the words are ASCII).
    mutating func sentence(words: Int) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(8 * words)
        for i in 0..<max(1, min(words, 200)) {
            if i > 0 { out.append(32) }
            out.append(contentsOf: pick(FakeData.lorem).utf8)
        }
        out[0] &= 0xDF   // upper case
        out.append(UInt8(ascii: "."))
        return String(decoding: out, as: UTF8.self)
    }

    /// `v`'s low `width` hex digits, lower case.
    func hex(_ v: UInt64, _ width: Int) -> String {
        var out = [UInt8](repeating: 48, count: width)
        Self.hex(v, into: &out, at: 0, width: width)
        return String(decoding: out, as: UTF8.self)
    }

    static func hex(_ v: UInt64, into out: inout [UInt8], at start: Int, width: Int) {
        var x = v
        for i in stride(from: start + width - 1, through: start, by: -1) {
            let d = UInt8(x & 15)
            out[i] = d < 10 ? 48 + d : 87 + d
            x >>= 4
        }
    }

    func integer(_ args: [String: JSONValue], _ name: String, _ kind: String) throws -> Int64? {
        switch args[name] {
        case nil, .null?: return nil
        case .integer(let n)?: return n
        case .double(let x)? where x.rounded() == x && abs(x) < 9e18: return Int64(x)
        case .string(let s)?: if let n = Int64(s) { return n }
        default: break
        }
        throw Failure(description: "fake.\(kind): \(name) must be an integer")
    }

    func number(_ args: [String: JSONValue], _ name: String, _ kind: String) throws -> Double? {
        switch args[name] {
        case nil, .null?: return nil
        case .integer(let n)?: return Double(n)
        case .double(let x)? where x.isFinite: return x
        case .string(let s)?: if let x = Double(s), x.isFinite { return x }
        default: break
        }
        throw Failure(description: "fake.\(kind): \(name) must be a number")
    }
}

/// The languages `mock.fake` writes names, places and phone numbers in.
public enum FakeLocale: String, CaseIterable, Sendable {
    case en, de, fr, es, ja

    /// `"en"`, `"de_DE"`, `"fr-CA"` … by language; `nil` for one there is no data for.
    public init?(named name: String) {
        let language = name.lowercased().prefix { $0 != "_" && $0 != "-" }
        self.init(rawValue: String(language))
    }

    var index: Int {
        switch self {
        case .en: return 0
        case .de: return 1
        case .fr: return 2
        case .es: return 3
        case .ja: return 4
        }
    }
    var data: FakeData.Locale { FakeData.locales[index] }
}

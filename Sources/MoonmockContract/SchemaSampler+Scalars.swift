import Foundation
import MoonmockCore

/// Strings and numbers within their schema's bounds, formats and patterns.
extension SchemaSampler {
    /// The range an integer is drawn from (`start...top`: 1...100 when the bounds allow, else
    /// near the bound that is there), and the lower bound itself.
    func integerRange(_ o: [String: JSONValue]) -> (low: Int64, start: Int64, top: Int64) {
        var low = Self.number(o["minimum"]).map { Int64(ceil(max($0, -9e18))) } ?? Int64.min
        var high = Self.number(o["maximum"]).map { Int64(floor(min($0, 9e18))) } ?? Int64.max
        // exclusiveMinimum: a number (2019 on, OpenAPI 3.1) or a flag beside minimum (draft 4, OpenAPI 3.0).
        if let x = Self.number(o["exclusiveMinimum"]) { low = max(low, Int64(floor(max(x, -9e18))) + 1) }
        else if o["exclusiveMinimum"] == .bool(true), low != .min { low += 1 }
        if let x = Self.number(o["exclusiveMaximum"]) { high = min(high, Int64(ceil(min(x, 9e18))) - 1) }
        else if o["exclusiveMaximum"] == .bool(true), high != .max { high -= 1 }
        if o["format"]?.stringValue == "int32" { low = max(low, Int64(Int32.min)); high = min(high, Int64(Int32.max)) }
        let start = low == .min ? (high == .max ? 1 : min(1, high)) : low
        let end = high == .max ? max(start, 100) : high
        return (low, start, start >= end ? start : start + min(end - start, 99))
    }

    mutating func sampleInteger(_ o: [String: JSONValue]) -> Int64 {
        let (low, start, top) = integerRange(o)
        var n = start >= top ? start : start + Int64(random.below(Int(top - start) + 1))
        if let m = Self.number(o["multipleOf"]), m >= 1, m.rounded() == m {
            let step = Int64(m)
            n = (n / step) * step
            if n < low { n += step }
        }
        return n
    }

    mutating func sampleNumber(_ o: [String: JSONValue]) -> JSONValue {
        var low = Self.number(o["minimum"]) ?? -Double.infinity
        var high = Self.number(o["maximum"]) ?? Double.infinity
        if let x = Self.number(o["exclusiveMinimum"]) { low = max(low, x + Swift.max(abs(x) * 1e-9, 0.001)) }
        else if o["exclusiveMinimum"] == .bool(true) { low += Swift.max(abs(low) * 1e-9, 0.001) }
        if let x = Self.number(o["exclusiveMaximum"]) { high = min(high, x - Swift.max(abs(x) * 1e-9, 0.001)) }
        else if o["exclusiveMaximum"] == .bool(true) { high -= Swift.max(abs(high) * 1e-9, 0.001) }
        if let m = Self.number(o["multipleOf"]), m > 0 {
            let first = low.isFinite ? (low / m).rounded(.up) : 1
            let k = high.isFinite ? min(first + Double(random.below(5)), (high / m).rounded(.down)) : first + Double(random.below(5))
            let x = k * m
            return x.rounded() == x && abs(x) < 9e15 ? .integer(Int64(x)) : .double(x)
        }
        let start = low.isFinite ? low : (high.isFinite ? min(1.5, high) : 1.5)
        let end = high.isFinite ? high : start + 100
        let x = start + (end - start) * Double(random.below(1000)) / 1000
        return .double((x * 100).rounded() / 100 >= low && (x * 100).rounded() / 100 <= high ? (x * 100).rounded() / 100 : x)
    }

    mutating func sampleString(_ o: [String: JSONValue]) -> String {
        let least = o["minLength"].flatMap(Self.integer).map(Int.init) ?? 0
        let most = o["maxLength"].flatMap(Self.integer).map(Int.init) ?? Int.max
        if let pattern = o["pattern"]?.stringValue {
            for _ in 0..<6 {
                if var regex = RegexSampler(pattern, random: &random) {
                    let s = regex.sample()
                    if s.count >= least && s.count <= most { return s }
                }
            }
        }
        let n = random.below(900) + 100
        var s: String
        switch o["format"]?.stringValue {
        case "date"?: s = "2026-\(two(n % 12 + 1))-\(two(n % 28 + 1))"
        case "date-time"?: s = "2026-\(two(n % 12 + 1))-\(two(n % 28 + 1))T\(two(n % 24)):\(two(n % 60)):00Z"
        case "time"?: s = "\(two(n % 24)):\(two(n % 60)):00Z"
        case "email"?: s = "user\(n)@example.com"
        case "uuid"?:
            let a = random.next(), b = random.next()
            let hex = hex16(a) + hex16(b)
            let c = Array(hex)
            s = String(c[0..<8]) + "-" + String(c[8..<12]) + "-4" + String(c[13..<16]) + "-a" + String(c[17..<20]) + "-" + String(c[20..<32])
        case "uri"?, "url"?, "iri"?: s = "https://example.com/items/\(n)"
        case "uri-reference"?, "iri-reference"?: s = "/items/\(n)"
        case "hostname"?, "idn-hostname"?: s = "host\(n).example.com"
        case "ipv4"?: s = "192.0.2.\(n % 250 + 1)"
        case "ipv6"?: s = "2001:db8::\(String(n, radix: 16))"
        case "byte"?: s = Data("sample \(n)".utf8).base64EncodedString()
        case "password"?: s = "secret-\(n)"
        case "int32"?, "int64"?: s = String(n)
        default: s = Self.words[random.below(Self.words.count)] + " \(n)"
        }
        if s.count > most { s = String(s.prefix(most)) }
        while s.count < least { s += "x" }
        return s
    }

    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }

    func hex16(_ n: UInt64) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    static let words = ["alpha", "bravo", "cedar", "delta", "ember", "fjord", "grove", "harbor", "island", "juniper", "koala", "lumen"]
}

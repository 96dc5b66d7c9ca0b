extension JSONValue {
    /// Compact, deterministic JSON: object keys sorted by their UTF-8 bytes, integers without
    /// a fraction, doubles in the shortest form that round-trips.
    ///
    /// ```swift
    /// JSONValue.object(["b": .integer(1), "a": .null]).encoded()   // {"a":null,"b":1}
    /// ```
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(into: &out)
        return out
    }

    /// Appends the encoding to `out`.
    public func encode(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b): b ? (out += [0x74, 0x72, 0x75, 0x65]) : (out += [0x66, 0x61, 0x6C, 0x73, 0x65])
        case .integer(let i): JSONValue.appendDecimal(i, into: &out)
        case .double(let d): out.append(contentsOf: Array(JSONValue.format(d).utf8))
        case .string(let s): JSONValue.encodeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (n, v) in a.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                v.encode(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            for (n, key) in o.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.encodeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                o[key]!.encode(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A double as JSON: Swift's shortest round-tripping form (`2.5`, `1e+20`, both valid
    /// JSON); non-finite values, which JSON cannot express, become `null`.
    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        return d.description
    }

    /// Writes a JSON string literal, escaping quotes, backslashes and control characters
    /// (NUL included, as `\u0000`).
    public static func encodeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Fast path: nothing to escape (the common case for keys and values).
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
            default: out.append(c)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Writes the decimal digits of `value` without building a String.
    static func appendDecimal(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var n = 20
            repeat {
                n -= 1
                digits[n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[n...]))
        }
    }
}

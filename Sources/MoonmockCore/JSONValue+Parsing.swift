/// A JSON document that could not be parsed, with the byte offset of the problem.
public struct JSONParseError: Error, CustomStringConvertible, Sendable, Equatable {
    public let offset: Int
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// How deep arrays and objects may nest in a document ``init(parsing:maxDepth:)`` accepts by
    /// default (deeper is an error, not a stack overflow).
    public static let maxParseDepth = 512

    /// Parses UTF-8 JSON (RFC 8259). Integers that fit `Int64` stay integers.
    ///
    /// ```swift
    /// let v = try JSONValue(parsing: Array("[1, 2.5, null]".utf8))
    /// ```
    public init<C: Collection>(parsing bytes: C, maxDepth: Int = JSONValue.maxParseDepth) throws where C.Element == UInt8 {
        let value: JSONValue? = try bytes.withContiguousStorageIfAvailable { buf in
            var parser = JSONParser(buf, maxDepth: maxDepth)
            return try parser.parseDocument()
        }
        if let value { self = value; return }
        let copy = Array(bytes)
        self = try copy.withUnsafeBufferPointer { buf in
            var parser = JSONParser(buf, maxDepth: maxDepth)
            return try parser.parseDocument()
        }
    }
}

private struct JSONParser {
    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    let maxDepth: Int
    var depth = 0

    init(_ b: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.b = b
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    mutating func skipSpace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    mutating func parseDocument() throws -> JSONValue {
        skipSpace()
        let v = try parseValue()
        skipSpace()
        if i != b.count { throw fail("unexpected data after the value") }
        return v
    }

    mutating func parseValue() throws -> JSONValue {
        guard i < b.count else { throw fail("unexpected end of input") }
        switch b[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character '\(Character(Unicode.Scalar(b[i])))'")
        }
    }

    mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { throw fail("unexpected end of input") }
        for k in 0..<n where b[i + k] != word.utf8Start[k] { throw fail("invalid literal") }
        i += n
    }

    mutating func enter() throws {
        depth += 1
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
    }

    mutating func parseObject() throws -> JSONValue {
        try enter(); defer { depth -= 1 }
        i += 1
        var object: [String: JSONValue] = [:]
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(object) }
        while true {
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try parseString()
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            object[key] = try parseValue()
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; return .object(object) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func parseArray() throws -> JSONValue {
        try enter(); defer { depth -= 1 }
        i += 1
        var array: [JSONValue] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(array) }
        while true {
            skipSpace()
            array.append(try parseValue())
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "]") { i += 1; return .array(array) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func parseString() throws -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < b.count, b[i] != UInt8(ascii: "\""), b[i] != UInt8(ascii: "\\") {
            if b[i] < 0x20 { throw fail("control character in string") }
            i += 1
        }
        guard i < b.count else { throw fail("unterminated string") }
        if b[i] == UInt8(ascii: "\"") {
            i += 1
            return String(decoding: UnsafeBufferPointer(rebasing: b[start..<(i - 1)]), as: UTF8.self)
        }
        var out = Array(b[start..<i])
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; return String(decoding: out, as: UTF8.self) }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < b.count else { break }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar), i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") {
                    i += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else { throw fail("invalid surrogate pair") }
                }
                let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw fail("invalid escape")
            }
        }
        throw fail("unterminated string")
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= b.count else { throw fail("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = i
        var integral = true
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) else { throw fail("invalid number") }
        if b[i] == UInt8(ascii: "0") { i += 1 } else { while i < b.count, isDigit(b[i]) { i += 1 } }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            integral = false
            i += 1
            guard i < b.count, isDigit(b[i]) else { throw fail("invalid number") }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            integral = false
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { throw fail("invalid number") }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        if integral, let v = Int64(text) { return .integer(v) }
        guard let d = Double(text) else { throw fail("invalid number") }
        // JSON has no infinity: a number past Double's range (1e400) would not survive encoding.
        guard d.isFinite else { throw fail("number out of range") }
        return .double(d)
    }

    func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}

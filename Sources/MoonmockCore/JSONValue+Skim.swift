import Foundation

extension JSONValue {
    /// The string value of `key` in a top-level JSON object, found without building the document:
    /// other members are checked, not decoded. `nil` when the bytes are not a JSON object
    /// ``init(parsing:maxDepth:)`` would accept, the key is missing or its value is not a string.
    /// Always the same answer as parsing the document and reading the key (of duplicate keys the
    /// last wins). Used on the GraphQL hot path for `operationName`: a body that names an
    /// operation but is not JSON (cut short, say) names none, as it would for a GraphQL server.
    ///
    /// ```swift
    /// JSONValue.topLevelString("operationName", in: Array(#"{"query":"…","operationName":"GetUser"}"#.utf8))   // "GetUser"
    /// JSONValue.topLevelString("operationName", in: Array(#"{"operationName":"GetUser","vari"#.utf8))       // nil
    /// ```
    public static func topLevelString(_ key: String, in bytes: [UInt8]) -> String? {
        var key = key
        // The key's bytes in place (no array per call: this runs for every GraphQL request).
        return key.withUTF8 { target in bytes.withUnsafeBufferPointer { b -> String? in
            guard let (member, escapedKey) = Skim.topLevelMember(target, in: b) else { return nil }
            if escapedKey {
                // A key spelled with escapes may be `key` too: the parser decides (rare).
                guard case .object(let object)? = try? JSONValue(parsing: b) else { return nil }
                return object[String(decoding: target, as: UTF8.self)]?.stringValue
            }
            guard case .string(let range, let escaped)? = member else { return nil }
            if escaped { return (try? JSONValue(parsing: b[(range.lowerBound - 1)...range.upperBound]))?.stringValue }
            return String(decoding: b[range], as: UTF8.self)
        } }
    }
}

/// A check of a JSON document against the grammar ``JSONParser`` accepts (the same strings,
/// escapes, numbers and nesting limit) that builds nothing: one pass over the bytes as a loop
/// over tokens (no call per value), strings eight bytes at a time.
private enum Skim {
    enum Member {
        /// A string value: its bytes between the quotes, and whether they hold escapes.
        case string(Range<Int>, escaped: Bool)
        case other
    }

    /// Where the loop is: at a value, just after one, or at an object's key.
    private enum At { case value, afterValue, key }

    /// The last top-level member named `target` (`found` is `nil` when there is none), and
    /// whether a top-level key had escapes (it is then not compared byte for byte); `nil` when
    /// the document is not a valid JSON object.
    static func topLevelMember(_ target: UnsafeBufferPointer<UInt8>, in b: UnsafeBufferPointer<UInt8>) -> (found: Member?, escapedKey: Bool)? {
        var start = 0
        space(b, &start)
        guard start < b.count, b[start] == UInt8(ascii: "{") else { return nil }
        // Whether each open container is an object, by depth (index 0 unused).
        return withUnsafeTemporaryAllocation(of: Bool.self, capacity: JSONValue.maxParseDepth + 1) { isObject in
            // Locals of the closure, not captured: kept in registers.
            let n = b.count
            var i = start
            var depth = 0
            var at = At.value
            var found: Member?
            var escapedKey = false
            /// The value about to be read is the member named `target`.
            var named = false
            while true {
                space(b, &i)
                guard i < n else { return depth == 0 && at == .afterValue ? (found, escapedKey) : nil }
                let c = b[i]
                switch at {
                case .value:
                    let isNamed = named
                    if isNamed { found = .other }   // unless a string, below
                    named = false
                    at = .afterValue
                    switch c {
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth &+= 1
                        if depth > JSONValue.maxParseDepth { return nil }
                        let object = c == UInt8(ascii: "{")
                        isObject[depth] = object
                        i &+= 1
                        space(b, &i)
                        guard i < n else { return nil }
                        if b[i] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                            i &+= 1
                            depth &-= 1
                        } else {
                            at = object ? .key : .value
                        }
                    case UInt8(ascii: "\""):
                        var escaped = false
                        let start = i &+ 1
                        guard string(b, &i, &escaped) else { return nil }
                        if isNamed { found = .string(start..<(i &- 1), escaped: escaped) }
                    case UInt8(ascii: "t"): guard literal("true", b, &i) else { return nil }
                    case UInt8(ascii: "f"): guard literal("false", b, &i) else { return nil }
                    case UInt8(ascii: "n"): guard literal("null", b, &i) else { return nil }
                    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): guard number(b, &i) else { return nil }
                    default: return nil
                    }
                case .afterValue:
                    guard depth > 0 else { return nil }   // bytes after the document
                    let object = isObject[depth]
                    if c == UInt8(ascii: ",") {
                        i &+= 1
                        at = object ? .key : .value
                    } else if c == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i &+= 1
                        depth &-= 1
                    } else {
                        return nil
                    }
                case .key:
                    guard c == UInt8(ascii: "\"") else { return nil }
                    var escaped = false
                    let start = i &+ 1
                    guard string(b, &i, &escaped) else { return nil }
                    if depth == 1 {
                        escapedKey = escapedKey || escaped
                        let count = i &- 1 &- start
                        named = !escaped && count == target.count
                            && (count == 0 || memcmp(target.baseAddress!, b.baseAddress! + start, count) == 0)
                    }
                    space(b, &i)
                    guard i < n, b[i] == UInt8(ascii: ":") else { return nil }
                    i &+= 1
                    at = .value
                }
            }
        }
    }

    @inline(__always)
    private static func space(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    /// A string at `i` (on its opening quote), left just past its closing quote; `false` when it
    /// is unterminated or has a control character or a bad escape. `escaped` says it had escapes.
    @inline(__always)
    private static func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ escaped: inout Bool) -> Bool {
        i += 1
        while true {
            i = stop(b, from: i)
            guard i < b.count else { return false }
            if b[i] == UInt8(ascii: "\"") { i += 1; return true }
            guard b[i] == UInt8(ascii: "\\"), i + 1 < b.count else { return false }   // a control character, or a cut escape
            escaped = true
            guard escape(b, &i) else { return false }
        }
    }

    /// The escape at `i` (on its backslash), left just past it.
    private static func escape(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        let e = b[i + 1]
        i += 2
        switch e {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return true
        case UInt8(ascii: "u"):
            guard let scalar = hex4(b, &i) else { return false }
            // A high surrogate followed by another \u escape must pair with a low one.
            if (0xD800..<0xDC00).contains(scalar), i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") {
                i += 2
                guard let low = hex4(b, &i), (0xDC00..<0xE000).contains(low) else { return false }
            }
            return true
        default:
            return false
        }
    }

    private static func hex4(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> UInt32? {
        guard i + 4 <= b.count else { return nil }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = v << 4 | UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = v << 4 | UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = v << 4 | UInt32(c - UInt8(ascii: "A") + 10)
            default: return nil
            }
            i += 1
        }
        return v
    }

    private static func literal(_ word: StaticString, _ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        for k in 0..<n where b[i + k] != word.utf8Start[k] { return false }
        i += n
        return true
    }

    /// RFC 8259's number: `-`? (`0` | digits) (`.` digits)? ((`e`|`E`) (`+`|`-`)? digits)?
    private static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, isDigit(b[i]) else { return false }
        if b[i] == UInt8(ascii: "0") { i += 1 } else { digits(b, &i) }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard i < b.count, isDigit(b[i]) else { return false }
            digits(b, &i)
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { return false }
            digits(b, &i)
        }
        return true
    }

    private static func digits(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) { while i < b.count, isDigit(b[i]) { i += 1 } }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }


    /// The index of the first `"`, `\` or control character (below 0x20) in `b` from `from` on
    /// (`b.count` when none), eight bytes at a time: most of a GraphQL body is plain string text.
    @inline(__always)
    private static func stop(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from
        #if _endian(little)
        if let base = b.baseAddress {
            while b.count - i >= 8 {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let quote = w ^ 0x2222_2222_2222_2222, slash = w ^ 0x5C5C_5C5C_5C5C_5C5C
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                // A zero byte of `quote` or `slash`, or a byte below 0x20 in `w`, sets its high
                // bit; a false one can only sit above a true one, so the lowest set bit is exact.
                let control = (w &- 0x2020_2020_2020_2020) & ~w
                let stops = (((quote &- ones) & ~quote) | ((slash &- ones) & ~slash) | control) & highs
                if stops != 0 { return i + stops.trailingZeroBitCount / 8 }
                i += 8
            }
        }
        #endif
        while i < b.count && b[i] != UInt8(ascii: "\"") && b[i] != UInt8(ascii: "\\") && b[i] >= 0x20 { i += 1 }
        return i
    }
}

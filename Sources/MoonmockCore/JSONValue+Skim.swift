import Foundation

extension JSONValue {
    /// The string value of `key` in a top-level JSON object, found without building the document:
    /// other members are skipped, not decoded. `nil` when the bytes are not an object, the key is
    /// missing or not a string. Used on the GraphQL hot path for `operationName`.
    ///
    /// ```swift
    /// JSONValue.topLevelString("operationName", in: Array(#"{"query":"…","operationName":"GetUser"}"#.utf8))   // "GetUser"
    /// ```
    public static func topLevelString(_ key: String, in bytes: [UInt8]) -> String? {
        var key = key
        // The key's bytes in place (no array per call: this runs for every GraphQL request).
        return key.withUTF8 { target in bytes.withUnsafeBufferPointer { b -> String? in
            var i = 0
            func space() { while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }
            /// Skips a string at `i` (on the opening quote); returns its raw range, and whether it had escapes.
            func skipString() -> (Range<Int>, Bool)? {
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
                i += 1
                let start = i
                var escaped = false
                while true {
                    i = quoteOrBackslash(b, from: i)
                    guard i < b.count else { return nil }
                    if b[i] == UInt8(ascii: "\"") { i += 1; return (start..<(i - 1), escaped) }
                    escaped = true
                    i += 2
                }
            }
            /// Skips any value, counting brackets outside strings.
            func skipValue() -> Bool {
                guard i < b.count else { return false }
                if b[i] == UInt8(ascii: "\"") { return skipString() != nil }
                var depth = 0
                while i < b.count {
                    let c = b[i]
                    if c == UInt8(ascii: "\"") { guard skipString() != nil else { return false }; continue }
                    if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { depth += 1 }
                    if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                        if depth == 0 { return true }
                        depth -= 1
                        if depth == 0 { i += 1; return true }
                    }
                    if depth == 0 && c == UInt8(ascii: ",") { return true }
                    i += 1
                }
                return depth == 0
            }
            space()
            guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
            i += 1
            while true {
                space()
                guard let (keyRange, keyEscaped) = skipString() else { return nil }
                space()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                space()
                let matches = !keyEscaped && keyRange.count == target.count
                    && (target.isEmpty || memcmp(target.baseAddress!, b.baseAddress! + keyRange.lowerBound, target.count) == 0)
                if matches {
                    guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
                    let valueStart = i
                    guard let (range, escaped) = skipString() else { return nil }
                    if escaped { return (try? JSONValue(parsing: b[valueStart..<i]))?.stringValue }
                    return String(decoding: b[range], as: UTF8.self)
                }
                guard skipValue() else { return nil }
                space()
                guard i < b.count else { return nil }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                return nil
            }
        } }
    }

    /// The index of the first `"` or `\` in `b` from `from` on (`b.count` when none), eight bytes
    /// at a time: the text between a GraphQL body's keys is mostly plain.
    @inline(__always)
    private static func quoteOrBackslash(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from
        #if _endian(little)
        if let base = b.baseAddress {
            while b.count - i >= 8 {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let quote = w ^ 0x2222_2222_2222_2222, slash = w ^ 0x5C5C_5C5C_5C5C_5C5C
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                // A zero byte of `quote` or `slash` sets its high bit; a false one can only sit
                // above a true one, so the lowest set bit is exact.
                let stops = (((quote &- ones) & ~quote) | ((slash &- ones) & ~slash)) & highs
                if stops != 0 { return i + stops.trailingZeroBitCount / 8 }
                i += 8
            }
        }
        #endif
        while i < b.count && b[i] != UInt8(ascii: "\"") && b[i] != UInt8(ascii: "\\") { i += 1 }
        return i
    }
}

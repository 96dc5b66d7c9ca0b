/// Finding one of two bytes in a run of bytes, eight at a time: the request parser looks for CR
/// and NUL in header values, the response writer for CR and LF in a script's header fields.
///
/// ```swift
/// let bytes: [UInt8] = Array("a long header value\r".utf8)
/// bytes.withUnsafeBufferPointer { ByteScan.firstIndex(of: 0x0D, or: 0x0A, in: $0.baseAddress!, 0, $0.count) }   // 19
/// ```
enum ByteScan {
    /// The index of the first `a` or `b` in `base[start..<end]`, or `end`.
    @inline(__always)
    static func firstIndex(of a: UInt8, or b: UInt8, in base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let aa = ones &* UInt64(a), bb = ones &* UInt64(b)
        var i = start
        // Whole words while no byte of them can be `a` or `b` (a zero byte of `word ^ aa`); a
        // flagged word (which may be a false alarm past a match) is settled byte by byte.
        while end - i >= 8 {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let x = word ^ aa, y = word ^ bb
            if ((x &- ones) & ~x | (y &- ones) & ~y) & highs != 0 { break }
            i += 8
        }
        while i < end && base[i] != a && base[i] != b { i += 1 }
        return i
    }
}

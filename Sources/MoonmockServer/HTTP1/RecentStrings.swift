#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The request target and `Host` value of a loop's previous request head. A client sends the
/// same `Host` on every request and often the same target: when the bytes match, the string
/// made last time is handed out again (a compare instead of a UTF-8 check and, past 15 bytes,
/// an allocation).
struct RecentStrings {
    private var lastTarget = ""
    private var lastHost = ""

    mutating func target(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> String {
        Self.reuse(&lastTarget, base, start, end)
    }

    /// The `Host` value, or `nil` when it is not `host[:port]` (RFC 3986 reg-name, IPv4 or
    /// `[IPv6]`). Checked only when it differs from the last one, which was valid.
    mutating func host(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> String? {
        let n = end - start
        if lastHost.utf8.count == n && lastHost.withUTF8Bytes({ n == 0 || memcmp($0.baseAddress!, base + start, n) == 0 }) {
            return lastHost
        }
        guard Self.isValidHost(base + start, n) else { return nil }
        lastHost = String(decoding: UnsafeBufferPointer(start: base + start, count: n), as: UTF8.self)
        return lastHost
    }

    /// `uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 3986 §3.2.2): a reg-name or IPv4 address, or
    /// an IP literal in brackets, then at most five port digits. Empty is valid here (the caller
    /// decides what an empty `Host` means).
    static func isValidHost(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        if n > 0 && p[0] == 0x5B {   // "["
            i = 1
            while i < n && p[i] != 0x5D {   // "]"
                let b = p[i]
                guard (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x66) || b == 0x3A || b == 0x2E else { return false }
                i += 1
            }
            guard i < n, i > 1 else { return false }
            i += 1
        } else {
            // unreserved, sub-delims and "%" (of pct-encoded).
            let regName: StaticString = """
                00000000000000000000000000000000\
                01001111111111101111111111010100\
                01111111111111111111111111100001\
                01111111111111111111111111100010
                """
            while i < n && p[i] != 0x3A {
                guard p[i] < 128 && regName.utf8Start[Int(p[i])] == 0x31 else { return false }
                i += 1
            }
        }
        if i == n { return true }
        guard p[i] == 0x3A, n - i - 1 <= 5 else { return false }
        i += 1
        while i < n {
            guard p[i] >= 0x30 && p[i] <= 0x39 else { return false }
            i += 1
        }
        return true
    }

    @inline(__always)
    private static func reuse(_ last: inout String, _ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> String {
        let n = end - start
        let same = last.utf8.count == n && last.withUTF8Bytes { n == 0 || memcmp($0.baseAddress!, base + start, n) == 0 }
        if !same { last = String(decoding: UnsafeBufferPointer(start: base + start, count: n), as: UTF8.self) }
        return last
    }
}

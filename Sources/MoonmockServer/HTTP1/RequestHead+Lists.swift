#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The parts of the head parser that read a field's comma-separated list, and the request
/// target's form.
extension RequestHead {
    /// Calls `body` with each element of a comma-separated field value (RFC 9110 §5.6.1), without
    /// the spaces and tabs around it; empty elements are skipped. Bytes, not `String.split`: a
    /// `Connection: close` request would otherwise spend a sixth of its instructions here.
    @inline(__always)
    static func forEachListElement(_ value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let base = value.baseAddress else { return }
        var start = 0
        while start < value.count {
            var end = start
            while end < value.count && value[end] != 0x2C { end += 1 }   // ","
            var a = start, b = end
            while a < b && (value[a] == space || value[a] == tab) { a += 1 }
            while b > a && (value[b - 1] == space || value[b - 1] == tab) { b -= 1 }
            if a < b { body(UnsafeRawBufferPointer(start: base + a, count: b - a)) }
            start = end + 1
        }
    }

    /// Whether a comma-separated value has an element that is empty or only spaces and tabs.
    static func hasEmptyElement(_ value: UnsafeRawBufferPointer) -> Bool {
        var sawContent = false
        for byte in value {
            if byte == 0x2C {
                if !sawContent { return true }
                sawContent = false
            } else if byte != space && byte != tab {
                sawContent = true
            }
        }
        return !sawContent
    }

    /// Whether `bytes`, lowercased, spell `lowercase`.
    @inline(__always)
    static func equalsLowercased(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for i in 0..<bytes.count {
            var byte = bytes[i]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if byte != expected[i] { return false }
        }
        return true
    }

    /// A target that does not start with `/`: `nil` for the absolute form (`http://host/path`)
    /// and for `OPTIONS *`, else the refusal.
    static func checkTargetForm(_ base: UnsafePointer<UInt8>, _ lineStart: Int, _ sp1: Int, _ sp2: Int) -> Parse? {
        let method = UnsafeRawBufferPointer(start: base + lineStart, count: sp1 - lineStart)
        let target = UnsafeRawBufferPointer(start: base + sp1 + 1, count: sp2 - sp1 - 1)
        if method.elementsEqual("CONNECT".utf8) {
            return .invalid(status: 501, message: "CONNECT is not supported: Moonmock is not a proxy")
        }
        if target.count == 1 && target[0] == UInt8(ascii: "*") {
            return method.elementsEqual("OPTIONS".utf8) ? nil : .invalid(status: 400, message: "the asterisk form (*) is only for OPTIONS")
        }
        // The absolute form: scheme "://" ...; anything else (the authority form host:port) is CONNECT's.
        var i = 0
        while i < target.count && (isAlpha(target[i]) || (i > 0 && (isDigit(target[i]) || target[i] == 0x2B || target[i] == 0x2D || target[i] == 0x2E))) { i += 1 }
        if i > 0 && target.count > i + 3 && target[i] == colonByte && target[i + 1] == slash && target[i + 2] == slash { return nil }
        return .invalid(status: 400, message: "malformed request target: origin form (/path) or absolute form (http://host/path) expected")
    }

    @inline(__always)
    static func isAlpha(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
}

private let space: UInt8 = 0x20, tab: UInt8 = 0x09, colonByte: UInt8 = 0x3A, slash: UInt8 = 0x2F

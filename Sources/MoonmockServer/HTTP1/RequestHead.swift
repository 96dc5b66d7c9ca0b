#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// A parsed HTTP/1.x request line and header section: what the server's own HTTP layer needs to
/// frame the body and decide whether the connection stays open.
///
/// ```swift
/// let text = Array("GET /users/7 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
/// if case .complete(let head, let length) = text.withUnsafeBytes({ RequestHead.parse($0, limit: 16384) }) {
///     head.method   // "GET"
///     length        // 35: where the body (or the next request) starts
/// }
/// ```
struct RequestHead {
    var method: String
    /// The request target as sent (origin form: path and query).
    var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1 (and any later HTTP/1.x, served as 1.1).
    var minorVersion: Int
    /// Where the header lines (checked, up to the blank line) lie in the bytes the head was
    /// parsed from: they are copied only when the request is built, into blocks a server reuses.
    var lineRange: Range<Int>
    /// The header lines copied out, once the head has to outlive those bytes (a body that
    /// arrives in later reads).
    var keptLines: [UInt8]?
    /// `Content-Length`, when given.
    var contentLength: Int?
    /// `Transfer-Encoding: chunked`.
    var chunked = false
    /// Whether the client lets the connection stay open (HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`).
    var keepAlive: Bool
    /// `Expect: 100-continue`: the client waits for a `100 Continue` before sending the body.
    var expectContinue = false
    /// The first `Host` field's value, noted while parsing (no lookup afterwards).
    var host: String?
    /// A `Range` field is among the lines (an answer offering ranges then looks at it).
    var namesRange = false
    /// An `HTTP2-Settings` field is among the lines (with `Upgrade: h2c`, a switch to HTTP/2).
    var http2Settings = false

    /// Copies the header lines out of `bytes`, the buffer the head was parsed from, for when
    /// that buffer is gone.
    mutating func keepLines(from bytes: UnsafeRawBufferPointer) {
        if keptLines == nil { keptLines = Array(UnsafeRawBufferPointer(rebasing: bytes[lineRange])) }
    }

    /// The header lines: the copy ``keepLines(from:)`` made, else those in `bytes` (the buffer
    /// the head was parsed from).
    func withLines<R>(in bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let keptLines { return keptLines.withUnsafeBytes(body) }
        return body(UnsafeRawBufferPointer(rebasing: bytes[lineRange]))
    }

    /// The header fields, read from `bytes` (the buffer the head was parsed from) or the copy.
    func headers(in bytes: UnsafeRawBufferPointer) -> HTTPHeaders {
        withLines(in: bytes) { HTTPHeaders(validatedLines: Array($0)) }
    }

    /// The outcome of reading a header section from the start of a buffer.
    enum Parse {
        /// No blank line yet: read more.
        case incomplete
        /// The head, and how many bytes it took (the body starts there).
        case complete(RequestHead, Int)
        /// Not acceptable: answer `status` with `message` and close.
        case invalid(status: Int, message: String)
    }

    /// Parses the request line and headers at the start of `bytes`; `limit` bounds the header
    /// section (431 beyond it). Bare-LF line ends are accepted in the head (not before it),
    /// obsolete line folding and anything that could smuggle a second request are refused.
    static func parse(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Parse {
        var recent = RecentStrings()
        return parse(bytes, limit: limit, recent: &recent)
    }

    /// `parse(_:limit:)`, reusing the strings of the previous head where the bytes are the same.
    static func parse(_ bytes: UnsafeRawBufferPointer, limit: Int, recent: inout RecentStrings) -> Parse {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .incomplete }
        let count = bytes.count
        let position = 0
        // RFC 9112 §2.2 lets a server ignore empty lines before the request line; this one does
        // not (as h11 does not): a request starts with its method, and anything else is refused.
        if count == 0 { return .incomplete }

        // One pass over the lines, each checked as it is found: nothing is built but the flags
        // and two strings until the blank line has arrived (a head read in parts is parsed again).
        guard let first = nextLine(base, from: position, count: count) else {
            return count - position > limit ? .invalid(status: 431, message: "request line longer than \(limit) bytes") : .incomplete
        }
        if first.next - position > limit { return .invalid(status: 431, message: "header section larger than \(limit) bytes") }
        let lines = first

        // Request line: method SP target SP HTTP-version.
        let lineStart = lines.start, lineEnd = lines.end
        var sp1 = lineStart
        while sp1 < lineEnd && base[sp1] != space { sp1 += 1 }
        var sp2 = sp1 + 1
        while sp2 < lineEnd && base[sp2] != space { sp2 += 1 }
        guard sp1 > lineStart, sp1 < lineEnd, sp2 > sp1 + 1, sp2 < lineEnd else {
            return .invalid(status: 400, message: "malformed request line")
        }
        for i in lineStart..<sp1 where !isToken(base[i]) { return .invalid(status: 400, message: "malformed method") }
        // Visible ASCII only (RFC 3986: anything else is percent-encoded).
        for i in (sp1 + 1)..<sp2 where base[i] <= space || base[i] >= 0x7F {
            return .invalid(status: 400, message: "malformed request target")
        }
        let version = UnsafeRawBufferPointer(start: base + sp2 + 1, count: lineEnd - sp2 - 1)
        let minor: Int
        if let known = httpMinor(version) { minor = known } else {
            if version.count == 8 && version.starts(with: "HTTP/".utf8) && isDigit(version[5]) && version[6] == UInt8(ascii: ".") && isDigit(version[7]) {
                // A later HTTP/1.x is answered as 1.1 (RFC 9110 §2.5); another major version is not ours.
                if version[5] == UInt8(ascii: "1") { return parse(base, count, position, lines, sp1, sp2, minor: 1, limit: limit, recent: &recent) }
                return .invalid(status: 505, message: "HTTP version not supported")
            }
            return .invalid(status: 400, message: "malformed HTTP version")
        }
        return parse(base, count, position, lines, sp1, sp2, minor: minor, limit: limit, recent: &recent)
    }

    /// The rest of `parse` once the request line's version is known: the target's form, then the
    /// header fields.
    @inline(__always)
    private static func parse(_ base: UnsafePointer<UInt8>, _ count: Int, _ position: Int, _ lines: (start: Int, end: Int, next: Int),
                              _ sp1: Int, _ sp2: Int, minor: Int, limit: Int, recent: inout RecentStrings) -> Parse {
        let lineStart = lines.start
        // RFC 9112 §3.2: the origin form for every method; the asterisk form for OPTIONS only, the
        // authority form for CONNECT only (which a mock server does not do), and the absolute form.
        if base[sp1 + 1] != slash {
            if let refusal = checkTargetForm(base, lineStart, sp1, sp2) { return refusal }
        } else if sp1 - lineStart == 7 && spells(base + lineStart, "CONNECT") {
            return .invalid(status: 501, message: "CONNECT is not supported: Moonmock is not a proxy")
        }
        // The head's parts are locals until the end, then moved into it: a `RequestHead` built
        // early and filled in would be copied (a retain and a release per string) on return.
        let method = common(base, lineStart, sp1), target = recent.target(base, sp1 + 1, sp2)
        var contentLength: Int?, host: String?
        var chunked = false, expectContinue = false, namesRange = false, http2Settings = false
        var hosts = 0, invalidHost = false
        var firstLength = (start: 0, count: 0)
        // Transfer-Encoding over all its lines: how many `chunked`, and the first other coding.
        var chunkedCodings = 0, otherCoding: String?

        // Header fields: name ":" OWS value OWS.
        var connectionClose = false, connectionKeepAlive = false, transferEncoding = false
        var cursor = lines.next, scan = 0
        while true {
            guard let line = nextLine(base, from: cursor, count: count) else {
                return count - position > limit ? .invalid(status: 431, message: "header section larger than \(limit) bytes") : .incomplete
            }
            if line.next - position > limit { return .invalid(status: 431, message: "header section larger than \(limit) bytes") }
            if line.end == line.start { scan = line.next; break }   // the blank line: the head is whole
            cursor = line.next
            if base[line.start] == space || base[line.start] == tab {
                return .invalid(status: 400, message: "obsolete line folding in the header section")
            }
            // The colon, then the name before it: a common name spelled exactly is all tchars;
            // any other name is checked byte by byte.
            let found = memchr(base + line.start, Int32(colonByte), line.end - line.start)
            let colon = found.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? line.end
            if !isCommonName(base, line.start, colon) {
                for i in line.start..<colon where !isToken(base[i]) {
                    return .invalid(status: 400, message: "malformed header field name")
                }
            }
            guard colon > line.start, colon < line.end else { return .invalid(status: 400, message: "malformed header field") }
            var valueStart = colon + 1, valueEnd = line.end
            while valueStart < valueEnd && (base[valueStart] == space || base[valueStart] == tab) { valueStart += 1 }
            while valueEnd > valueStart && (base[valueEnd - 1] == space || base[valueEnd - 1] == tab) { valueEnd -= 1 }
            if hasCROrNUL(base, valueStart, valueEnd) {
                return .invalid(status: 400, message: "control character in a header value")
            }
            let name = UnsafeRawBufferPointer(start: base + line.start, count: colon - line.start)
            let value = UnsafeRawBufferPointer(start: base + valueStart, count: valueEnd - valueStart)
            switch name.count {
            case 14 where nameEquals(name, "content-length"):
                var length = 0
                guard !value.isEmpty, value.count <= 18 else { return .invalid(status: 400, message: "invalid Content-Length") }
                for byte in value {
                    guard isDigit(byte) else { return .invalid(status: 400, message: "invalid Content-Length") }
                    length = length * 10 + Int(byte - UInt8(ascii: "0"))
                }
                // A repeated Content-Length is refused unless it is the same text (RFC 9110 §8.6:
                // "03" and "3" agree in value, but not every reader would say so).
                if contentLength != nil {
                    guard firstLength.count == value.count, memcmp(base + firstLength.start, value.baseAddress!, value.count) == 0 else {
                        return .invalid(status: 400, message: "conflicting Content-Length fields")
                    }
                }
                firstLength = (valueStart, value.count)
                contentLength = length
            case 14 where nameEquals(name, "http2-settings"):
                http2Settings = true
            case 17 where nameEquals(name, "transfer-encoding"):
                // Judged once every line is in (RFC 9112 §6.1: the lines combine into one list).
                transferEncoding = true
                // An empty element (`, chunked`) is refused here, though RFC 9110 §5.6.1 would
                // skip it: readers that do not skip it would frame the body otherwise.
                if hasEmptyElement(value) { return .invalid(status: 400, message: "empty element in Transfer-Encoding") }
                forEachListElement(value) { coding in
                    if equalsLowercased(coding, "chunked") { chunkedCodings += 1 } else if otherCoding == nil {
                        otherCoding = String(decoding: coding, as: UTF8.self)
                    }
                }
            case 10 where nameEquals(name, "connection"):
                forEachListElement(value) { option in
                    if equalsLowercased(option, "close") { connectionClose = true }
                    else if equalsLowercased(option, "keep-alive") { connectionKeepAlive = true }
                }
            case 6 where minor == 1 && nameEquals(name, "expect"):
                // An HTTP/1.0 client's expectation is ignored (RFC 9110 §10.1.1): it gets no 100.
                guard equalsLowercased(value, "100-continue") else {
                    return .invalid(status: 417, message: "unsupported Expect '\(String(decoding: value, as: UTF8.self))'")
                }
                expectContinue = true
            case 5 where nameEquals(name, "range"):
                namesRange = true
            default:
                break
            }
            if name.count == 4 && nameEquals(name, "host") {
                hosts += 1
                host = recent.host(base, valueStart, valueEnd)
                if host == nil { invalidHost = true }
            }
        }
        // RFC 9112 §3.2: exactly one valid Host in an HTTP/1.1 request; at most one in HTTP/1.0.
        if hosts > 1 { return .invalid(status: 400, message: "more than one Host field") }
        if invalidHost { return .invalid(status: 400, message: "invalid Host") }
        if minor == 1 && (hosts == 0 || host?.isEmpty == true) {
            return .invalid(status: 400, message: hosts == 0 ? "missing Host (required in HTTP/1.1)" : "empty Host")
        }
        if host?.isEmpty == true { host = nil }
        if transferEncoding {
            // RFC 9112 §6.1, §6.3: a request body's codings must be one final `chunked`; HTTP/1.0
            // has no Transfer-Encoding at all.
            if minor == 0 { return .invalid(status: 400, message: "Transfer-Encoding in an HTTP/1.0 request") }
            if let otherCoding {
                return .invalid(status: 501, message: "unsupported transfer coding '\(otherCoding)': only chunked is understood")
            }
            if chunkedCodings != 1 {
                return .invalid(status: 400, message: chunkedCodings == 0 ? "empty Transfer-Encoding" : "chunked applied more than once")
            }
            chunked = true
        }
        // The fields are the checked lines themselves, copied when the request is built: names
        // and values become strings only if something reads them (the journal copies the lines).
        if transferEncoding && contentLength != nil {
            return .invalid(status: 400, message: "both Content-Length and Transfer-Encoding")
        }
        let keepAlive = connectionClose ? false : connectionKeepAlive || minor == 1
        return .complete(RequestHead(method: method, target: target, minorVersion: minor, lineRange: lines.next..<cursor, keptLines: nil,
                                     contentLength: contentLength, chunked: chunked, keepAlive: keepAlive,
                                     expectContinue: expectContinue, host: host, namesRange: namesRange,
                                     http2Settings: http2Settings), scan)
    }

    /// The line starting at `from`: its content range (CR stripped) and where the next begins;
    /// `nil` when no LF has arrived yet.
    @inline(__always)
    private static func nextLine(_ base: UnsafePointer<UInt8>, from: Int, count: Int) -> (start: Int, end: Int, next: Int)? {
        guard from < count, let found = memchr(base + from, Int32(lf), count - from) else { return nil }
        let lfAt = UnsafeRawPointer(found) - UnsafeRawPointer(base)
        let end = lfAt > from && base[lfAt - 1] == cr ? lfAt - 1 : lfAt
        return (from, end, lfAt + 1)
    }

    @inline(__always)
    private static func string(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
    }

    /// `string`, except that the methods of most requests come back as literals: a literal
    /// needs no UTF-8 check.
    @inline(__always)
    private static func common(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> String {
        let p = base + start
        switch end - start {
        case 3 where spells(p, "GET"): return "GET"
        case 4 where spells(p, "POST"): return "POST"
        default: return string(base, start, end)
        }
    }

    /// Whether the name is one found in most requests, spelled exactly so: all tchars, so its
    /// bytes need no check. Any other name (another spelling too) is checked byte by byte.
    @inline(__always)
    private static func isCommonName(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        let p = base + start
        switch end - start {
        case 4: return spells(p, "Host")
        case 6: return spells(p, "Accept") || spells(p, "Cookie") || spells(p, "Origin")
        case 10: return spells(p, "User-Agent") || spells(p, "Connection")
        case 12: return spells(p, "Content-Type")
        case 13: return spells(p, "Authorization")
        case 14: return spells(p, "Content-Length")
        case 15: return spells(p, "Accept-Encoding") || spells(p, "Accept-Language")
        default: return false
        }
    }

    /// Whether the bytes at `p` are exactly `literal` (the caller has checked the length).
    @inline(__always)
    private static func spells(_ p: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
        memcmp(p, literal.utf8Start, literal.utf8CodeUnitCount) == 0
    }

    /// `equalsLowercased` for a header name already checked to be all tchars, and a literal of
    /// lowercase letters and `-`: eight bytes at a time, letters folded by setting 0x20 in every
    /// byte. Of all bytes, 0x20 turns only CR into `-`, and CR is no tchar.
    @inline(__always)
    static func nameEquals(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawPointer(lowercase.utf8Start)
        guard let base = bytes.baseAddress else { return bytes.isEmpty }
        var i = 0
        while bytes.count - i >= 8 {
            let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self) | 0x2020_2020_2020_2020
            if word != expected.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        while i < bytes.count {
            var byte = bytes[i]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if byte != expected.load(fromByteOffset: i, as: UInt8.self) { return false }
            i += 1
        }
        return true
    }

    /// RFC 9110 `tchar`: one byte per ASCII code in a static string ("1" for a tchar), read in
    /// place (a table in a global `let` would be made lazily, and checked on every read).
    @inline(__always)
    private static func isToken(_ byte: UInt8) -> Bool {
        let table: StaticString = """
            00000000000000000000000000000000\
            01011111001101101111111111000000\
            01111111111111111111111111100011\
            11111111111111111111111111101010
            """
        return byte < 128 && table.utf8Start[Int(byte)] == 0x31
    }

    /// Whether bytes `start..<end` hold a CR or a NUL.
    @inline(__always)
    private static func hasCROrNUL(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        ByteScan.firstIndex(of: cr, or: 0, in: base, start, end) < end
    }
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `HTTP/1.x`: the minor version (0 or 1), or `nil`.
    @inline(__always)
    private static func httpMinor(_ v: UnsafeRawBufferPointer) -> Int? {
        guard v.count == 8, v[0] == 0x48, v[1] == 0x54, v[2] == 0x54, v[3] == 0x50, v[4] == 0x2F, v[5] == 0x31,
              v[6] == 0x2E, v[7] == 0x30 || v[7] == 0x31 else { return nil }
        return Int(v[7] - 0x30)
    }
}

// Literals, not `UInt8(ascii:)`: those would be lazily made globals, each read a `swift_once` call.
private let cr: UInt8 = 0x0D, lf: UInt8 = 0x0A, space: UInt8 = 0x20, tab: UInt8 = 0x09
private let colonByte: UInt8 = 0x3A, slash: UInt8 = 0x2F

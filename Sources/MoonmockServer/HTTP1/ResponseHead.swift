#if canImport(Glibc)
import Glibc
#endif
import MoonmockCore

/// Writes HTTP/1.1 response heads as bytes: the status line, the response's own fields, and
/// the framing fields the server owns (`Content-Length` or `Transfer-Encoding`, `Connection`,
/// `Date`).
///
/// ```swift
/// var out: [UInt8] = []
/// var clock = HTTPDate()
/// ResponseHead.append(status: 200, headers: .json, framing: .length(2), connection: .keepAlive11, date: clock.now(), into: &out)
/// // HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nDate: …\r\n\r\n
/// ```
enum ResponseHead {
    enum Framing {
        case length(Int)
        case chunked
        /// 1xx, 204 and 304: no body and no length.
        case none
    }

    enum ConnectionField {
        /// HTTP/1.1 keep-alive, the default: no field.
        case keepAlive11
        /// HTTP/1.0 keep-alive: `Connection: keep-alive`.
        case keepAlive10
        case close
    }

    static func append(status: Int, headers: HTTPHeaders, framing: Framing, connection: ConnectionField,
                       date: [UInt8], into out: inout [UInt8]) {
        out.append(contentsOf: statusLine(status))
        var sawDate = false
        for field in headers {
            // Framing is the server's to decide; a script's Content-Length could only be wrong.
            let name = field.name
            switch name.utf8.count {
            case 14 where name.equalsIgnoringASCIICase("content-length"): continue
            case 17 where name.equalsIgnoringASCIICase("transfer-encoding"): continue
            case 10 where name.equalsIgnoringASCIICase("connection"): continue
            case 4 where name.equalsIgnoringASCIICase("date"): sawDate = true
            default: break
            }
            appendSanitized(name, into: &out)
            out.append(contentsOf: colonSpace)
            appendSanitized(field.value, into: &out)
            out.append(contentsOf: crlf)
        }
        switch framing {
        case .length(let length):
            out.append(contentsOf: contentLength)
            appendDecimal(length, into: &out)
            out.append(contentsOf: crlf)
        case .chunked:
            out.append(contentsOf: chunkedField)
        case .none:
            break
        }
        switch connection {
        case .keepAlive11: break
        case .keepAlive10: out.append(contentsOf: keepAliveField)
        case .close: out.append(contentsOf: closeField)
        }
        if !sawDate { out.append(contentsOf: date) }
        out.append(contentsOf: crlf)
    }

    /// Whether a response with this status carries no body (and no length) at all.
    static func hasNoBody(_ status: Int) -> Bool { status < 200 || status == 204 || status == 304 }

    static func appendDecimal(_ value: Int, into out: inout [UInt8]) {
        if value < 10 { out.append(UInt8(ascii: "0") + UInt8(value)); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var v = value, i = buffer.count
            while v > 0 {
                i -= 1
                buffer[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[i...]))
        }
    }

    static func appendHex(_ value: Int, into out: inout [UInt8]) {
        out.append(contentsOf: String(value, radix: 16).utf8)
    }

    /// CR and LF would end the field (a header injected by a script's value): they are dropped.
    @inline(__always)
    private static func appendSanitized(_ text: String, into out: inout [UInt8]) {
        let clean = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard let start = bytes.baseAddress else { return true }
            if memchr(start, 0x0D, bytes.count) == nil && memchr(start, 0x0A, bytes.count) == nil {
                out.append(contentsOf: bytes)
                return true
            }
            return false
        }
        if clean == true { return }
        for byte in text.utf8 where byte != 0x0D && byte != 0x0A { out.append(byte) }
    }

    /// `HTTP/1.1 200 OK\r\n`, built once per status code.
    @inline(__always)
    static func statusLine(_ status: Int) -> [UInt8] {
        if status >= 100 && status < 600 { return statusLines[status - 100] }
        return makeStatusLine(status)
    }

    private static let statusLines: [[UInt8]] = (100..<600).map(makeStatusLine)

    private static func makeStatusLine(_ status: Int) -> [UInt8] {
        let reason = HTTPStatus.reason(status)
        return Array("HTTP/1.1 \(status) \(reason.isEmpty ? "Status \(status)" : reason)\r\n".utf8)
    }

    static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let colonSpace: [UInt8] = [UInt8(ascii: ":"), UInt8(ascii: " ")]
    private static let contentLength = Array("Content-Length: ".utf8)
    private static let chunkedField = Array("Transfer-Encoding: chunked\r\n".utf8)
    private static let keepAliveField = Array("Connection: keep-alive\r\n".utf8)
    private static let closeField = Array("Connection: close\r\n".utf8)
    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
}

/// The `Date` field, formatted once per second (one per event loop: no lock).
struct HTTPDate {
    private var second = -1
    private var field = [UInt8](repeating: 0, count: 37)

    /// `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for the current second.
    mutating func now() -> [UInt8] {
        var t = time(nil)
        if t != second {
            second = t
            var parts = tm()
            gmtime_r(&t, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
            let text = "Date: \(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
            field = Array(text.utf8)
        }
        return field
    }
}

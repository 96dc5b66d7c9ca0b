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
/// let lines = StatusLines()
/// ResponseHead.append(status: 200, headers: .json, framing: .length(2), connection: .keepAlive11,
///                     date: clock.now(), lines: lines, into: &out)
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
                       date: [UInt8], lines: StatusLines, into out: inout [UInt8]) {
        lines.append(status, into: &out)
        var sawDate = false
        // Read in place: an iterator would copy (retain and release) the list and every field.
        headers.fields.withUnsafeBufferPointer { fields in
            for i in fields.indices {
                // Framing is the server's to decide; a script's Content-Length could only be wrong.
                switch fields[i].name.utf8.count {
                case 14 where fields[i].name.equalsIgnoringASCIICase("content-length"): continue
                case 17 where fields[i].name.equalsIgnoringASCIICase("transfer-encoding"): continue
                case 10 where fields[i].name.equalsIgnoringASCIICase("connection"): continue
                case 4 where fields[i].name.equalsIgnoringASCIICase("date"): sawDate = true
                default: break
                }
                appendSanitized(fields[i].name, into: &out)
                append(": ", into: &out)
                appendSanitized(fields[i].value, into: &out)
                append("\r\n", into: &out)
            }
        }
        switch framing {
        case .length(let length):
            append("Content-Length: ", into: &out)
            appendDecimal(length, into: &out)
            append("\r\n", into: &out)
        case .chunked:
            append("Transfer-Encoding: chunked\r\n", into: &out)
        case .none:
            break
        }
        switch connection {
        case .keepAlive11: break
        case .keepAlive10: append("Connection: keep-alive\r\n", into: &out)
        case .close: append("Connection: close\r\n", into: &out)
        }
        if !sawDate { out.append(contentsOf: date) }
        append("\r\n", into: &out)
    }

    /// Appends constant text. A `StaticString` has no reference count: static arrays would
    /// have one that every worker writes.
    @inline(__always)
    static func append(_ text: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
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

    static func makeStatusLine(_ status: Int) -> [UInt8] {
        let reason = HTTPStatus.reason(status)
        return Array("HTTP/1.1 \(status) \(reason.isEmpty ? "Status \(status)" : reason)\r\n".utf8)
    }
}

/// Status lines (`HTTP/1.1 200 OK\r\n`) for 100…599, built once into one buffer that an
/// event loop owns: no reference count per response, and none another worker writes.
final class StatusLines {
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// Where each status's line starts in `bytes`; the next one's start is where it ends.
    private let offsets: UnsafeMutableBufferPointer<Int32>

    init() {
        let lines = (100..<600).map(ResponseHead.makeStatusLine)
        bytes = .allocate(capacity: lines.reduce(0) { $0 + $1.count })
        offsets = .allocate(capacity: lines.count + 1)
        var at = 0
        for (i, line) in lines.enumerated() {
            offsets[i] = Int32(at)
            _ = UnsafeMutableBufferPointer(rebasing: bytes[at..<(at + line.count)]).initialize(from: line)
            at += line.count
        }
        offsets[lines.count] = Int32(at)
    }

    deinit {
        bytes.deallocate()
        offsets.deallocate()
    }

    func append(_ status: Int, into out: inout [UInt8]) {
        guard status >= 100 && status < 600 else { return out.append(contentsOf: ResponseHead.makeStatusLine(status)) }
        let i = status - 100
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[Int(offsets[i])..<Int(offsets[i + 1])]))
    }
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

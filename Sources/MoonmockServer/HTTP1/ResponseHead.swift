#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// Writes HTTP/1.1 response heads as bytes: the status line, the response's own fields, and
/// the framing fields the server owns (`Content-Length` or `Transfer-Encoding`, `Connection`,
/// `Date`).
///
/// ```swift
/// var out: [UInt8] = []
/// let clock = HTTPDate(), lines = StatusLines(), fields = FieldBytes()
/// ResponseHead.append(status: 200, headers: .json, framing: .length(2), connection: .keepAlive11,
///                     date: clock.now(), lines: lines, fields: fields, into: &out)
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
                       date: UnsafeBufferPointer<UInt8>, lines: StatusLines, fields: FieldBytes, into out: inout [UInt8]) {
        fields.update(headers)
        // The head is written into one buffer (on the stack when small) and appended once: an
        // append per piece costs a uniqueness and a capacity check each.
        let size = lines.maximumCount + 64 + date.count + fields.bytes.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { buffer in
            var w = HeadWriter(base: buffer.baseAddress!)
            lines.write(status, into: &w)
            w.write(UnsafeBufferPointer(fields.bytes))
            switch framing {
            case .length(let length):
                w.write("Content-Length: ")
                w.writeDecimal(length)
                w.write("\r\n")
            case .chunked:
                w.write("Transfer-Encoding: chunked\r\n")
            case .none:
                break
            }
            switch connection {
            case .keepAlive11: break
            case .keepAlive10: w.write("Connection: keep-alive\r\n")
            case .close: w.write("Connection: close\r\n")
            }
            if !fields.sawDate { w.write(date) }
            w.write("\r\n")
            out.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: w.count))
        }
    }

    /// The field lines for `headers`, without the fields the server owns; and whether one was `Date`.
    static func fieldLines(_ headers: HTTPHeaders) -> (bytes: [UInt8], sawDate: Bool) {
        // Read in place: an iterator would copy (retain and release) the list and every field.
        headers.fields.withUnsafeBufferPointer { fields in
            var size = 0
            for i in fields.indices { size += fields[i].name.utf8.count + fields[i].value.utf8.count + 4 }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { buffer in
                var w = HeadWriter(base: buffer.baseAddress!)
                var sawDate = false
                for i in fields.indices {
                    // Framing is the server's to decide; a script's Content-Length could only be wrong.
                    switch fields[i].name.utf8.count {
                    case 14 where fields[i].name.equalsIgnoringASCIICase("content-length"): continue
                    case 17 where fields[i].name.equalsIgnoringASCIICase("transfer-encoding"): continue
                    case 10 where fields[i].name.equalsIgnoringASCIICase("connection"): continue
                    case 4 where fields[i].name.equalsIgnoringASCIICase("date"): sawDate = true
                    default: break
                    }
                    w.writeSanitized(fields[i].name)
                    w.write(": ")
                    w.writeSanitized(fields[i].value)
                    w.write("\r\n")
                }
                return (Array(UnsafeBufferPointer(start: buffer.baseAddress, count: w.count)), sawDate)
            }
        }
    }

    /// Appends constant text. A `StaticString` has no reference count: static arrays would
    /// have one that every worker writes.
    @inline(__always)
    static func append(_ text: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    static func appendHex(_ value: Int, into out: inout [UInt8]) {
        out.append(contentsOf: String(value, radix: 16).utf8)
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

    /// Room enough for any status line (the longest, with a 22-byte reason phrase, is 37 bytes;
    /// one outside 100…599 reads "HTTP/1.1 N Status N" and stays under 64 for any Int).
    var maximumCount: Int { 64 }

    func write(_ status: Int, into w: inout HeadWriter) {
        guard status >= 100 && status < 600 else {
            // Out of range: "HTTP/1.1 NNNN Status NNNN\r\n" fits the 64 bytes reserved.
            return ResponseHead.makeStatusLine(status).withUnsafeBufferPointer { w.write(UnsafeBufferPointer(rebasing: $0.prefix(maximumCount))) }
        }
        let i = status - 100
        w.write(UnsafeBufferPointer(rebasing: bytes[Int(offsets[i])..<Int(offsets[i + 1])]))
    }
}

/// The field lines of the last header list an event loop wrote, kept for the next response
/// that carries the same list (a script's JSON or text responses share one per VM): written
/// with one copy instead of field by field. The list is held, so its storage cannot be freed
/// and its address reused by another list while the bytes are kept.
final class FieldBytes {
    /// The list the lines were made from, kept so that its storage (named by `identity`) is not
    /// freed and its address given to another list while it is compared with.
    private var headers = HTTPHeaders()
    private var identity = HTTPHeaders().storageIdentity
    /// The lines, in a block of its own: a plain pointer, so writing them out retains nothing (an
    /// array read from here would be retained and released around the copy).
    private(set) var bytes = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
    private(set) var sawDate = false

    deinit { bytes.deallocate() }

    /// Makes ``bytes`` the lines of `headers` (at once when it is the list of last time). The
    /// compare is of plain values: reading the kept list to compare with would retain it.
    func update(_ headers: HTTPHeaders) {
        let id = headers.storageIdentity
        if id == identity { return }
        let (lines, date) = ResponseHead.fieldLines(headers)
        bytes.refill(with: lines)
        sawDate = date
        self.headers = headers
        identity = id
    }
}

/// Writes a response head into memory its caller has sized (``ResponseHead/append(status:headers:framing:connection:date:lines:into:)``).
struct HeadWriter {
    let base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0

    init(base: UnsafeMutablePointer<UInt8>) { self.base = base }

    @inline(__always)
    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress else { return }
        (base + count).update(from: start, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func write(_ text: StaticString) {
        write(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// CR and LF would end the field (a header injected by a script's value): they are dropped.
    mutating func writeSanitized(_ text: String) {
        text.withUTF8Bytes { bytes in
            guard let start = bytes.baseAddress else { return }
            // Without a CR or LF (nearly always) the text is copied whole.
            if ByteScan.firstIndex(of: 0x0D, or: 0x0A, in: start, 0, bytes.count) == bytes.count { return write(bytes) }
            for i in 0..<bytes.count {
                let byte = start[i]
                if byte != 0x0D && byte != 0x0A { base[count] = byte; count += 1 }
            }
        }
    }

    mutating func writeDecimal(_ value: Int) {
        if value <= 0 { base[count] = UInt8(ascii: "0"); count += 1; return }
        var digits = 0, v = value
        while v > 0 { digits += 1; v /= 10 }
        v = value
        for i in stride(from: count + digits - 1, through: count, by: -1) {
            base[i] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
            v /= 10
        }
        count += digits
    }
}

/// The `Date` field, formatted once per second (one per event loop: no lock). A class owning
/// its bytes: a response head takes them as a plain pointer, where an array handed out per
/// response would be retained and released each time.
final class HTTPDate {
    private var second = -1
    /// `Date: …\r\n`, 37 bytes for every year from 1000 to 9999 (a pinned clock may go beyond).
    private var field = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 37)
    /// The engine's clock when a test pinned it (the in-process door dates its answers by it
    /// too); `nil` for the real clock, read with `time()`.
    let pinned: (@Sendable () -> Double)?

    init(_ environment: MockEnvironment = .system) {
        pinned = environment.isSystemClock ? nil : environment.now
    }

    deinit { field.deallocate() }

    /// `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for the current second; the bytes stay as they
    /// are until the next call.
    func now() -> UnsafeBufferPointer<UInt8> {
        let t = pinned.map { Int($0().rounded(.down)) } ?? time(nil)
        if t != second {
            second = t
            field.refill(with: Array("Date: \(HTTPDateFormat.imfFixdate(t))\r\n".utf8))
        }
        return UnsafeBufferPointer(field)
    }
}

extension UnsafeMutableBufferPointer where Element == UInt8 {
    /// Makes this block, which its holder owns and frees, hold `bytes`: a new block only when
    /// the size changes. For bytes a response head reads as a plain pointer (``FieldBytes``,
    /// ``HTTPDate``).
    mutating func refill(with bytes: [UInt8]) {
        if count != bytes.count {
            deallocate()
            self = .allocate(capacity: bytes.count)
        }
        _ = initialize(from: bytes)
    }
}

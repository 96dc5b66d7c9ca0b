import COpenSSL
import MoonmockCore

/// RFC 6455 framing, written here (the server's loop owns its sockets and buffers; wslay's
/// callback I/O would sit beside them): frames read from a client's bytes, messages put
/// together from fragments, control frames between them, the checks a server must make, and
/// frames written to the client. Fuzzed (`scripts/fuzz websocket`).
///
/// ```swift
/// var reader = WebSocketReader(maxMessage: 1 << 20)
/// let (events, used) = bytes.withUnsafeBytes { reader.feed($0) }
/// WebSocketFrames.frame(.text, Array("hi".utf8))   // an unmasked server frame
/// ```
enum WebSocketFrames {
    enum Opcode: UInt8 {
        case continuation = 0, text = 1, binary = 2, close = 8, ping = 9, pong = 10
    }

    /// A server frame (never masked), FIN set; `compressed` sets RSV1 (permessage-deflate).
    static func frame(_ opcode: Opcode, _ payload: [UInt8], compressed: Bool = false) -> [UInt8] {
        var out: [UInt8] = [0x80 | (compressed ? 0x40 : 0) | opcode.rawValue]
        out.reserveCapacity(payload.count + 10)
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out.append(126)
            out.append(UInt8(payload.count >> 8))
            out.append(UInt8(payload.count & 0xFF))
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        out.append(contentsOf: payload)
        return out
    }

    /// A close frame: the code, then the reason (cut to fit a control frame's 125 bytes).
    static func close(code: Int, reason: String) -> [UInt8] {
        var payload = [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)]
        var reasonBytes = Array(reason.utf8.prefix(123))
        while !reasonBytes.isEmpty && String(validating: reasonBytes, as: UTF8.self) == nil { reasonBytes.removeLast() }
        payload += reasonBytes
        return frame(.close, payload)
    }

    /// The `Sec-WebSocket-Accept` of a `Sec-WebSocket-Key`: base64 of SHA-1 of the key and the GUID.
    static func accept(key: String) -> String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        mm_sha1(input, input.count, &digest)
        return base64(digest)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b0 = Int(bytes[i]), b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            out.append(table[b0 >> 2])
            out.append(table[((b0 & 3) << 4) | (b1 >> 4)])
            out.append(i + 1 < bytes.count ? table[((b1 & 15) << 2) | (b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? table[b2 & 63] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `key` is a valid `Sec-WebSocket-Key`: base64 of 16 bytes (24 characters).
    static func isValidKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        return bytes[0..<22].allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2F }
    }
}

/// Turns a client's bytes into WebSocket events, checking what RFC 6455 asks of a server:
/// masked frames, no reserved bits (RSV1 only on a message's first frame once permessage-deflate
/// is agreed), known opcodes, control frames short and whole, continuation only inside a
/// fragmented message, sizes within the limit, and text that is UTF-8 — checked as it arrives,
/// so invalid text fails at its first bad byte, even in a frame not yet whole.
struct WebSocketReader {
    enum Event: Equatable {
        case message(WebSocketMessageBytes)
        case ping([UInt8])
        case pong([UInt8])
        /// The client's close: its code (1005 when it gave none) and reason.
        case close(code: Int, reason: String)
        /// A protocol error: close with this code and reason, then drop the connection.
        case fail(code: Int, reason: String)
    }

    enum WebSocketMessageBytes: Equatable {
        case text(String)
        case binary([UInt8])
    }

    let maxMessage: Int
    /// The agreed permessage-deflate, if any: compressed messages are inflated with it.
    let deflate: PerMessageDeflate?
    private var fragments: [UInt8] = []
    private var fragmentOpcode: WebSocketFrames.Opcode?
    private var fragmentCompressed = false
    /// The text of the fragmented message so far (uncompressed text only).
    private var text = UTF8Stream()
    /// How far the payload of the incomplete frame at the front has been checked, and the text state there.
    private var checked: (bytes: Int, text: UTF8Stream)?
    private(set) var failed = false

    init(maxMessage: Int, deflate: PerMessageDeflate? = nil) {
        self.maxMessage = maxMessage
        self.deflate = deflate
    }

    static let notUTF8 = "text message is not UTF-8"

    /// Reads every whole frame in `bytes`; returns the events and how many bytes were used.
    /// After a `fail` (or a close) nothing more is read.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> ([Event], Int) {
        var events: [Event] = []
        var at = 0
        while !failed {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[at...])
            guard rest.count >= 2 else { break }
            let b0 = rest[0], b1 = rest[1]
            guard let opcode = WebSocketFrames.Opcode(rawValue: b0 & 0x0F) else { return fail(&events, 1002, "unknown opcode \(b0 & 0x0F)", at) }
            let compressed = b0 & 0x40 != 0
            if b0 & 0x30 != 0 || (compressed && (deflate == nil || (opcode != .text && opcode != .binary))) {
                return fail(&events, 1002, "reserved bits set (no extension was agreed)", at)
            }
            let fin = b0 & 0x80 != 0
            guard b1 & 0x80 != 0 else { return fail(&events, 1002, "a client frame must be masked", at) }
            var length = Int(b1 & 0x7F)
            var header = 2
            if length == 126 {
                guard rest.count >= 4 else { break }
                length = Int(rest[2]) << 8 | Int(rest[3])
                header = 4
            } else if length == 127 {
                guard rest.count >= 10 else { break }
                var n: UInt64 = 0
                for i in 2..<10 { n = n << 8 | UInt64(rest[i]) }
                guard n <= UInt64(Int.max / 2) else { return fail(&events, 1009, "frame too large", at) }
                length = Int(n)
                header = 10
            }
            let control = opcode.rawValue >= 8
            if control && (length > 125 || !fin) { return fail(&events, 1002, "a control frame must be whole and at most 125 bytes", at) }
            if !control && fragments.count + length > maxMessage { return fail(&events, 1009, "message larger than \(maxMessage) bytes", at) }
            if opcode == .continuation && fragmentOpcode == nil { return fail(&events, 1002, "a continuation frame outside a fragmented message", at) }
            if (opcode == .text || opcode == .binary) && fragmentOpcode != nil {
                return fail(&events, 1002, "a new message began inside a fragmented one", at)
            }
            guard rest.count >= header + 4 else { break }
            let mask = (rest[header], rest[header + 1], rest[header + 2], rest[header + 3])
            @inline(__always) func unmasked(_ i: Int) -> UInt8 {
                let m: UInt8
                switch i & 3 { case 0: m = mask.0; case 1: m = mask.1; case 2: m = mask.2; default: m = mask.3 }
                return rest[header + 4 + i] ^ m
            }
            // Text not compressed is checked byte by byte as it comes, across fragments.
            let checksText = opcode == .text && !compressed || opcode == .continuation && fragmentOpcode == .text && !fragmentCompressed
            let available = min(length, rest.count - header - 4)
            if checksText {
                var state = checked ?? (0, opcode == .text ? UTF8Stream() : text)
                while state.bytes < available {
                    guard state.text.feed(unmasked(state.bytes)) else { return fail(&events, 1007, Self.notUTF8, at) }
                    state.bytes += 1
                }
                checked = state
            }
            guard available == length else { break }
            var payload = [UInt8](repeating: 0, count: length)
            for i in 0..<length { payload[i] = unmasked(i) }
            let textState = checked?.text
            checked = nil
            at += header + 4 + length
            switch opcode {
            case .ping: events.append(.ping(payload))
            case .pong: events.append(.pong(payload))
            case .close:
                if payload.count == 1 { return fail(&events, 1002, "a close frame's payload must be empty or start with a code", at) }
                var code = 1005, reason = ""
                if payload.count >= 2 {
                    code = Int(payload[0]) << 8 | Int(payload[1])
                    guard Self.isValidCloseCode(code) else { return fail(&events, 1002, "invalid close code \(code)", at) }
                    guard let text = String(validating: payload[2...], as: UTF8.self) else { return fail(&events, 1007, "close reason is not UTF-8", at) }
                    reason = text
                }
                events.append(.close(code: code, reason: reason))
                failed = true   // nothing after a close is read
                return (events, at)
            case .text, .binary, .continuation:
                if opcode != .continuation {
                    fragmentOpcode = opcode
                    fragmentCompressed = compressed
                    fragments = payload
                } else {
                    fragments += payload
                }
                if let textState { text = textState }
                guard fin else { continue }
                let kind = fragmentOpcode ?? .binary, wasCompressed = fragmentCompressed
                var whole = fragments
                fragments = []
                fragmentOpcode = nil
                fragmentCompressed = false
                let complete = text.isComplete
                text = UTF8Stream()
                if wasCompressed, let deflate {
                    switch deflate.inflate(whole, limit: maxMessage) {
                    case .success(let bytes): whole = bytes
                    case .tooLarge: return fail(&events, 1009, "message larger than \(maxMessage) bytes once inflated", at)
                    case .bad: return fail(&events, 1007, "a compressed message is not valid deflate data", at)
                    }
                    if kind == .text && !UTF8Stream.isValid(whole) { return fail(&events, 1007, Self.notUTF8, at) }
                } else if kind == .text && !complete {
                    return fail(&events, 1007, Self.notUTF8, at)
                }
                events.append(.message(kind == .text ? .text(String(decoding: whole, as: UTF8.self)) : .binary(whole)))
            }
        }
        return (events, at)
    }

    private mutating func fail(_ events: inout [Event], _ code: Int, _ reason: String, _ at: Int) -> ([Event], Int) {
        failed = true
        events.append(.fail(code: code, reason: reason))
        return (events, at)
    }

    /// Codes a client may send (RFC 6455 §7.4): 1000–1003, 1007–1011, 1012–1014 (registered
    /// since), and 3000–4999 for libraries and applications.
    static func isValidCloseCode(_ code: Int) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }
}

/// UTF-8 checked a byte at a time (RFC 3629: no overlongs, no surrogates, nothing past
/// U+10FFFF), so that text split across frames or reads is checked as it comes.
struct UTF8Stream: Equatable {
    /// Continuation bytes still expected, and the range the next one must fall in.
    private var need = 0
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    /// No character is cut short.
    var isComplete: Bool { need == 0 }

    /// `false` at the first byte that cannot continue valid text.
    mutating func feed(_ b: UInt8) -> Bool {
        if need == 0 {
            if b < 0x80 { return true }
            switch b {
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: need = 2
            case 0xED: need = 2; high = 0x9F
            case 0xF0: need = 3; low = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; high = 0x8F
            default: return false
            }
            return true
        }
        guard b >= low && b <= high else { return false }
        need -= 1
        low = 0x80
        high = 0xBF
        return true
    }

    static func isValid(_ bytes: [UInt8]) -> Bool {
        var stream = UTF8Stream()
        for b in bytes where !stream.feed(b) { return false }
        return stream.isComplete
    }
}

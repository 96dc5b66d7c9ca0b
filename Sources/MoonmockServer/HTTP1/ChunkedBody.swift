/// Decodes a `Transfer-Encoding: chunked` request body as its bytes arrive, in any slicing.
///
/// ```swift
/// var decoder = ChunkedBody(limit: 1 << 20)
/// var body: [UInt8] = []
/// let text = Array("3\r\nabc\r\n0\r\n\r\n".utf8)
/// let result = text.withUnsafeBytes { decoder.feed($0, into: &body) }   // .done(consumed: 13), body == "abc"
/// ```
struct ChunkedBody {
    enum Result: Equatable {
        /// Everything given was consumed; the body goes on.
        case needMore
        /// The body ended; `consumed` bytes of the input belonged to it (the rest is the next request).
        case done(consumed: Int)
        case invalid(String)
        /// The decoded body would pass the limit.
        case tooLarge
    }

    private enum State {
        case size(value: Int, digits: Int)
        /// After `;`: the extensions, up to CR (none of them is understood).
        case extensions(value: Int)
        /// Spaces or tabs after the size: only CR may follow.
        case sizeSpace(value: Int)
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLineStart
        /// A trailer field's name (at least one tchar), up to its colon.
        case trailerName(count: Int)
        case trailerValue
        case trailerLF(empty: Bool)
    }

    let limit: Int
    private var state = State.size(value: 0, digits: 0)
    private var decoded = 0
    /// The trailer field name being read, lowercased (the first 18 bytes: enough to know the
    /// fields a trailer may not carry).
    private var trailerName: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    /// Consumes framing and data from `input`, appending data to `body`. Every line of the framing
    /// ends in CRLF (a bare LF is refused here, unlike in the head: a proxy that reads it otherwise
    /// would see another body), and trailer fields are checked as header fields are.
    mutating func feed(_ input: UnsafeRawBufferPointer, into body: inout [UInt8]) -> Result {
        var i = 0
        let n = input.count
        while i < n {
            let byte = input[i]
            switch state {
            case .size(let value, let digits):
                if let digit = hexValue(byte) {
                    guard digits < 15 else { return .invalid("chunk size too long") }
                    state = .size(value: value * 16 + digit, digits: digits + 1)
                } else if digits == 0 {
                    return .invalid("missing chunk size")
                } else if byte == semicolon {
                    state = .extensions(value: value)
                } else if byte == space || byte == tab {
                    state = .sizeSpace(value: value)
                } else if byte == cr {
                    state = .sizeLF(value: value)
                } else {
                    return .invalid("malformed chunk size")
                }
                i += 1
            case .extensions(let value):
                if byte == cr { state = .sizeLF(value: value) } else if (byte < 0x20 && byte != tab) || byte == 0x7F {
                    return .invalid("control character in a chunk extension")
                }
                i += 1
            case .sizeSpace(let value):
                if byte == cr { state = .sizeLF(value: value) } else if byte != space && byte != tab {
                    return .invalid("malformed chunk size line")
                }
                i += 1
            case .sizeLF(let value):
                guard byte == lf else { return .invalid("chunk size line without LF") }
                if let end = startData(value) { return end }
                i += 1
            case .data(let remaining):
                let take = min(remaining, n - i)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i..<(i + take)]))
                i += take
                state = remaining == take ? .dataCR : .data(remaining: remaining - take)
            case .dataCR:
                guard byte == cr else { return .invalid("chunk data longer than its size, or not ended by CRLF") }
                state = .dataLF
                i += 1
            case .dataLF:
                guard byte == lf else { return .invalid("chunk data without CRLF") }
                state = .size(value: 0, digits: 0)
                i += 1
            case .trailerLineStart:
                if byte == cr { state = .trailerLF(empty: true) } else if isToken(byte) {
                    trailerName = [byte | (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0)]
                    state = .trailerName(count: 1)
                } else {
                    return .invalid("malformed trailer field")
                }
                i += 1
            case .trailerName(let count):
                if byte == colon {
                    // RFC 9110 §6.5.1: no framing or routing in a trailer.
                    if Self.forbiddenTrailers.contains(trailerName) {
                        return .invalid("'\(String(decoding: trailerName, as: UTF8.self))' is not allowed in a trailer")
                    }
                    state = .trailerValue
                } else if isToken(byte) {
                    if trailerName.count < 18 { trailerName.append(byte | (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0)) }
                    state = .trailerName(count: count + 1)
                } else {
                    return .invalid("malformed trailer field name")
                }
                i += 1
            case .trailerValue:
                if byte == cr { state = .trailerLF(empty: false) } else if (byte < 0x20 && byte != tab) || byte == 0x7F {
                    return .invalid("control character in a trailer field")
                }
                i += 1
            case .trailerLF(let empty):
                guard byte == lf else { return .invalid("trailer without LF") }
                if empty { return .done(consumed: i + 1) }
                state = .trailerLineStart
                i += 1
            }
        }
        return .needMore
    }

    /// After a size line: the last chunk moves on to the trailer section; a chunk that would pass
    /// the limit ends decoding.
    private mutating func startData(_ size: Int) -> Result? {
        if size == 0 {
            state = .trailerLineStart
            return nil
        }
        decoded += size
        if decoded > limit { return .tooLarge }
        state = .data(remaining: size)
        return nil
    }

    private static let forbiddenTrailers: Set<[UInt8]> = Set(["content-length", "transfer-encoding", "host", "trailer",
                                                              "content-encoding", "content-type", "content-range", "te"].map { Array($0.utf8) })

    /// RFC 9110 `tchar`.
    private func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): return true
        default: return false
        }
    }

    @inline(__always)
    private func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: return Int(byte - 0x30)
        case 0x41...0x46: return Int(byte - 0x41 + 10)
        case 0x61...0x66: return Int(byte - 0x61 + 10)
        default: return nil
        }
    }
}

private let cr: UInt8 = 0x0D, lf: UInt8 = 0x0A, space: UInt8 = 0x20, tab: UInt8 = 0x09
private let semicolon: UInt8 = 0x3B, colon: UInt8 = 0x3A

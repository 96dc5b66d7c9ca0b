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
        case extensions(value: Int)
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLineStart
        case trailerLine
        case trailerLF(empty: Bool)
    }

    let limit: Int
    private var state = State.size(value: 0, digits: 0)
    private var decoded = 0

    init(limit: Int) { self.limit = limit }

    /// Consumes framing and data from `input`, appending data to `body`.
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
                } else if byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    state = .extensions(value: value)
                } else if byte == UInt8(ascii: "\r") {
                    state = .sizeLF(value: value)
                } else if byte == UInt8(ascii: "\n") {
                    if let end = startData(value) { return end }
                } else {
                    return .invalid("malformed chunk size")
                }
                i += 1
            case .extensions(let value):
                if byte == UInt8(ascii: "\r") { state = .sizeLF(value: value) } else if byte == UInt8(ascii: "\n") {
                    if let end = startData(value) { return end }
                }
                i += 1
            case .sizeLF(let value):
                guard byte == UInt8(ascii: "\n") else { return .invalid("chunk size line without LF") }
                if let end = startData(value) { return end }
                i += 1
            case .data(let remaining):
                let take = min(remaining, n - i)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i..<(i + take)]))
                i += take
                state = remaining == take ? .dataCR : .data(remaining: remaining - take)
            case .dataCR:
                if byte == UInt8(ascii: "\r") { state = .dataLF } else if byte == UInt8(ascii: "\n") {
                    state = .size(value: 0, digits: 0)
                } else {
                    return .invalid("chunk data longer than its size")
                }
                i += 1
            case .dataLF:
                guard byte == UInt8(ascii: "\n") else { return .invalid("chunk data without CRLF") }
                state = .size(value: 0, digits: 0)
                i += 1
            case .trailerLineStart:
                if byte == UInt8(ascii: "\r") { state = .trailerLF(empty: true) } else if byte == UInt8(ascii: "\n") {
                    return .done(consumed: i + 1)
                } else {
                    state = .trailerLine
                }
                i += 1
            case .trailerLine:
                if byte == UInt8(ascii: "\r") { state = .trailerLF(empty: false) } else if byte == UInt8(ascii: "\n") {
                    state = .trailerLineStart
                }
                i += 1
            case .trailerLF(let empty):
                guard byte == UInt8(ascii: "\n") else { return .invalid("trailer without LF") }
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

import MoonmockCore

/// `--redact-json KEY` on a body's own bytes: every member named KEY, at any depth, gets the
/// value `"REDACTED"`, and everything else — key order, spacing, number spelling — stays as the
/// API sent it (a parsed-and-encoded body would come back with its keys sorted).
///
/// ```swift
/// JSONRedaction.redact(Array(#"{"z":1,"token":"s3cr3t"}"#.utf8), keys: ["token"])   // {"z":1,"token":"REDACTED"}
/// ```
enum JSONRedaction {
    /// The body with the values of `keys` replaced; `nil` when it is not JSON the scan follows.
    static func redact(_ bytes: [UInt8], keys: Set<String>) -> [UInt8]? {
        var scanner = Scanner(bytes: bytes, keys: keys)
        guard let end = scanner.value(at: scanner.skipSpace(0)), scanner.skipSpace(end) == bytes.count else { return nil }
        guard !scanner.replaced.isEmpty else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var at = 0
        for range in scanner.replaced {
            out += bytes[at..<range.lowerBound]
            out += Array(#""REDACTED""#.utf8)
            at = range.upperBound
        }
        out += bytes[at...]
        return out
    }

    private struct Scanner {
        let bytes: [UInt8]
        let keys: Set<String>
        /// Value ranges to replace, in order.
        var replaced: [Range<Int>] = []
        var depth = 0

        func skipSpace(_ i: Int) -> Int {
            var i = i
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
            return i
        }

        /// The end of the value starting at `i`, noting redactions inside it; `nil` if malformed.
        mutating func value(at i: Int) -> Int? {
            guard i < bytes.count, depth < 512 else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "{"): return object(at: i)
            case UInt8(ascii: "["): return array(at: i)
            case UInt8(ascii: "\""): return string(at: i)?.end
            default:
                var j = i
                while j < bytes.count, !",]}: \t\r\n".utf8.contains(bytes[j]) { j += 1 }
                return j > i ? j : nil
            }
        }

        private mutating func object(at i: Int) -> Int? {
            depth += 1
            defer { depth -= 1 }
            var j = skipSpace(i + 1)
            if j < bytes.count, bytes[j] == UInt8(ascii: "}") { return j + 1 }
            while true {
                guard let (key, afterKey) = string(at: j) else { return nil }
                j = skipSpace(afterKey)
                guard j < bytes.count, bytes[j] == UInt8(ascii: ":") else { return nil }
                let start = skipSpace(j + 1)
                guard let end = value(at: start) else { return nil }
                if keys.contains(key) {
                    replaced.removeAll { $0.lowerBound >= start }   // redactions inside a redacted value
                    replaced.append(start..<end)
                }
                j = skipSpace(end)
                guard j < bytes.count else { return nil }
                if bytes[j] == UInt8(ascii: "}") { return j + 1 }
                guard bytes[j] == UInt8(ascii: ",") else { return nil }
                j = skipSpace(j + 1)
            }
        }

        private mutating func array(at i: Int) -> Int? {
            depth += 1
            defer { depth -= 1 }
            var j = skipSpace(i + 1)
            if j < bytes.count, bytes[j] == UInt8(ascii: "]") { return j + 1 }
            while true {
                guard let end = value(at: j) else { return nil }
                j = skipSpace(end)
                guard j < bytes.count else { return nil }
                if bytes[j] == UInt8(ascii: "]") { return j + 1 }
                guard bytes[j] == UInt8(ascii: ",") else { return nil }
                j = skipSpace(j + 1)
            }
        }

        /// A string at `i`: its decoded text (escapes undone through the JSON parser) and end.
        private func string(at i: Int) -> (String, end: Int)? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
            var j = i + 1, escaped = false
            while j < bytes.count {
                let b = bytes[j]
                if b == UInt8(ascii: "\\") { escaped = true; j += 2; continue }
                if b == UInt8(ascii: "\"") {
                    let raw = Array(bytes[i...j])
                    let text = escaped ? ((try? JSONValue(parsing: raw))?.stringValue ?? "") : String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)
                    return (text, j + 1)
                }
                j += 1
            }
            return nil
        }
    }
}

/// Range requests (RFC 9110 §14) on the answers that offer them: a `200` with
/// `Accept-Ranges: bytes` (`mock.file`, `mock.text`, Swift's `.file`, `.text` and `.http`
/// with a body, or any rule that sets the field) and no content coding. The engine applies it
/// to every answer, so both doors and the journal see the same `206` or `416`.
///
/// - `Range: bytes=a-b`, `bytes=a-` and `bytes=-n` on a `GET` → `206 Partial Content` with
///   `Content-Range: bytes first-last/length` and that slice;
/// - a range that starts past the end (or `-0`, or any range of an empty body) → `416 Range Not
///   Satisfiable` with `Content-Range: bytes */length` and no body;
/// - `If-Range` with an entity tag or a date that is not the answer's own strong `ETag` or
///   `Last-Modified` → the whole answer, as RFC 9110 §13.1.5 says;
/// - several ranges, another unit, or a field that does not parse → the whole answer (a server
///   may ignore `Range`; clients ask for one range).
///
/// ```swift
/// ByteRanges.answer(response, to: request)   // nil: answer `response` as it is
/// ```
public enum ByteRanges {
    /// The ranged answer to `request`, or `nil` when `response` goes out whole.
    public static func answer(_ response: MockResponse, to request: MockRequest) -> MockResponse? {
        // Cheapest tests first: almost no request names a range.
        guard request.mayNameRange, request.method == "GET", let field = request.headers["range"], response.status == 200, response.fault == nil,
              offersRanges(response.headers), response.headers["content-encoding"] == nil else { return nil }
        if let condition = request.headers["if-range"], !validates(condition, response.headers) { return nil }
        let length = response.body.count
        switch parse(field, length: length) {
        case .ignore:
            return nil
        case .unsatisfiable:
            var headers = response.headers
            headers["Content-Length"] = nil
            headers["Content-Type"] = nil
            headers["Content-Range"] = "bytes */\(length)"
            return MockResponse(status: 416, headers: headers, body: [], delay: response.delay)
        case .slice(let range):
            var partial = response
            partial.status = 206
            partial.headers["Content-Length"] = nil
            partial.headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(length)"
            partial.body = Array(response.body[range])
            return partial
        }
    }

    /// `Accept-Ranges: bytes` among `headers`.
    static func offersRanges(_ headers: HTTPHeaders) -> Bool {
        guard let value = headers["accept-ranges"] else { return false }
        return value.split(separator: ",").contains { $0.trimmingSpaces.equalsIgnoringASCIICase("bytes") }
    }

    /// `If-Range` holds: a strong entity tag equal to the answer's `ETag`, or the answer's
    /// exact `Last-Modified` date.
    static func validates(_ condition: String, _ headers: HTTPHeaders) -> Bool {
        let value = condition.trimmingSpaces
        if value.hasPrefix("W/") { return false }   // a weak tag never validates a range
        if value.hasPrefix("\"") {
            guard let tag = headers["etag"]?.trimmingSpaces, !tag.hasPrefix("W/") else { return false }
            return tag == value
        }
        guard let modified = headers["last-modified"]?.trimmingSpaces else { return false }
        return modified == value
    }

    enum Outcome: Equatable {
        case ignore
        case unsatisfiable
        case slice(Range<Int>)
    }

    /// Reads a `Range` field for a body of `length` bytes.
    static func parse(_ field: String, length: Int) -> Outcome {
        let text = field.trimmingSpaces
        guard let equals = text.firstIndex(of: "="), text[..<equals].trimmingSpaces.equalsIgnoringASCIICase("bytes") else { return .ignore }
        let specs = text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
        guard specs.count == 1 else { return .ignore }
        let spec = specs[0].trimmingSpaces
        guard let dash = spec.firstIndex(of: "-") else { return .ignore }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        func number(_ s: Substring) -> Int? {
            guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(s)
        }
        if first.isEmpty {
            // bytes=-n: the last n bytes.
            guard let n = number(last) else { return .ignore }
            if n == 0 || length == 0 { return .unsatisfiable }
            return .slice(max(0, length - n)..<length)
        }
        guard let start = number(first) else { return .ignore }
        var end = length - 1
        if !last.isEmpty {
            guard let e = number(last), e >= start else { return .ignore }
            end = min(e, length - 1)
        }
        if start >= length { return .unsatisfiable }
        return .slice(start..<(end + 1))
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional white space).
    public var trimmingSpaces: String {
        let bytes = Array(utf8)
        var lo = 0, hi = bytes.count
        while lo < hi, bytes[lo] == 0x20 || bytes[lo] == 0x09 { lo += 1 }
        while hi > lo, bytes[hi - 1] == 0x20 || bytes[hi - 1] == 0x09 { hi -= 1 }
        return String(decoding: bytes[lo..<hi], as: UTF8.self)
    }
}

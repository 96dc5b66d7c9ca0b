import Foundation
import MoonmockCore

extension FuzzTargets {
    /// `Range` and `If-Range` fields (after the first two bytes, which give the body's length,
    /// and split at the first newline) against a text answer: the answer is the whole body, a
    /// `206` whose `Content-Range` names exactly the slice it carries, or a `416` naming the
    /// length and carrying nothing.
    static func ranges(_ input: [UInt8]) {
        guard input.count >= 2 else { return }
        let length = (Int(input[0]) << 8 | Int(input[1])) % 600
        let fields = String(decoding: input.dropFirst(2), as: UTF8.self).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        var headers: HTTPHeaders = ["Range": String(fields.first ?? "")]
        if fields.count > 1 { headers["If-Range"] = String(fields[1]) }
        let body = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let response = MockResponse(status: 200, headers: ["Content-Type": "text/plain", "Accept-Ranges": "bytes", "ETag": "\"v1\""], body: body)
        guard let ranged = ByteRanges.answer(response, to: MockRequest(method: "GET", url: "http://fuzz/", headers: headers)) else { return }
        let contentRange = ranged.headers["content-range"] ?? ""
        switch ranged.status {
        case 206:
            precondition(contentRange.hasPrefix("bytes ") && contentRange.hasSuffix("/\(length)"), contentRange)
            let span = contentRange.dropFirst(6).prefix { $0 != "/" }.split(separator: "-").compactMap { Int($0) }
            precondition(span.count == 2 && span[0] <= span[1] && span[1] < length, contentRange)
            precondition(ranged.body == Array(body[span[0]...span[1]]), "the slice is not what \(contentRange) names")
        case 416:
            precondition(contentRange == "bytes */\(length)" && ranged.body.isEmpty, contentRange)
        default:
            preconditionFailure("a ranged answer of status \(ranged.status)")
        }
    }
}

import CZlib

/// Content codings applied to bodies Moonmock sends itself (OTLP exports).
///
/// ```swift
/// let body = try ContentEncoding.gzip(Array("hello".utf8))
/// try ContentDecoding.decode(body, contentEncodings: ["gzip"])   // "hello"
/// ```
public enum ContentEncoding {
    /// `bytes` gzipped (RFC 1952) at zlib's default level.
    public static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        var out = mm_decoded()
        defer { mm_decoded_free(&out) }
        let status = bytes.withUnsafeBufferPointer { mm_encode_gzip($0.baseAddress, $0.count, &out) }
        guard status == MM_DECODE_OK else { throw ContentDecoding.Failure(description: "gzip failed (zlib status \(status))") }
        return Array(UnsafeBufferPointer(start: out.data, count: out.len))
    }
}

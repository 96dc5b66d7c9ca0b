#if canImport(CCompression)
import CCompression   // Linux: Brotli and zstd from Debian's libraries, as libcurl decodes them
#elseif canImport(Compression)
import Compression    // Apple platforms: Brotli from the Compression framework (macOS 12 / iOS 15)
#endif
import CZlib
import MoonmockCore   // trimmingSpaces

/// Takes a response's content codings off its body: for the in-process door, as URLSession does
/// with a body from the network, and for `moonmock record`, which stores bodies decoded. As URLSession does (on Linux its libcurl: `gzip` and `x-gzip`, `deflate` in the zlib format or raw,
/// `br`, `zstd`, and `identity`, in any case, listed in the order they were applied; on Apple
/// platforms the same but `zstd`, which is handed over as it came), so that an
/// in-process task gets the bytes a task talking to `moonmock serve` gets. The headers stay as
/// the rule wrote them (`Content-Encoding`, and the encoded `Content-Length`), as they do over
/// the socket, and a body cut short gives what decoded up to there, as libcurl gives it.
///
/// ```swift
/// let text = try ContentDecoding.decode(gzipped, contentEncodings: ["gzip"])   // the plain bytes
/// try ContentDecoding.decode(Array("abc".utf8), contentEncodings: ["compress"]) // throws: not decoded
/// ```
public enum ContentDecoding {
    /// Bodies larger than this once decoded fail the task (a small body may decode to gigabytes).
    public static let limit = 256 << 20

    /// `body` with the codings in `contentEncodings` (the values of the `Content-Encoding`
    /// fields, each a comma-separated list) undone, last applied first. An empty body, or no
    /// coding but `identity`, is returned as it is. Throws
    /// (``Failure``) for a coding URLSession does not decode or bytes that are not valid for theirs (over the
    /// socket both fail the task too).
    public static func decode(_ body: [UInt8], contentEncodings: [String]) throws -> [UInt8] {
        guard !contentEncodings.isEmpty, !body.isEmpty else { return body }
        let codings = contentEncodings.flatMap { $0.split(separator: ",") }
            .map { String($0).trimmingSpaces.lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        var bytes = body
        for coding in codings.reversed() {
            #if !canImport(CCompression)
            // Apple's URLSession decodes gzip, deflate and br and hands other codings over as
            // they came [not yet verified on a Mac: docs/apple.md]; the rest stays encoded.
            guard ["gzip", "x-gzip", "deflate", "br"].contains(coding) else { break }
            #endif
            bytes = try decode(bytes, coding: coding)
            if bytes.isEmpty { break }
        }
        return bytes
    }

    /// Raw deflate (RFC 1951: a zip member's `method 8`), at most `limit` bytes once inflated.
    public static func inflateRaw(_ bytes: [UInt8], limit: Int = limit) throws -> [UInt8] {
        var out = mm_decoded()
        defer { mm_decoded_free(&out) }
        let status = bytes.withUnsafeBufferPointer { mm_inflate($0.baseAddress, $0.count, -15, limit, &out) }
        guard status == MM_DECODE_OK else { throw failure(status == MM_DECODE_TOO_LARGE ? "larger than \(limit >> 20) MiB inflated" : "not valid deflate data") }
        return out.len == 0 ? [] : Array(UnsafeBufferPointer(start: out.data, count: out.len))
    }

    private static func decode(_ body: [UInt8], coding: String) throws -> [UInt8] {
        typealias Decoder = (UnsafePointer<UInt8>?, Int, Int, UnsafeMutablePointer<mm_decoded>?) -> Int32
        let decoder: Decoder
        switch coding {
        case "gzip", "x-gzip": decoder = mm_decode_gzip
        case "deflate": decoder = mm_decode_deflate
        #if canImport(CCompression)
        case "br": decoder = mm_decode_brotli
        case "zstd": decoder = mm_decode_zstd
        #elseif canImport(Compression)
        case "br": return try decodeBrotli(body)
        #endif
        default: throw failure("the response's Content-Encoding '\(coding)' is not one URLSession decodes")
        }
        var out = mm_decoded()
        defer { mm_decoded_free(&out) }
        let status = body.withUnsafeBufferPointer { decoder($0.baseAddress, $0.count, limit, &out) }
        switch status {
        case MM_DECODE_OK:
            return out.len == 0 ? [] : Array(UnsafeBufferPointer(start: out.data, count: out.len))
        case MM_DECODE_TOO_LARGE:
            throw failure("the response body is larger than \(limit >> 20) MiB once its '\(coding)' coding is undone")
        case MM_DECODE_NOMEM:
            throw failure("out of memory undoing the response's '\(coding)' coding")
        default:
            throw failure("the response body is not valid '\(coding)' data")
        }
    }

    /// Why a body could not be decoded (the in-process door fails its task with
    /// `URLError(.cannotDecodeContentData)` carrying this description).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private static func failure(_ description: String) -> Failure { Failure(description: description) }

    #if !canImport(CCompression) && canImport(Compression)
    /// Brotli through Apple's Compression framework (not compiled on Linux: docs/apple.md).
    private static func decodeBrotli(_ body: [UInt8]) throws -> [UInt8] {
        var stream = compression_stream(dst_ptr: UnsafeMutablePointer<UInt8>(bitPattern: 1)!, dst_size: 0,
                                        src_ptr: UnsafePointer<UInt8>(bitPattern: 1)!, src_size: 0, state: nil)
        guard compression_stream_init(&stream, COMPRESSION_STREAM_DECODE, COMPRESSION_BROTLI) == COMPRESSION_STATUS_OK else {
            throw failure("out of memory undoing the response's 'br' coding")
        }
        defer { compression_stream_destroy(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return try body.withUnsafeBufferPointer { input in
            stream.src_ptr = input.baseAddress!
            stream.src_size = input.count
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { buffer -> compression_status in
                    stream.dst_ptr = buffer.baseAddress!
                    stream.dst_size = buffer.count
                    return compression_stream_process(&stream, Int32(COMPRESSION_STREAM_FINALIZE.rawValue))
                }
                out += chunk[0..<(chunk.count - stream.dst_size)]
                if out.count > limit { throw failure("the response body is larger than \(limit >> 20) MiB once its 'br' coding is undone") }
                switch status {
                case COMPRESSION_STATUS_END: return out
                case COMPRESSION_STATUS_OK where stream.src_size > 0 || stream.dst_size == 0: continue
                case COMPRESSION_STATUS_OK: return out   // cut short: what decoded
                default: throw failure("the response body is not valid 'br' data")
                }
            }
        }
    }
    #endif
}

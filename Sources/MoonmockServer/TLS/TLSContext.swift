import COpenSSL

/// OpenSSL's server context: the certificate, key and protocol settings every connection's
/// session is made from. The one OpenSSL object the server keeps for its whole life; it is
/// configured before any loop starts and only read afterwards, which OpenSSL allows from
/// several threads at once (hence `@unchecked Sendable`).
final class TLSContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Throws ``ServerError`` naming what is wrong with the PEM text (not a certificate, not a
    /// key, a key that does not match).
    /// `http2`: ALPN offers `h2` before `http/1.1`.
    init(certificatePEM: String, keyPEM: String, http2: Bool = false) throws {
        var message = [CChar](repeating: 0, count: 512)
        guard let context = mm_tls_server_context(certificatePEM, keyPEM, http2 ? 1 : 0, &message, message.count) else {
            throw ServerError.configuration(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        pointer = context
    }

    deinit { mm_tls_context_free(pointer) }
}

/// One connection's TLS session (`SSL *`), owned by the connection's loop: reads and writes
/// through it instead of the socket. Unsafe pointer use is confined here; the loop sees byte
/// counts and the four outcomes of ``Outcome``.
struct TLSSession {
    let pointer: OpaquePointer

    /// A session for the accepted socket `fd`, or `nil` when OpenSSL has no memory for one.
    init?(_ context: TLSContext, fd: Int32) {
        guard let session = mm_tls_session(context.pointer, fd) else { return nil }
        pointer = session
    }

    /// What a read or a write that moved no bytes means.
    enum Outcome {
        case wantRead, wantWrite, closed, failed
        init(_ code: Int) {
            switch Int32(code) {
            case Int32(MM_TLS_WANT_READ): self = .wantRead
            case Int32(MM_TLS_WANT_WRITE): self = .wantWrite
            case Int32(MM_TLS_CLOSED): self = .closed
            default: self = .failed
            }
        }
    }

    /// Bytes read (> 0), else ≤ 0 for ``Outcome``. The handshake runs inside the first reads.
    @inline(__always)
    func read(_ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { mm_tls_read(pointer, buffer, count) }

    /// Bytes written (> 0), else ≤ 0 for ``Outcome``.
    @inline(__always)
    func write(_ buffer: UnsafeRawPointer, _ count: Int) -> Int { mm_tls_write(pointer, buffer, count) }

    /// The protocol ALPN settled on ("http/1.1"), or "".
    var alpn: String {
        var out = [CChar](repeating: 0, count: 32)
        mm_tls_alpn(pointer, &out, out.count)
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Frees the session, after a close_notify when `graceful` (never when it failed or for a reset).
    func free(graceful: Bool) { mm_tls_session_free(pointer, graceful ? 1 : 0) }
}

import COpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockServer
import Testing

/// The two schemes a server test runs over.
enum Scheme: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case http, https
    var testDescription: String { rawValue }
}

/// Where a raw client connects: a port (plain HTTP), or a server (its own scheme).
protocol Endpoint: Sendable {
    var endpointPort: Int { get }
    var endpointTLS: Bool { get }
}

extension Int: Endpoint {
    var endpointPort: Int { self }
    var endpointTLS: Bool { false }
}

extension MoonmockServer: Endpoint {
    var endpointPort: Int { port }
    var endpointTLS: Bool { baseURL.hasPrefix("https:") }
}

/// The certificate every HTTPS test server uses: a local authority made once per test run in a
/// folder of its own (not the user's cache).
let testCertificate: SelfSignedCertificate = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-test-tls-\(getpid())")
    return try! SelfSignedCertificate.load(directory: directory)
}()

/// A blocking client connection on loopback, plain or TLS (OpenSSL, verifying the server against
/// ``testCertificate``'s authority), for what URLSession hides.
final class RawConnection {
    let fd: Int32
    private var ssl: OpaquePointer?
    /// Configured once, then only read (OpenSSL allows that from any thread).
    nonisolated(unsafe) private static let context: OpaquePointer = mm_tls_client_context(testCertificate.authorityFile.path)!

    /// Connects (and for TLS, shakes hands); `nil` when either fails.
    init?(_ endpoint: Endpoint, timeout: Double = 5) {
        fd = RawHTTP.connect(endpoint.endpointPort)
        guard fd >= 0 else { return nil }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if endpoint.endpointTLS {
            ssl = SSL_new(Self.context)
            SSL_set_fd(ssl, fd)
            guard SSL_connect(ssl) == 1 else {
                SSL_free(ssl)
                close(fd)
                return nil
            }
        }
    }

    deinit {
        if let ssl { SSL_free(ssl) }
        close(fd)
    }

    /// Writes all of `text` (false when the connection is gone).
    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return true }
            if let ssl { return SSL_write(ssl, base, Int32(buffer.count)) == Int32(buffer.count) }
            return Glibc.send(fd, base, buffer.count, Int32(MSG_NOSIGNAL)) == buffer.count
        }
    }

    /// Bytes read (> 0), 0 when the peer closed, -1 with `errno` (EAGAIN after the timeout,
    /// ECONNRESET for a reset).
    func read(_ buffer: inout [UInt8]) -> Int {
        buffer.withUnsafeMutableBytes { b in
            guard let ssl else { return Glibc.read(fd, b.baseAddress, b.count) }
            let n = SSL_read(ssl, b.baseAddress, Int32(b.count))
            if n > 0 { return Int(n) }
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_ZERO_RETURN: return 0
            case SSL_ERROR_WANT_READ:   // SO_RCVTIMEO passed
                errno = EAGAIN
                return -1
            case SSL_ERROR_SYSCALL where errno == 0: return 0
            case SSL_ERROR_SYSCALL: return -1
            default:
                ERR_clear_error()
                errno = EPROTO
                return -1
            }
        }
    }

    /// Reads until the peer closes, fails or the timeout passes.
    func readToEnd() -> RawHTTP.Result {
        var result = RawHTTP.Result()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(&buffer)
            if n > 0 { result.bytes += buffer[0..<n]; continue }
            if n == 0 { return result }
            if errno == EAGAIN || errno == EWOULDBLOCK { result.timedOut = true } else { result.error = errno }
            return result
        }
    }
}

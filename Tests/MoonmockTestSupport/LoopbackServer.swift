import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP server on 127.0.0.1 (port chosen by the kernel) that answers every request with
/// a fixed body, for pass-through tests: the "real network" a request reaches when no mock claims it. It serves at most `limit` connections and stops on deinit.
public final class LoopbackServer: @unchecked Sendable {
    public let port: Int
    private let fd: Int32
    private let thread: Thread

    public init(body: String, limit: Int = 16) throws {
        let fd = socket(AF_INET, 1, 0)   // SOCK_STREAM, 1 on Linux and Darwin (a Glibc enum, a Darwin macro)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
        let reply = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
        thread = Thread {
            for _ in 0..<limit {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                // Until the head is in (a body may follow it in the same read).
                while !request.containsHeadEnd {
                    let n = read(client, &buffer, buffer.count)
                    if n <= 0 { break }
                    request += buffer[0..<n]
                }
                _ = reply.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                close(client)
            }
        }
        thread.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

private extension Array where Element == UInt8 {
    var containsHeadEnd: Bool {
        count >= 4 && (0...(count - 4)).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}

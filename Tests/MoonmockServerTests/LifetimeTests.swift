import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
import MoonmockServer
import Testing

/// Connection lifetimes: deadlines for heads, bodies and unread answers, and a client's FIN
/// wherever it arrives.
@Suite("Connection lifetimes")
struct LifetimeTests {
    static let script = serverScript + #"mock.get("/big", mock.text(string.rep("x", 10 * 1024 * 1024)))"#
        + #"mock.get("/mid", mock.text(string.rep("x", 4 * 1024 * 1024)))"#

    /// Waits up to `seconds` for `condition`.
    func eventually(_ seconds: Double, _ condition: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return condition()
    }

    @Test("a head trickled in byte by byte gets 408 once the header timeout passes, and the connection closes", arguments: Scheme.allCases)
    func headerTimeout(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme) { $0.headerTimeout = 1 }
        defer { server.stop() }
        let (text, elapsed, closed) = await onThread { () -> (String, Double, Bool) in
            guard let c = RawConnection(server, timeout: 0.3) else { return ("", 0, false) }
            let started = Date()
            c.send("GET /users/1 HTTP/1.1\r\nHo")
            var got = RawHTTP.Result()
            var buffer = [UInt8](repeating: 0, count: 4096)
            // A byte every 0.2 s: activity, but never a whole head.
            while Date().timeIntervalSince(started) < 4 {
                c.send("x")
                let n = c.read(&buffer)
                if n > 0 { got.bytes += buffer[0..<n] }
                if n == 0 { return (got.text, Date().timeIntervalSince(started), true) }
            }
            return (got.text, Date().timeIntervalSince(started), false)
        }
        #expect(text.hasPrefix("HTTP/1.1 408") && text.contains("did not arrive within 1 s"), "\(text)")
        #expect(closed && elapsed >= 0.9 && elapsed < 3, "\(elapsed) s")
        #expect(RawHTTP.exchange(server, "GET /users/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text.hasPrefix("HTTP/1.1 200"))
    }

    @Test("a body that stops arriving gets 408 after the body timeout", arguments: Scheme.allCases)
    func bodyTimeout(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme) { $0.bodyTimeout = 1 }
        defer { server.stop() }
        let (r, elapsed) = await onThread { () -> (RawHTTP.Result, Double) in
            guard let c = RawConnection(server, timeout: 4) else { return (RawHTTP.Result(), 0) }
            let started = Date()
            c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            return (c.readToEnd(), Date().timeIntervalSince(started))
        }
        #expect(r.text.hasPrefix("HTTP/1.1 408") && r.text.contains("made no progress"), "\(r.text)")
        #expect(!r.timedOut && elapsed >= 0.9 && elapsed < 3, "\(elapsed) s")
    }

    @Test("answers a client never reads are dropped after the send timeout, their connections with them", arguments: Scheme.allCases)
    func sendTimeout(scheme: Scheme) async throws {
        let server = try startServer(Self.script, scheme: scheme) { $0.sendTimeout = 1 }
        defer { server.stop() }
        // Three clients ask for 10 MB each (more than the sockets' buffers hold) and read nothing.
        var clients: [RawConnection] = []
        for _ in 0..<3 {
            guard let c = RawConnection(server) else { Issue.record("connect"); return }
            c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            clients.append(c)
        }
        // Dropped within 10 s (a 1 s send timeout, the sweep, and a loaded machine's lateness).
        #expect(try await eventually(10 * timeScale) { server.connectionsPerWorker.reduce(0, +) == 0 }, "\(server.connectionsPerWorker)")
        #expect(clients.count == 3)
        // A client that reads slowly but steadily keeps its answer.
        let whole = await onThread { () -> Int in
            guard let c = RawConnection(server, timeout: 10) else { return 0 }
            c.send("GET /mid HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let n = c.read(&buffer)
                if n <= 0 { return total }
                total += n
                usleep(10_000)   // 100 reads a second of at most 64 KB (16 KB over TLS): progress, if slow
            }
        }
        #expect(whole > 4 << 20)
    }

    @Test("a FIN in the same segment as the last request: the answer, then a close at once", arguments: [1, 3])
    func finWithLastSegment(requests: Int) async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let port = server.port
        let (text, elapsed, timedOut) = await onThread { () -> (String, Double, Bool) in
            let fd = RawHTTP.connect(port)
            defer { close(fd) }
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            // A first request and its answer: the connection is now one the loop watches.
            _ = Array("GET /users/0 HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            var first = [UInt8](repeating: 0, count: 4096)
            _ = read(fd, &first, first.count)
            var on: Int32 = 1
            // Corked, the request and the FIN leave together when the socket is shut down.
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
            let request = (1...requests).map { "GET /users/\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
            _ = Array(request.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            shutdown(fd, Int32(SHUT_WR))
            let started = Date()
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n > 0 { bytes += buffer[0..<n]; continue }
                return (String(decoding: bytes, as: UTF8.self), Date().timeIntervalSince(started), n < 0)
            }
        }
        for i in 1...requests { #expect(text.contains("User \(i)"), "\(text)") }
        #expect(!timedOut && elapsed < 1, "closed after \(elapsed) s")
        #expect(try await eventually(1) { server.connectionsPerWorker.reduce(0, +) == 0 })
    }

    @Test("500 clients that connect and leave at once are all released within a second")
    func burstOfClosedClients() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let port = server.port
        await onThread {
            for i in 0..<500 {
                let fd = RawHTTP.connect(port)
                if fd < 0 { continue }
                if i % 2 == 0 { _ = write(fd, "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n", 34) }
                close(fd)
            }
        }
        #expect(try await eventually(1.5) { server.connectionsPerWorker.reduce(0, +) == 0 }, "\(server.connectionsPerWorker)")
    }
}

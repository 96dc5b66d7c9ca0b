import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
import MoonmockServer
import Testing

/// HTTPS on the server's own HTTP/1.1 layer: OpenSSL sessions inside the epoll loops.
@Suite("HTTPS")
struct TLSTests {
    /// Runs curl and returns its exit status and what it wrote to stderr (with -v, the handshake).
    func curl(_ arguments: [String]) async -> (status: Int32, stderr: String, stdout: String) {
        await onThread {
            let process = Subprocess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["--max-time", "10"] + arguments
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            guard (try? process.run()) != nil else { return (-1, "", "") }
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: stderr, as: UTF8.self), String(decoding: stdout, as: UTF8.self))
        }
    }

    @Test("--tls self-signed: one local authority, made once and kept; a certificate per set of names, signed by it")
    func selfSigned() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = try SelfSignedCertificate.load(directory: dir)
        let again = try SelfSignedCertificate.load(directory: dir)
        let named = try SelfSignedCertificate.load(names: ["api.test", "10.9.8.7"], directory: dir)
        #expect(first.names == ["localhost", "127.0.0.1", "::1"])
        #expect(named.names == ["localhost", "127.0.0.1", "::1", "api.test", "10.9.8.7"])
        #expect(again.certificatePEM == first.certificatePEM && again.keyPEM == first.keyPEM)   // kept, not made again
        #expect(named.certificatePEM != first.certificatePEM)
        #expect(named.authorityFile == first.authorityFile)
        let mode = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("ca-key.pem").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let server = try startServer(serverScript) {
            $0.tlsCertificatePEM = named.certificatePEM
            $0.tlsKeyPEM = named.keyPEM
        }
        defer { server.stop() }
        let ca = named.authorityFile.path
        for host in ["localhost", "127.0.0.1", "api.test"] {
            let r = await curl(["-sS", "-v", "--cacert", ca, "--resolve", "api.test:\(server.port):127.0.0.1",
                                "https://\(host):\(server.port)/users/3"])
            #expect(r.status == 0 && r.stdout == #"{"id":3,"name":"User 3"}"#, "\(host): \(r.stderr)")
            #expect(r.stderr.contains("ALPN: server accepted h2"), "\(r.stderr)")
        }
        // A client offering only HTTP/1.1 gets it.
        let http1 = await curl(["-sS", "-v", "--http1.1", "--cacert", ca, "https://localhost:\(server.port)/users/4"])
        #expect(http1.status == 0 && http1.stdout == #"{"id":4,"name":"User 4"}"#, "\(http1.stderr)")
        #expect(http1.stderr.contains("ALPN: server accepted http/1.1"), "\(http1.stderr)")
        // Not a name of the certificate: curl refuses it (exit 60), and the server serves on.
        let other = await curl(["-sS", "--cacert", ca, "--resolve", "other.test:\(server.port):127.0.0.1", "https://other.test:\(server.port)/users/3"])
        #expect(other.status == 60)
        // Not trusted without the authority.
        #expect(await curl(["-sS", "https://127.0.0.1:\(server.port)/users/3"]).status == 60)
        #expect(await curl(["-sS", "--cacert", ca, "https://127.0.0.1:\(server.port)/users/4"]).stdout == #"{"id":4,"name":"User 4"}"#)
    }

    @Test("a certificate and key that do not belong together are refused at start, with the reason")
    func mismatchedKey() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try SelfSignedCertificate.load(directory: dir)
        let b = try SelfSignedCertificate.load(names: ["b.test"], directory: dir)
        let error = #expect(throws: ServerError.self) {
            _ = try startServer(serverScript) {
                $0.tlsCertificatePEM = a.certificatePEM
                $0.tlsKeyPEM = b.keyPEM
            }
        }
        #expect(error?.description.contains("does not match") == true, "\(String(describing: error))")
        let garbage = #expect(throws: ServerError.self) {
            _ = try startServer(serverScript) {
                $0.tlsCertificatePEM = "not a certificate"
                $0.tlsKeyPEM = b.keyPEM
            }
        }
        #expect(garbage?.description.contains("not a PEM certificate") == true, "\(String(describing: garbage))")
    }

    @Test("over TLS: pipelined requests in order, a request sent in pieces, and a 4 MB answer to a slow reader")
    func framingOverTLS() async throws {
        let big = String(repeating: "x", count: 4 << 20)
        let server = try startServer(serverScript + #"mock.get("/big", mock.text(string.rep("x", 4 * 1024 * 1024)))"#, scheme: .https)
        defer { server.stop() }
        let pipelined = RawHTTP.exchange(server, "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            + "GET /users/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let t = pipelined.text
        let a = t.range(of: "User 1"), b = t.range(of: #""body":"abc""#), c = t.range(of: "User 3")
        #expect(a != nil && b != nil && c != nil && a!.lowerBound < b!.lowerBound && b!.lowerBound < c!.lowerBound, "\(t)")

        let pieces = await onThread { () -> String in
            guard let connection = RawConnection(server) else { return "" }
            for part in ["POST /echo HTTP/1.1\r\nHo", "st: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhe", "llo"] {
                connection.send(part)
                usleep(20_000)
            }
            return connection.readToEnd().text
        }
        #expect(pieces.contains(#""body":"hello""#), "\(pieces)")

        let slow = await onThread { () -> (Int, Bool) in
            guard let connection = RawConnection(server, timeout: 10) else { return (0, false) }
            connection.send("GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            usleep(300_000)   // the server's socket fills: its writes wait for EPOLLOUT
            let r = connection.readToEnd()
            return (r.bytes.count, r.text.hasSuffix(String(big.suffix(64))))
        }
        #expect(slow.0 > 4 << 20 && slow.1, "\(slow)")
    }

    @Test("a failed handshake, a client that leaves mid-handshake, and garbage do not disturb other connections")
    func badClients() async throws {
        let server = try startServer(serverScript, scheme: .https)
        defer { server.stop() }
        // A TLS client that does not trust the server aborts the handshake.
        #expect(await curl(["-sS", "https://127.0.0.1:\(server.port)/users/1"]).status == 60)
        // A ClientHello cut short, then gone.
        let fd = RawHTTP.connect(server.port)
        _ = [UInt8]([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        // A handshake record of garbage: a TLS alert, then the connection closes.
        let garbage = await onThread { RawHTTP.exchange(server.port, "\u{16}\u{03}\u{01}\u{00}\u{05}hello") }
        #expect(!garbage.timedOut && !garbage.text.contains("HTTP/"))
        let ok = await onThread { RawHTTP.exchange(server, "GET /users/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(ok.text.hasPrefix("HTTP/1.1 200") && ok.text.hasSuffix(#"{"id":2,"name":"User 2"}"#), "\(ok.text)")
        // The request's scheme is https.
        let echo = try await server.fetch("/__moonmock/requests")
        #expect(echo.body.contains("https://"), "\(echo.body.prefix(300))")
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
import MoonmockServer
import Testing

/// RFC 9112 framing, as strict as the RFC or stricter: what could make a server and a proxy in
/// front of it disagree about where a request ends is refused, and the connection closes.
@Suite("Strict HTTP/1.1 framing")
struct StrictFramingTests {
    /// A refused request with a well-formed one pipelined after it: the refusal is the only
    /// answer (the second request is never read as one), and the connection closes.
    static let smuggled = "GET /users/9 HTTP/1.1\r\nHost: x\r\n\r\n"

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: String
        let status: Int
        var testDescription: String { name }
    }

    static let refusals: [Case] = [
        Case(name: "identity, chunked", request: "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 501),
        Case(name: "gzip, chunked", request: "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 501),
        Case(name: "two chunked lines", request: "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 400),
        Case(name: "chunked, chunked", request: "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 400),
        Case(name: "chunked then gzip on a second line", request: "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 501),
        Case(name: "empty Transfer-Encoding", request: "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n", status: 400),
        Case(name: "Content-Length and Transfer-Encoding", request: "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400),
        Case(name: "two different Content-Lengths", request: "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\nabc", status: 400),
        Case(name: "Transfer-Encoding in HTTP/1.0", request: "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 400),
        Case(name: "no Host in HTTP/1.1", request: "GET /users/1 HTTP/1.1\r\n\r\n", status: 400),
        Case(name: "empty Host", request: "GET /users/1 HTTP/1.1\r\nHost: \r\n\r\n", status: 400),
        Case(name: "two Host fields", request: "GET /users/1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400),
        Case(name: "two equal Host fields", request: "GET /users/1 HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", status: 400),
        Case(name: "Host with a path", request: "GET /users/1 HTTP/1.1\r\nHost: a/b\r\n\r\n", status: 400),
        Case(name: "Host with a space", request: "GET /users/1 HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400),
        Case(name: "Host with userinfo", request: "GET /users/1 HTTP/1.1\r\nHost: user@a\r\n\r\n", status: 400),
        Case(name: "Host with a bad port", request: "GET /users/1 HTTP/1.1\r\nHost: a:80x\r\n\r\n", status: 400),
        Case(name: "two Host fields in HTTP/1.0", request: "GET /users/1 HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", status: 400),
        Case(name: "asterisk form with GET", request: "GET * HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        Case(name: "authority form with GET", request: "GET example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        Case(name: "CONNECT", request: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", status: 501),
        Case(name: "HTTP/2.0 on the wire", request: "GET /users/1 HTTP/2.0\r\nHost: x\r\n\r\n", status: 505),
    ]

    @Test("refused framing gets its status and a close; a request pipelined after it is never served", arguments: refusals, Scheme.allCases)
    func refused(_ refusal: Case, scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        // Blocking reads on a thread of their own, not on the cooperative pool the other tests share.
        let r = await onThread { RawHTTP.exchange(server, refusal.request + Self.smuggled) }
        #expect(r.text.hasPrefix("HTTP/1.1 \(refusal.status) "), "\(r.text)")
        #expect(r.text.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer only: \(r.text)")
        #expect(!r.text.contains("User 9") && !r.timedOut, "\(r.text)")
        #expect(r.text.contains("Connection: close"))
        // The server is still serving.
        let next = await onThread { RawHTTP.exchange(server, "GET /users/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(next.text.hasPrefix("HTTP/1.1 200"))
    }

    @Test("methods are case-sensitive and never rewritten: `get` is not GET")
    func methodCase() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let lower = await onThread { RawHTTP.exchange(server, "get /users/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        // `get` is another method than GET: the path has rules, not for it.
        #expect(lower.text.hasPrefix("HTTP/1.1 405"), "\(lower.text)")
        #expect(lower.text.contains("Allow: GET, HEAD"), "\(lower.text)")
        #expect(!lower.text.contains("User 1"))
        let journal = await onThread { RawHTTP.exchange(server, "GET /__moonmock/requests HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").text }
        #expect(journal.contains(#""method":"get""#), "\(journal.suffix(400))")
    }

    @Test("nothing after a request with Connection: close is read as a request", arguments: Scheme.allCases)
    func closeEndsThePipeline(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        let r = await onThread { RawHTTP.exchange(server, "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /users/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + Self.smuggled) }
        #expect(r.text.contains("User 1") && r.text.contains("User 2") && !r.text.contains("User 9"), "\(r.text)")
        #expect(!r.timedOut)
    }

    @Test("HTTP/1.2 is served as HTTP/1.1")
    func laterMinorVersion() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let r = await onThread { RawHTTP.exchange(server, "GET /users/1 HTTP/1.2\r\nHost: x\r\n\r\nGET /users/2 HTTP/1.2\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(r.text.hasPrefix("HTTP/1.1 200"), "\(r.text)")
        #expect(r.text.contains("User 1") && r.text.contains("User 2") && !r.timedOut)   // kept alive, as 1.1 is
    }

    @Test("100 Continue goes to HTTP/1.1 clients only; an HTTP/1.0 client's expectation is ignored")
    func continueOnlyFor11() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let port = server.port
        let (v11, v10) = await onThread { () -> (String, String) in
            func run(_ version: String) -> String {
                guard let c = RawConnection(port, timeout: 0.5) else { return "" }
                c.send("POST /echo HTTP/\(version)\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = c.read(&buffer)   // what the server says before the body is sent
                let first = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
                c.send("abc")
                return first + "|" + c.readToEnd().text
            }
            return (run("1.1"), run("1.0"))
        }
        #expect(v11.hasPrefix("HTTP/1.1 100 Continue\r\n\r\n"), "\(v11)")
        #expect(v11.contains(#""body":"abc""#))
        #expect(v10.hasPrefix("|HTTP/1.1 200"), "\(v10)")   // nothing before the body was sent
        #expect(v10.contains(#""body":"abc""#))
    }

    @Test("OPTIONS * asks about the server: 200 with Allow")
    func optionsAsterisk() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let r = await onThread { RawHTTP.exchange(server, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(r.text.hasPrefix("HTTP/1.1 200") && r.text.contains("Allow: GET, HEAD, POST"), "\(r.text)")
    }

    @Test("a rule cannot answer a 1xx as its final response: 500 that says so, through both the server and the journal", arguments: [100, 101, 103])
    func interimStatus(status: Int) async throws {
        let server = try startServer("mock.get('/early', mock.status(\(status)))")
        defer { server.stop() }
        let r = await onThread { RawHTTP.exchange(server, "GET /early HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(r.text.hasPrefix("HTTP/1.1 500"), "\(r.text)")
        #expect(r.text.contains("answered status \(status)") && r.text.contains("200...999"), "\(r.text)")
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockScript
import MoonmockProxy
import MoonmockServer
import Testing

/// The upstream the proxy tests forward to: a Moonmock server on loopback with a script of
/// real answers (an echo, text, bytes, a gzip-encoded body, a redirect, GraphQL, a slow one).
let upstreamScript = #"""
mock.any("/echo/*rest", function(req)
  return { method = req.method, path = req.path, q = req.query.q, host = req.headers.host, added = req.headers["x-added"],
           removed = req.headers["x-remove"], connection = req.headers["connection"], body = req.body }
end)
mock.get("/text", mock.text("plain text", { headers = { ["X-Up"] = "yes" } }))
mock.get("/bin", mock.text("\000\001\002\255", { headers = { ["Content-Type"] = "application/octet-stream" } }))
mock.get("/gz", mock.text("\031\139\008\000\000\000\000\000\002\003\203\072\205\201\201\087\072\043\202\207\085\072\175\202\044\000\000\100\170\142\181\015\000\000\000",
  { headers = { ["Content-Encoding"] = "gzip", ["Content-Type"] = "text/plain" } }))
mock.get("/redirect", mock.redirect("/text", 302))
mock.graphql("GetUser", { data = { user = { id = 1 } } })
mock.get("/slow", mock.text("late", { delay = 2000 }))
mock.get("/teapot", mock.status(418, "short and stout"))
"""#

/// A socket listening on 127.0.0.1 at a port the kernel chose: (descriptor, port).
func loopbackListener() -> (Int32, Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    listen(listener, 8)
    var bound = sockaddr_in(), length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
    return (listener, Int(UInt16(bigEndian: bound.sin_port)))
}

/// A server that answers every request with a chunked body, by hand (Moonmock's own server
/// always sends a length).
final class ChunkedUpstream: @unchecked Sendable {
    let port: Int
    private let fd: Int32

    init() throws {
        let (listener, port) = loopbackListener()
        fd = listener
        self.port = port
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = read(client, &buffer, buffer.count)
                let answer = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n chunks\r\n0\r\n\r\n"
                _ = answer.withCString { write(client, $0, strlen($0)) }
                close(client)
            }
        }.start()
    }

    deinit { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}

@Suite("mock.proxy on the server")
struct ProxyTests {
    @Test("forwards method, path, query, fields and body; Host is the upstream's, hop-by-hop fields dropped, opts.headers applied")
    func forwards() async throws {
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        let base = "http://127.0.0.1:\(upstream.port)"
        let server = try startServer("mock.any('/echo/*rest', mock.proxy('\(base)', { headers = { ['X-Added'] = 'yes', ['X-Remove'] = false } }))\n"
                                     + "mock.get('/*rest', mock.proxy('\(base)'))\n" + "mock.graphql('GetUser', mock.proxy('\(base)'))")
        defer { server.stop() }
        let echo = try await server.fetch("/echo/a/b?q=1", method: "PUT", body: #"{"x":1}"#, headers: ["X-Remove": "gone", "Connection": "keep-alive"])
        let json = try JSONValue(parsing: Array(echo.body.utf8))
        #expect(echo.status == 200)
        #expect(json["method"] == .string("PUT") && json["path"] == .string("/echo/a/b") && json["q"] == .string("1"))
        #expect(json["host"] == .string("127.0.0.1:\(upstream.port)"))
        #expect(json["added"] == .string("yes") && json["removed"] == nil && json["connection"] == nil)
        #expect(json["body"] == .string(#"{"x":1}"#))

        let text = try await server.fetch("/text")
        #expect(text.body == "plain text" && text.response.value(forHTTPHeaderField: "X-Up") == "yes")
        let teapot = try await server.fetch("/teapot")
        #expect(teapot.status == 418 && teapot.body == "short and stout")
        #expect(try await server.fetch("/graphql", method: "POST", body: #"{"operationName":"GetUser"}"#).body == #"{"data":{"user":{"id":1}}}"#)

        let port = server.port
        let bin = await onThread { RawHTTP.exchange(port, "GET /bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(Array(bin.bytes.suffix(4)) == [0, 1, 2, 255])
        // A coded body goes through as it was sent, with its coding.
        let gz = await onThread { RawHTTP.exchange(port, "GET /gz HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n") }
        #expect(gz.text.contains("Content-Encoding: gzip\r\n") && gz.text.contains("Content-Length: 35\r\n"))
        #expect(Array(gz.bytes.suffix(35).prefix(2)) == [0x1F, 0x8B])
        #expect(try await server.fetch("/gz").body == "hello from gzip")   // URLSession undoes it
        // A redirect reaches the client untouched.
        let redirect = await onThread { RawHTTP.exchange(port, "GET /redirect HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(redirect.text.hasPrefix("HTTP/1.1 302 ") && redirect.text.contains("Location: /text\r\n"))
    }

    @Test("a chunked upstream answer arrives whole; an unreachable or slow upstream is a 502 saying which and why")
    func failures() async throws {
        let chunked = try ChunkedUpstream()
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        let server = try startServer("""
            mock.get('/chunked', mock.proxy('http://127.0.0.1:\(chunked.port)'))
            mock.get('/down', mock.proxy('http://127.0.0.1:1'))
            mock.get('/slow', mock.proxy('http://127.0.0.1:\(upstream.port)', { timeout = 300 }))
            mock.get('/users/:id', function(req)
              if req.params.id == "7" then return { id = 7, local_answer = true } end
              return mock.proxy('http://127.0.0.1:\(upstream.port)/echo')
            end)
            """)
        defer { server.stop() }
        let whole = try await server.fetch("/chunked")
        #expect(whole.status == 200 && whole.body == "hello chunks")
        let down = try await server.fetch("/down")
        #expect(down.status == 502 && down.body.contains("mock.proxy: upstream http://127.0.0.1:1 did not answer http://127.0.0.1:1/down"))
        let started = Date()
        let slow = try await server.fetch("/slow")
        #expect(slow.status == 502 && slow.body.lowercased().contains("timed out"))
        #expect(Date().timeIntervalSince(started) < 1.8 * timeScale)   // the timeout, not the upstream's 2 s
        // A handler passes through what it does not answer itself (a path prefix of the base is kept).
        #expect(try await server.fetch("/users/7").body == #"{"id":7,"local_answer":true}"#)
        let passed = try JSONValue(parsing: Array(try await server.fetch("/users/8").body.utf8))
        #expect(passed["path"] == .string("/echo/users/8"))
        #expect(try await server.fetch("/users/7").status == 200)   // and the server serves on
    }

    @Test("requests pipelined behind a proxied one are answered, in order")
    func pipelinedBehindProxy() async throws {
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        let server = try startServer("""
        mock.get("/text", mock.proxy("http://127.0.0.1:\(upstream.port)"))
        mock.get("/teapot", mock.proxy("http://127.0.0.1:\(upstream.port)"))
        mock.get("/local", mock.text("local"))
        """)
        defer { server.stop() }
        let port = server.port
        let r = await onThread {
            RawHTTP.exchange(port, "GET /text HTTP/1.1\r\nHost: x\r\n\r\nGET /local HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /teapot HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        }
        expectInOrder(r.text, ["plain text", "local", "short and stout"])
        #expect(!r.timedOut)
    }

    @Test("requests one after another reuse the connection to the upstream")
    func reusesConnections() async throws {
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        // A pool of its own (the shared one serves the other tests meanwhile), of four threads.
        let pool = Upstream(threads: 4)
        let target = ProxyTarget(base: "http://127.0.0.1:\(upstream.port)")
        let bodies = await onThread { (0..<6).map { _ in pool.fetch(MockRequest(method: "GET", url: "http://localhost/text"), to: target).body } }
        #expect(bodies.allSatisfy { $0 == Array("plain text".utf8) })
        // Open at the upstream: one connection, the thread that worked last taking each request.
        #expect(upstream.connectionsPerWorker.reduce(0, +) == 1, "\(upstream.connectionsPerWorker)")
    }

    @Test("mock.proxy checks its arguments at load time")
    func loadErrors() throws {
        for (script, message) in [("mock.get('/a', mock.proxy('api.example.com'))", "must start with http:// or https://"),
                                  ("mock.get('/a', mock.proxy('http://x', { timeout = -1 }))", "timeout is milliseconds"),
                                  ("mock.get('/a', mock.proxy('http://x', { retries = 2 }))", "retries")] {
            do {
                _ = try Engine().loadScript(source: script)
                Issue.record("\(script) loaded")
            } catch {
                #expect(String(describing: error).contains(message), "\(error)")
            }
        }
    }
}

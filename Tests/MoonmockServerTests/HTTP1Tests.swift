import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
@testable import MoonmockServer
import Testing

/// The native HTTP/1.1 layer on the wire: framing a client relies on.
@Suite("HTTP/1.1 layer")
struct HTTP1Tests {
    @Test("pipelined requests on one connection are answered in order")
    func pipelining() throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let r = RawHTTP.exchange(server.port, "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            + "GET /users/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        expectInOrder(r.text, ["\"name\":\"User 1\"", "\"body\":\"abc\"", "\"name\":\"User 3\""])
        #expect(r.text.components(separatedBy: "HTTP/1.1 200 OK").count == 4)
        #expect(!r.timedOut)   // closed after the third, as asked
    }

    @Test("a fault in a pipeline comes after the answers to the requests before it", arguments: ["/empty", "/reset", "/chunk"])
    func faultAfterPipelinedAnswers(fault: String) throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let r = RawHTTP.exchange(server.port, "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /users/2 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET \(fault) HTTP/1.1\r\nHost: x\r\n\r\n")
        expectInOrder(r.text, ["\"name\":\"User 1\"", "\"name\":\"User 2\""])
        #expect(!r.timedOut)
        // The server is still serving.
        #expect(RawHTTP.exchange(server.port, "GET /users/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text.hasPrefix("HTTP/1.1 200"))
    }

    @Test("a chunked request body is decoded, however it is split over packets")
    func chunkedBody() throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let fd = RawHTTP.connect(server.port)
        #expect(fd >= 0)
        defer { close(fd) }
        let parts = ["POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\nMo",
                     "on\r\n5;ext=1\r\nmock!\r", "\n0\r\nX-Trailer: y\r\n\r\n"]
        for part in parts {
            _ = Array(part.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            usleep(30_000)
        }
        let text = RawHTTP.readAll(fd)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.contains(#""body":"Moonmock!""#) && text.contains(#""len":9"#), "\(text)")
    }

    @Test("a request written in two pieces by a client with Nagle's algorithm on is answered without waiting for a delayed ACK")
    func splitRequestIsAcknowledged() throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        // The body waits in the client's kernel until the head is acknowledged (Nagle); a server
        // that delayed that ACK would hold each exchange for the delayed-ACK timer (40 ms).
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<5 {
            let fd = RawHTTP.connect(server.port)
            #expect(fd >= 0)
            defer { close(fd) }
            let head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nConnection: close\r\n\r\n"
            _ = Array(head.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            _ = Array("piece\(i)".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let text = RawHTTP.readAll(fd)
            #expect(text.hasPrefix("HTTP/1.1 200") && text.contains(#""body":"piece\#(i)""#), "\(text)")
        }
        let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        #expect(milliseconds < 150, "5 split requests took \(milliseconds) ms")
    }

    @Test("Expect: 100-continue gets 100 Continue before the body is sent")
    func expectContinue() throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let fd = RawHTTP.connect(server.port)
        defer { close(fd) }
        let head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
        _ = Array(head.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var buffer = [UInt8](repeating: 0, count: 256)
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let n = read(fd, &buffer, buffer.count)
        #expect(String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        _ = Array("hello".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let text = RawHTTP.readAll(fd)
        #expect(text.hasPrefix("HTTP/1.1 200") && text.contains(#""body":"hello""#), "\(text)")
    }

    @Test("HTTP/1.0 closes unless asked to keep the connection alive")
    func http10() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let port = server.port
        let (closing, kept) = await onThread {
            (RawHTTP.exchange(port, "GET /users/7 HTTP/1.0\r\n\r\n", timeout: 2),
             RawHTTP.exchange(port, "GET /users/7 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", timeout: 0.5))
        }
        #expect(closing.text.hasPrefix("HTTP/1.1 200") && closing.text.contains("Connection: close") && !closing.timedOut)
        #expect(kept.text.contains("Connection: keep-alive") && kept.timedOut)
    }

    @Test("requests the layer refuses get a status that says why, and the connection closes")
    func refused() throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let huge = RawHTTP.exchange(server.port, "GET /users/7 HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n")
        #expect(huge.text.hasPrefix("HTTP/1.1 431"))
        let version = RawHTTP.exchange(server.port, "GET /users/7 HTTP/2.0\r\nHost: x\r\n\r\n")
        #expect(version.text.hasPrefix("HTTP/1.1 505"))
        let smuggle = RawHTTP.exchange(server.port,
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        #expect(smuggle.text.hasPrefix("HTTP/1.1 400"))
        let folded = RawHTTP.exchange(server.port, "GET /users/7 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n")
        #expect(folded.text.hasPrefix("HTTP/1.1 400"))
        let coding = RawHTTP.exchange(server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n")
        #expect(coding.text.hasPrefix("HTTP/1.1 501"))
        // The server is still serving.
        #expect(RawHTTP.exchange(server.port, "GET /users/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text.hasPrefix("HTTP/1.1 200"))
    }

    @Test("a client that shuts down its sending side still gets its answer, delayed or not")
    func halfClose() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let port = server.port
        let (answers, held, heldWait) = await onThread {
            var answers: [String] = []
            for path in ["/users/7", "/half"] {
                let fd = RawHTTP.connect(port)
                defer { close(fd) }
                _ = Array("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                shutdown(fd, Int32(SHUT_WR))
                answers.append(RawHTTP.readAll(fd))
            }
            // The held request of a client that has finished sending is let go at once.
            let fd = RawHTTP.connect(port)
            defer { close(fd) }
            _ = Array("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            usleep(100_000)
            shutdown(fd, Int32(SHUT_WR))
            let started = Date()
            let held = RawHTTP.readAll(fd)
            return (answers, held, Date().timeIntervalSince(started))
        }
        for (path, text) in zip(["/users/7", "/half"], answers) {
            #expect(text.hasPrefix("HTTP/1.1 200"), "\(path): \(text)")
            // Answered at once, the response went out before the end of input was read; the
            // delayed one knows, and says so.
            if path == "/half" { #expect(text.contains("Connection: close")) }
        }
        #expect(held.isEmpty)
        #expect(heldWait < 2)
    }

    @Test("a client that pipelines without reading is answered in full once it reads")
    func backpressure() async throws {
        let server = try startServer("mock.get('/kb', mock.text(string.rep('k', 64 * 1024)))")
        defer { server.stop() }
        let port = server.port
        let count = 64   // 4 MiB of answers: beyond the socket buffers and the 1 MiB the server queues
        let (sent, total, text) = await onThread {
            let fd = RawHTTP.connect(port)
            defer { close(fd) }
            var requests = String(repeating: "GET /kb HTTP/1.1\r\nHost: x\r\n\r\n", count: count - 1)
            requests += "GET /kb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            let bytes = Array(requests.utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                sent += n
            }
            usleep(300_000)
            return (sent, bytes.count, RawHTTP.readAll(fd))
        }
        #expect(sent == total)
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count - 1 == count)
        #expect(text.utf8.count > count * 64 * 1024)
    }

    @Test("an absolute-form target (as sent to a proxy) routes by its path and names its host")
    func absoluteForm() throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let r = RawHTTP.exchange(server.port, "POST http://api.example.com/echo?q=1 HTTP/1.1\r\nHost: api.example.com\r\n"
            + "Content-Length: 2\r\nConnection: close\r\n\r\nhi")
        #expect(r.text.hasPrefix("HTTP/1.1 200"), "\(r.text)")
        #expect(r.text.contains(#""host":"api.example.com""#) && r.text.contains(#""q":"1""#) && r.text.contains(#""body":"hi""#))
    }

    @Test("each request on a connection gets its own host, port and path, however alike the heads")
    func hostsAndTargetsPerRequest() throws {
        // The loop reuses the strings of the previous head when the bytes are equal: requests
        // that differ in one byte of the Host or the target must still see their own.
        let server = try startServer("""
            mock.get('/*p', function(req) return { host = req.host, port = req.port, path = req.path } end)
            """)
        defer { server.stop() }
        let heads = [("a.test:81", "/aa"), ("a.test:81", "/aa"), ("b.test:81", "/ab"), ("b.test:82", "/ab"),
                     ("B.TEST", "/ab?x=1"), ("[::1]:83", "/ab")]
        let r = RawHTTP.exchange(server.port, heads.enumerated().map { i, h in
            "GET \(h.1) HTTP/1.1\r\nHost: \(h.0)\r\n\(i == heads.count - 1 ? "Connection: close\r\n" : "")\r\n"
        }.joined())
        expectInOrder(r.text, [#"{"host":"a.test","path":"/aa","port":81}"#, #"{"host":"a.test","path":"/aa","port":81}"#,
                               #"{"host":"b.test","path":"/ab","port":81}"#, #"{"host":"b.test","path":"/ab","port":82}"#,
                               #"{"host":"b.test","path":"/ab","port":80}"#, #"{"host":"[::1]","path":"/ab","port":83}"#])
        #expect(r.text.components(separatedBy: "HTTP/1.1 200 OK").count == heads.count + 1)
    }

    @Test("each request on a connection gets its own headers and body, whatever sizes came before")
    func headersAndBodiesPerRequest() throws {
        // The loop builds each request in the storage of the one before: a body that shrinks,
        // grows past what that storage keeps, or is empty must arrive as sent, with its own headers.
        let server = try startServer("""
            mock.post('/b', function(req)
              return { n = req.headers['x-n'], other = req.headers['x-other'], size = #req.body,
                       head = req.body:sub(1, 3), tail = req.body:sub(-3) }
            end)
            """)
        defer { server.stop() }
        let sizes = [3, 100_000, 5, 70_000, 0, 2, 65_536, 4]
        var text = ""
        for (i, size) in sizes.enumerated() {
            let body = String(repeating: String(UnicodeScalar(UInt8(97 + i))), count: size)
            let other = i % 3 == 0 ? "X-Other: \(i)\r\n" : ""
            let close = i == sizes.count - 1 ? "Connection: close\r\n" : ""
            text += "POST /b HTTP/1.1\r\nHost: x\r\nX-N: \(i)\r\n\(other)\(close)Content-Length: \(size)\r\n\r\n\(body)"
        }
        let r = RawHTTP.exchange(server.port, text)
        expectInOrder(r.text, sizes.enumerated().map { i, size in
            let c = String(UnicodeScalar(UInt8(97 + i)))
            let ends = String(repeating: c, count: min(3, size))
            let other = i % 3 == 0 ? #","other":"\#(i)""# : ""
            return #"{"head":"\#(ends)","n":"\#(i)"\#(other),"size":\#(size),"tail":"\#(ends)"}"#
        })
        #expect(r.text.components(separatedBy: "HTTP/1.1 200 OK").count == sizes.count + 1)
    }

    @Test("a response larger than the socket buffer arrives whole to a slow reader")
    func largeResponse() async throws {
        let size = 8 << 20
        let server = try startServer("mock.get('/big', mock.text(string.rep('x', \(size))))")
        defer { server.stop() }
        let port = server.port
        let text = await onThread {
            let fd = RawHTTP.connect(port)
            defer { close(fd) }
            _ = Array("GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            usleep(200_000)   // the server fills the socket and waits for it to drain
            return RawHTTP.readAll(fd)
        }
        #expect(text.hasPrefix("HTTP/1.1 200") && text.contains("Content-Length: \(size)\r\n"))
        #expect(text.utf8.count - (text.range(of: "\r\n\r\n").map { text.utf8.distance(from: text.startIndex, to: $0.upperBound) } ?? 0) == size)
    }
}

extension RawHTTP {
    /// Reads until the peer closes (or 5 s pass).
    static func readAll(_ fd: Int32) -> String {
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Every one of `needles` is in `text`, in this order.
func expectInOrder(_ text: String, _ needles: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    let found = needles.map { text.range(of: $0)?.lowerBound }
    #expect(found.allSatisfy { $0 != nil }, "\(text)", sourceLocation: sourceLocation)
    #expect(found.compactMap { $0 } == found.compactMap { $0 }.sorted(), "\(text)", sourceLocation: sourceLocation)
}

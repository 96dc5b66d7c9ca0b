import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
@testable import MoonmockServer
import Testing

/// The layer against what careless and hostile clients send.
extension HTTP1Tests {
    @Test("CR and LF in a script's header value cannot start a header of their own")
    func headerInjection() throws {
        let server = try startServer(#"mock.get('/x', mock.text('ok', { headers = { ['X-Note'] = 'a\r\nSet-Cookie: evil=1' } }))"#)
        defer { server.stop() }
        let text = RawHTTP.exchange(server.port, "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(!text.contains("\r\nSet-Cookie"), "\(text)")
    }

    @Test("a client that connects and speaks later is answered; a closing answer arrives whole")
    func quietConnect() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let port = server.port
        let (late, closing) = await onThread {
            // Accepting waits for the first bytes (TCP_DEFER_ACCEPT, 1 s): a client that stays
            // quiet past that is still taken in and answered.
            let fd = RawHTTP.connect(port)
            defer { close(fd) }
            usleep(1_500_000)
            _ = Array("GET /users/7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
                .withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let late = RawHTTP.readAll(fd)
            // The last answer of a connection leaves together with its close.
            let closing = RawHTTP.exchange(port, "GET /users/7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return (late, closing)
        }
        for text in [late, closing.text] {
            #expect(text.hasPrefix("HTTP/1.1 200") && text.contains("Connection: close"), "\(text)")
            #expect(text.hasSuffix(#""name":"User 7"}"#), "\(text)")
        }
        #expect(!closing.timedOut)
    }

    @Test("idle keep-alive connections are closed after the idle timeout")
    func idleTimeout() async throws {
        let server = try startServer(serverScript) { $0.idleTimeout = 1 }
        defer { server.stop() }
        let port = server.port
        let (r, waited) = await onThread {
            let started = Date()
            let r = RawHTTP.exchange(port, "GET /users/7 HTTP/1.1\r\nHost: x\r\n\r\n", timeout: 5)
            return (r, Date().timeIntervalSince(started))
        }
        #expect(r.text.hasPrefix("HTTP/1.1 200") && !r.timedOut)
        #expect(waited >= 0.9 && waited < 4, "closed after \(waited) s")
    }

    @Test("garbage in any amount and slicing gets an error or a close, and the server keeps serving")
    func garbage() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let port = server.port
        // The blocking exchanges run on a thread of their own, not on the test runner's pool.
        let answers: [(round: Int, text: String)] = await onThread {
            var random = SystemRandomNumberGenerator()
            let valid = Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".utf8)
            var answers: [(Int, String)] = []
            for round in 0..<100 {
                var bytes = valid
                // Flip, drop or insert a few bytes of a valid request, or send pure noise.
                if round % 5 == 0 {
                    bytes = (0..<Int.random(in: 1...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                } else {
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        let i = Int.random(in: 0..<bytes.count, using: &random)
                        switch Int.random(in: 0..<3, using: &random) {
                        case 0: bytes[i] = UInt8.random(in: 0...255, using: &random)
                        case 1: bytes.remove(at: i)
                        default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: i)
                        }
                    }
                }
                let fd = RawHTTP.connect(port)
                var tv = timeval(tv_sec: 0, tv_usec: 100_000)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                var at = 0
                while at < bytes.count {
                    let n = min(bytes.count - at, Int.random(in: 1...40, using: &random))
                    _ = bytes[at..<(at + n)].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    at += n
                }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = read(fd, &buffer, buffer.count)
                if n > 0 { answers.append((round, String(decoding: buffer[0..<n], as: UTF8.self))) }
                close(fd)
            }
            return answers
        }
        for answer in answers {
            let status = Int(answer.text.dropFirst(9).prefix(3)) ?? 0
            #expect([200, 404, 400, 405, 413, 417, 431, 501, 505].contains(status), "round \(answer.round): \(answer.text)")
        }
        let ok = await onThread { RawHTTP.exchange(port, "GET /users/5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(ok.text.hasPrefix("HTTP/1.1 200") && ok.text.contains(#""name":"User 5""#))
    }

    // MARK: the parsers alone

    @Test("request heads: Connection and Transfer-Encoding are comma-separated lists")
    func parseListFields() throws {
        func head(_ fields: String, version: String = "1.1") -> RequestHead.Parse {
            Array("POST / HTTP/\(version)\r\nHost: x\r\n\(fields)\r\n\r\n".utf8).withUnsafeBytes { RequestHead.parse($0, limit: 1024) }
        }
        func keepAlive(_ value: String, version: String = "1.1") -> Bool? {
            guard case .complete(let h, _) = head("Connection: \(value)", version: version) else { return nil }
            return h.keepAlive
        }
        // Any element, in any case, with spaces, tabs and empty elements around it.
        #expect(keepAlive("close") == false && keepAlive("CLOSE") == false && keepAlive("Upgrade ,\t close") == false)
        #expect(keepAlive(",, close,") == false && keepAlive("keep-alive, Close") == false)
        #expect(keepAlive("closed") == true && keepAlive("close-ish, x") == true && keepAlive("clo se") == true)
        #expect(keepAlive("keep-alive", version: "1.0") == true && keepAlive(" Keep-Alive ,", version: "1.0") == true)
        #expect(keepAlive("upgrade", version: "1.0") == false && keepAlive("", version: "1.0") == false)
        func coding(_ value: String) -> String {
            switch head("Transfer-Encoding: \(value)") {
            case .complete(let h, _): return h.chunked ? "chunked" : "plain"
            case .invalid(let status, _): return "\(status)"
            case .incomplete: return "incomplete"
            }
        }
        #expect(coding("chunked") == "chunked" && coding("Chunked") == "chunked" && coding(" chunked ") == "chunked" && coding(" chunked ,") == "400")
        // One chunked and nothing else: another coding is not understood (501), chunked twice or
        // no coding at all is malformed (400).
        #expect(coding("gzip, chunked") == "501" && coding("identity, chunked") == "501")
        #expect(coding("chunked, gzip") == "501" && coding("chunked, chunked") == "400" && coding("gzip") == "501")
        #expect(coding("") == "400" && coding(" , ") == "400" && coding("chunkedx") == "501")
        #expect(coding("chunked\r\nTransfer-Encoding: chunked") == "400" && coding("chunked\r\nTransfer-Encoding: gzip") == "501")
    }

    @Test("request heads: fields, framing and keep-alive")
    func parseHead() throws {
        let text = "POST /a?b=1 HTTP/1.1\r\nHost: example.com\r\ncontent-LENGTH:  12 \r\nConnection: Keep-Alive, close\nX-Empty:\r\n\r\nbody"
        let bytes = Array(text.utf8)
        let parse = bytes.withUnsafeBytes { RequestHead.parse($0, limit: 1024) }
        guard case .complete(var head, let length) = parse else { Issue.record("\(parse)"); return }
        #expect(head.method == "POST" && head.target == "/a?b=1" && head.minorVersion == 1)
        #expect(head.contentLength == 12 && !head.chunked && !head.keepAlive)
        let headers = bytes.withUnsafeBytes { head.headers(in: $0) }
        #expect(headers["host"] == "example.com" && head.host == "example.com" && headers["x-empty"] == "")
        #expect(headers.map(\.name) == ["Host", "content-LENGTH", "Connection", "X-Empty"])
        // Kept for a body that arrives later, the lines no longer need the buffer.
        bytes.withUnsafeBytes { head.keepLines(from: $0) }
        #expect(head.headers(in: UnsafeRawBufferPointer(start: nil, count: 0)) == headers)
        #expect(length == text.utf8.count - 4)
        // Every prefix short of the blank line is incomplete, never an error.
        for cut in 0..<(length - 1) {
            let partial = Array(text.utf8.prefix(cut)).withUnsafeBytes { RequestHead.parse($0, limit: 1024) }
            if case .incomplete = partial {} else { Issue.record("prefix of \(cut) bytes: \(partial)") }
        }
        // Names and methods: every RFC 9110 token character is accepted, anything else refused.
        func verdict(_ head: String) -> Int {
            switch Array(head.utf8).withUnsafeBytes({ RequestHead.parse($0, limit: 1024) }) {
            case .complete: return 200
            case .invalid(let status, _): return status
            case .incomplete: return 0
            }
        }
        #expect(verdict("GET / HTTP/1.1\r\nHost: x\r\nAz09!#$%&'*+-.^_`|~: v\r\n\r\n") == 200)
        #expect(verdict("M-SEARCH / HTTP/1.0\r\n\r\n") == 200 && verdict("OPTIONS * HTTP/1.0\r\n\r\n") == 200)
        #expect(verdict("M-SEARCH * HTTP/1.0\r\n\r\n") == 400)
        for bad in ["(", ")", ",", "/", ";", "<", "=", ">", "?", "@", "[", "\\", "]", "{", "}", "\"", "\u{7F}", "é", "\u{01}"] {
            #expect(verdict("GET / HTTP/1.1\r\nX\(bad)Y: v\r\n\r\n") == 400, "header name with \(bad)")
            #expect(verdict("G\(bad)T / HTTP/1.1\r\n\r\n") == 400, "method with \(bad)")
        }
        // Common names spelled exactly skip the byte check; a name of the same length with one
        // byte off, a space before the colon or no colon at all is still refused.
        for bad in ["Ho@t: v", "Host : v", "Host", "Content-Type", "Content(Type: v", "Cookie\u{01}: v", ": v"] {
            #expect(verdict("GET / HTTP/1.1\r\n\(bad)\r\n\r\n") == 400, "\(bad)")
        }
        let literalBytes = Array("GET / HTTP/1.1\r\nHost: a:8\r\nAuthorization: x\r\nhost-name: c\r\n\r\n".utf8)
        guard case .complete(let literal, _) = literalBytes.withUnsafeBytes({ RequestHead.parse($0, limit: 1024) }) else {
            Issue.record("literal names"); return
        }
        let literalHeaders = literalBytes.withUnsafeBytes { literal.headers(in: $0) }
        #expect(literal.host == "a:8" && literalHeaders["authorization"] == "x")
        #expect(literalHeaders.fields.map(\.name) == ["Host", "Authorization", "host-name"])
        // Names are matched eight bytes at a time, case folded: look-alikes are other fields.
        func declaredLength(_ field: String) -> Int? {
            guard case .complete(let head, _) = Array("POST / HTTP/1.1\r\nHost: x\r\n\(field)\r\n\r\n".utf8)
                .withUnsafeBytes({ RequestHead.parse($0, limit: 1024) }) else { return -1 }
            return head.contentLength
        }
        #expect(declaredLength("CONTENT-LENGTH: 5") == 5 && declaredLength("Content-length: 5") == 5)
        #expect(declaredLength("Content_Length: 5") == nil && declaredLength("Content-Lengtx: 5") == nil && declaredLength("Dontent-Length: 5") == nil)
        #expect(verdict("POST / HTTP/1.1\r\nHost: x\r\nTRANSFER-ENCODING: chunked\r\n\r\n") == 200)
        // Values are checked for CR and NUL eight bytes at a time, then byte by byte.
        for at in [0, 3, 7, 8, 9, 15, 16, 20] {
            let value = String(repeating: "v", count: at) + "\r" + "tail-of-the-value"
            #expect(verdict("GET / HTTP/1.1\r\nX: \(value)\r\n\r\n") == 400, "CR at \(at)")
            #expect(verdict("GET / HTTP/1.1\r\nX: \(value.replacingOccurrences(of: "\r", with: "\u{0}"))\r\n\r\n") == 400, "NUL at \(at)")
            #expect(verdict("GET / HTTP/1.1\r\nHost: x\r\nX: \(value.replacingOccurrences(of: "\r", with: "\t"))\r\n\r\n") == 200, "tab at \(at)")
        }
        #expect(verdict("GET / HTTP/2.0\r\nHost: x\r\n\r\n") == 505 && verdict("GET / HTTP/1.2\r\nHost: x\r\n\r\n") == 200)
        #expect(verdict("GET / HTTP/1.x\r\n\r\n") == 400)
    }

    @Test("response heads: each carries its own fields, whichever list the loop wrote before")
    func responseHeads() {
        let lines = StatusLines(), fields = FieldBytes()
        let clock = HTTPDate()
        func head(_ headers: HTTPHeaders, status: Int = 200) -> String {
            var out: [UInt8] = []
            ResponseHead.append(status: status, headers: headers, framing: .length(2), connection: .keepAlive11,
                                date: clock.now(), lines: lines, fields: fields, into: &out)
            return String(decoding: out, as: UTF8.self)
        }
        let json = HTTPHeaders.json
        var custom = HTTPHeaders([("X-A", "1"), ("Content-Length", "99"), ("Date", "Mon, 01 Jan 2024 00:00:00 GMT")])
        #expect(head(json) == "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n"
                + String(decoding: clock.now(), as: UTF8.self) + "\r\n")
        // Another list: its fields, the script's Content-Length dropped, its own Date kept.
        #expect(head(custom, status: 404) == "HTTP/1.1 404 Not Found\r\nX-A: 1\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\nContent-Length: 2\r\n\r\n")
        let copy = json
        #expect(head(copy).contains("Content-Type: application/json; charset=utf-8\r\n") && !head(copy).contains("X-A"))
        // A changed copy of a list written before is a list of its own.
        custom["X-A"] = "2"
        #expect(head(custom).contains("X-A: 2\r\n") && !head(custom).contains("X-A: 1"))
        #expect(head(HTTPHeaders()) == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + String(decoding: clock.now(), as: UTF8.self) + "\r\n")
    }

    @Test("the head parser on 3,000 mangled requests: a verdict for each, consistent with every prefix")
    func parseFuzz() {
        var random = SystemRandomNumberGenerator()
        let seeds = ["GET /a?b=1 HTTP/1.1\r\nHost: x\r\nX-A:  v \r\n\r\n",
                     "POST /p HTTP/1.0\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n",
                     "PUT /c HTTP/1.1\r\nHost: y\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"].map { Array($0.utf8) }
        for _ in 0..<3000 {
            var bytes = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 0...3, using: &random) where !bytes.isEmpty {
                let i = Int.random(in: 0..<bytes.count, using: &random)
                let pick = [UInt8(ascii: " "), UInt8(ascii: ":"), 0x0D, 0x0A, 0, 0x7F, UInt8(ascii: "a"), 0xFF].randomElement(using: &random)!
                if Bool.random(using: &random) { bytes[i] = pick } else { bytes.insert(pick, at: i) }
            }
            let whole = bytes.withUnsafeBytes { RequestHead.parse($0, limit: 1024) }
            guard case .complete(_, let length) = whole else { continue }
            #expect(length <= bytes.count)
            // A shorter prefix never yields a different head length.
            let cut = Int.random(in: 0..<length, using: &random)
            switch Array(bytes.prefix(cut)).withUnsafeBytes({ RequestHead.parse($0, limit: 1024) }) {
            case .complete(_, let other): #expect(other == length, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            case .incomplete, .invalid: break
            }
        }
    }

    @Test("chunked bodies decode the same in every split")
    func chunkedSplits() {
        let wire = Array("3\r\nabc\r\n10;name=v\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\nNEXT".utf8)
        for cut in 1..<(wire.count - 4) {
            var decoder = ChunkedBody(limit: 100)
            var body: [UInt8] = []
            let first = wire[..<cut].withUnsafeBytes { decoder.feed($0, into: &body) }
            var result = first
            if first == .needMore { result = wire[cut...].withUnsafeBytes { decoder.feed($0, into: &body) } }
            let consumed: Int
            if case .done(let n) = result { consumed = first == .needMore ? cut + n : n } else { consumed = -1 }
            #expect(String(decoding: body, as: UTF8.self) == "abc0123456789abcdef" && consumed == wire.count - 4, "cut \(cut): \(result)")
        }
        var small = ChunkedBody(limit: 10)
        var body: [UInt8] = []
        #expect(Array("20\r\n".utf8).withUnsafeBytes { small.feed($0, into: &body) } == .tooLarge)
        var bad = ChunkedBody(limit: 10)
        #expect(Array("zz\r\n".utf8).withUnsafeBytes { bad.feed($0, into: &body) } == .invalid("missing chunk size"))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockServer
import Testing

@Suite("Bytes through both doors")
struct BytesParityTests {
    static let script = #"""
    mock.get("/p/:id", function(req) return { id = req.params.id, path = req.path } end)
    mock.get("/q", function(req) return { first = req.query.a, all = req.query_all.a, b = req.query.b } end)
    mock.post("/len", function(req) return { n = #req.body, first = string.byte(req.body, 1), last = string.byte(req.body, #req.body) } end)
    mock.get("/text", { text = "héllo ✓ 🎉", escaped = "a\"b\\c\n\t" })
    mock.get("/nocontent", mock.status(204))
    """#

    @Test("percent-encoded captures, repeated query keys, Unicode and escapes, 204", arguments: Door.allCases)
    func encodings(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            #expect(try await served.fetch("/p/a%20b").body == #"{"id":"a b","path":"/p/a%20b"}"#)
            #expect(try await served.fetch("/p/caf%C3%A9").body == #"{"id":"café","path":"/p/caf%C3%A9"}"#)
            #expect(try await served.fetch("/q?a=1&a=2&b=x%26y").body == #"{"all":["1","2"],"b":"x&y","first":"1"}"#)
            #expect(try await served.fetch("/text").body == #"{"escaped":"a\"b\\c\n\t","text":"héllo ✓ 🎉"}"#)
            let empty = try await served.fetch("/nocontent")
            #expect(empty.status == 204 && empty.body.isEmpty)
        }
    }

    @Test("a 300 KB binary body reaches the handler byte for byte", arguments: Door.allCases)
    func binaryBody(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            var bytes = [UInt8](repeating: 0xFF, count: 300_000)
            bytes[0] = 0
            bytes[bytes.count - 1] = 0x80
            var request = URLRequest(url: URL(string: served.baseURL + "/len")!, timeoutInterval: 10)
            request.httpMethod = "POST"
            request.httpBody = Data(bytes)
            let (data, response) = try await served.session.data(for: request)
            #expect((response as! HTTPURLResponse).statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == #"{"first":0,"last":128,"n":300000}"#)
        }
    }
}


@Suite("Edges through both doors")
struct EdgeParityTests {
    static let script = #"""
    mock.get("/q", function(req) return { q = req.query.q } end)
    mock.get("/p/:id", function(req) return { id = req.params.id } end)
    mock.get("/big", function() return string.rep("x", 1000000) end)
    mock.route { method = "OPTIONS", path = "/opt", respond = mock.status(204) }
    mock.any("/e", function(req) return { target = req.url:gsub("^https?://[^/]+", ""), method = req.method } end)
    mock.get("/s/:code", function(req) return mock.text("x", { status = tonumber(req.params.code) }) end)
    mock.get("/dated", mock.text("x", { headers = { Date = "Sun, 06 Nov 1994 08:49:37 GMT" } }))
    """#

    @Test("a Date field from the engine's clock (pinned here), unless the rule gave one", arguments: Door.allCases)
    func date(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            // Served pins the engine's clock at 1,700,000,000 s.
            let plain = try await served.fetch("/s/200"), dated = try await served.fetch("/dated")
            #expect(plain.headers["date"] == "Tue, 14 Nov 2023 22:13:20 GMT")
            #expect(dated.headers["date"] == "Sun, 06 Nov 1994 08:49:37 GMT")
        }
        #expect(HTTPDateFormat.imfFixdate(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDateFormat.imfFixdate(1_767_225_600) == "Thu, 01 Jan 2026 00:00:00 GMT")
    }

    @Test("any status goes through; 204 and 304 go without the body a rule gave them", arguments: Door.allCases)
    func statuses(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            for code in [205, 299, 418, 599] {
                let reply = try await served.fetch("/s/\(code)")
                #expect(reply.status == code && reply.body == "x" && reply.headers["content-length"] == "1")
            }
            for code in [204, 304] {
                let reply = try await served.fetch("/s/\(code)")
                #expect(reply.status == code && reply.body.isEmpty && reply.headers["content-length"] == nil)
            }
        }
    }

    @Test("'+' and %2B in a query, %2F in a capture, a trailing slash, a fragment, methods, a 1 MB body", arguments: Door.allCases)
    func edges(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            #expect(try await served.fetch("/q?q=a+b%2Bc").body == #"{"q":"a b+c"}"#)
            #expect(try await served.fetch("/p/a%2Fb").body == #"{"id":"a/b"}"#)
            #expect(try await served.fetch("/p/7/").body == #"{"id":"7"}"#)
            #expect(try await served.fetch("/opt", method: "OPTIONS").status == 204)
            // The fragment stays with the client; a lowercase method goes out uppercased.
            #expect(try await served.fetch("/e?a=1#frag").body == #"{"method":"GET","target":"/e?a=1"}"#)
            #expect(try await served.fetch("/e", method: "get").body == #"{"method":"GET","target":"/e"}"#)
            #expect(try await served.fetch("/e", method: "PATCH").body == #"{"method":"PATCH","target":"/e"}"#)
            let big = try await served.fetch("/big")
            #expect(big.status == 200 && big.body.utf8.count == 1_000_000 && big.body.allSatisfy { $0 == "x" })
        }
    }

    @Test("Swift stubs answer through the socket too", arguments: Door.allCases)
    func swiftStubs(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            served.moonmock.stub(.http(.get, uri: "/avatar/{id}"), .http(status: 404, body: Data("no avatar".utf8)))
            served.moonmock.stub(.path("/offline"), .failure(URLError(.cannotFindHost)))
            let avatar = try await served.fetch("/avatar/3")
            #expect(avatar.status == 404 && avatar.body == "no avatar")
            // A Swift error cannot travel over the wire: the server resets the connection.
            do {
                _ = try await served.fetch("/offline")
                Issue.record("expected the request to fail")
            } catch let error as URLError {
                #expect(error.code == (door == .inProcess ? .cannotFindHost : .networkConnectionLost))
            }
        }
    }
}

@Suite("Cookies through both doors")
struct CookieParityTests {
    static let script = #"""
    mock.post("/login", mock.json({ ok = true }, { headers = { ["Set-Cookie"] = "sid=abc123; Path=/" } }))
    mock.get("/prefs", mock.json({ ok = true }, { headers = { ["Set-Cookie"] = "theme=dark; Path=/; Expires=Wed, 21 Oct 2099 07:28:00 GMT" } }))
    mock.get("/me", function(req) return { cookie = req.headers["cookie"] or "none" } end)
    mock.post("/sign-in", mock.text("", { status = 303, headers = { Location = "/me", ["Set-Cookie"] = "sid=r1; Path=/" } }))
    """#

    @Test("a cookie a response sets goes with the session's next requests", arguments: Door.allCases)
    func roundTrip(door: Door) async throws {
        try await Served.with(Self.script, door: door, { _ in }) { served, session in
            #expect(try await Served.fetch(session, served.baseURL + "/me").body == #"{"cookie":"none"}"#)
            _ = try await Served.fetch(session, served.baseURL + "/login", method: "POST", body: "user=a")
            #expect(try await Served.fetch(session, served.baseURL + "/me").body == #"{"cookie":"sid=abc123"}"#)
            // A second cookie, with an Expires date (a comma inside the field), joins the first.
            _ = try await Served.fetch(session, served.baseURL + "/prefs")
            let both = try await Served.fetch(session, served.baseURL + "/me").body
            #expect(both.contains("sid=abc123") && both.contains("theme=dark"))
            // Another session has its own storage.
            let other = served.makeSession { _ in }
            defer { other.finishTasksAndInvalidate() }
            #expect(try await Served.fetch(other, served.baseURL + "/me").body == #"{"cookie":"none"}"#)
        }
    }

    @Test("a cookie set by a redirect goes with the request it leads to", arguments: Door.allCases)
    func redirectCookie(door: Door) async throws {
        try await Served.with(Self.script, door: door, { _ in }) { served, session in
            let reply = try await Served.fetch(session, served.baseURL + "/sign-in", method: "POST", body: "user=a")
            #expect(reply.status == 200 && reply.body == #"{"cookie":"sid=r1"}"#)
            #expect(reply.url == served.baseURL + "/me")
        }
    }

    @Test("a session that does not set cookies keeps none", arguments: Door.allCases)
    func notSet(door: Door) async throws {
        try await Served.with(Self.script, door: door, { $0.httpShouldSetCookies = false }) { served, session in
            _ = try await Served.fetch(session, served.baseURL + "/login", method: "POST", body: "user=a")
            #expect(try await Served.fetch(session, served.baseURL + "/me").body == #"{"cookie":"none"}"#)
        }
    }
}

@Suite("Request headers through both doors")
struct HeaderParityTests {
    static let script = #"""
    mock.route { path = "/h", respond = function(req)
      local h = req.headers
      return { auth = h["authorization"] or "none", app = h["x-app"] or "none", accept = h["accept"] or "none",
               host = h["host"] and "yes" or "none", length = h["content-length"] or "none", type = h["content-type"] or "none" }
    end }
    mock.route { method = "GET", path = "/private", headers = { authorization = "Bearer s" }, respond = { ok = true } }
    mock.put("/stream", function(req)
      return { body = req.body, length = req.headers["content-length"] or "none", chunked = req.headers["transfer-encoding"] or "none" }
    end)
    """#

    @Test("the session's headers, and those URLSession adds, reach the handler", arguments: Door.allCases)
    func sessionHeaders(door: Door) async throws {
        let addsHeaders: (URLSessionConfiguration) -> Void = { $0.httpAdditionalHeaders = ["Authorization": "Bearer s", "X-App": "1"] }
        try await Served.with(Self.script, door: door, addsHeaders) { served, session in
            let get = try await Served.fetch(session, served.baseURL + "/h")
            #expect(get.body == #"{"accept":"*/*","app":"1","auth":"Bearer s","host":"yes","length":"none","type":"none"}"#)
            // The request's own field wins over the session's.
            let own = try await Served.fetch(session, served.baseURL + "/h", headers: ["X-App": "2"])
            #expect(own.body.contains(#""app":"2""#))
            // A POST body without a Content-Type is sent as a form, with its length.
            let post = try await Served.fetch(session, served.baseURL + "/h", method: "POST", body: "a=1")
            #expect(post.body == #"{"accept":"*/*","app":"1","auth":"Bearer s","host":"yes","length":"3","type":"application/x-www-form-urlencoded"}"#)
            // A rule that needs the session's Authorization matches through either door.
            #expect(try await Served.fetch(session, served.baseURL + "/private").status == 200)
        }
    }

    @Test("a body from a stream: its bytes, and the framing URLSession sends it with", arguments: Door.allCases)
    func streamedBody(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            var request = URLRequest(url: URL(string: served.baseURL + "/stream")!, timeoutInterval: 10)
            request.httpMethod = "PUT"
            request.httpBodyStream = InputStream(data: Data("streamed body".utf8))
            let (data, _) = try await served.session.data(for: request)
            #expect(String(decoding: data, as: UTF8.self) == #"{"body":"streamed body","chunked":"chunked","length":"none"}"#)
        }
    }
}

/// The same words under each content coding URLSession's libcurl takes off a body on Linux (the
/// bytes made with Python's gzip and zlib, the zstd tool and libbrotlienc).
let encodedScript = #"""
local gzipped = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x2b\x2e\x2c\x4d\x4d\xad\x4a\x4d\x51\x28\xcf\x2f\x4a\x29\xd6\x51\x28\x46\xe1\x03\x00\x94\x83\x94\x9c\x1e\x00\x00\x00"
local function encoded(body, coding) return mock.text(body, { headers = { ["Content-Encoding"] = coding } }) end
mock.get("/gzip", encoded(gzipped, "gzip"))
mock.get("/x-gzip", encoded(gzipped, "X-Gzip"))
mock.get("/listed", encoded(gzipped, "identity, gzip"))
mock.get("/twice", encoded("\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x93\xef\xe6\x60\x00\x01\x26\x66\x6d\xcd\xf3\x3e\x7e\xa1\x1a\x1e\x3e\xe7\xfc\x7c\x2f\x06\x6a\x38\x3e\x62\x64\x68\x9c\xf0\xb2\x55\x0a\x28\x09\x00\x66\x42\x4a\x1d\x25\x00\x00\x00", "gzip, gzip"))
mock.get("/deflate", encoded("\x78\x9c\x4b\x49\x4d\xcb\x49\x2c\x49\x4d\x51\x28\xcf\x2f\x4a\x29\xd6\x51\x48\x41\xe1\x03\x00\xaf\x8c\x0b\x5d", "deflate"))
mock.get("/raw-deflate", encoded("\x2b\x4a\x2c\x57\x28\xcf\x2f\x4a\x29\xd6\x51\x28\x82\x31\x01", "deflate"))
mock.get("/br", encoded("\x1b\x19\x00\x00\xc4\x71\x6c\xdd\xfc\xee\xea\x45\x44\xaa\x59\xa2\xa9\xe7\x52\xeb\x63\xb4\x08", "br"))
mock.get("/zstd", encoded("\x28\xb5\x2f\xfd\x04\x58\xb5\x00\x00\x80\x73\x71\x75\x65\x65\x7a\x65\x64\x20\x77\x6f\x72\x64\x73\x2c\x20\x01\x00\x46\x9e\x4b\x09\xa5\x86\xb5", "zstd"))
mock.get("/cut", encoded(gzipped:sub(1, 20), "gzip"))
mock.get("/garbage", encoded("not gzip at all", "gzip"))
mock.get("/unknown", encoded("abc", "compress"))
"""#

@Suite("Encoded bodies through both doors")
struct EncodedBodyTests {
    @Test("a body's content codings are undone, and its headers kept as the rule wrote them", arguments: Door.allCases)
    func decoded(door: Door) async throws {
        try await Served.serving(encodedScript, door: door) { served in
            let expected = ["/gzip": "squeezed words, squeezed words", "/x-gzip": "squeezed words, squeezed words",
                            "/listed": "squeezed words, squeezed words", "/twice": "twice packed, twice packed",
                            "/deflate": "deflated words, deflated words", "/raw-deflate": "raw words, raw words",
                            "/br": "brotli words, brotli words", "/zstd": "squeezed words, squeezed words",
                            // Cut short, a body gives what decoded (libcurl does not fail the task).
                            "/cut": "squeezed "]
            for (path, text) in expected.sorted(by: { $0.key < $1.key }) {
                let reply = try await served.fetch(path)
                #expect(reply.status == 200 && reply.body == text, "\(path)")
                #expect(reply.headers["content-encoding"] != nil, "\(path): \(reply.headers)")
            }
            let gzip = try await served.fetch("/gzip")
            #expect(gzip.headers["content-length"] == "39")   // the encoded length
        }
    }

    @Test("a body not in its coding, or in a coding URLSession does not know, fails the task", arguments: Door.allCases)
    func undecodable(door: Door) async throws {
        try await Served.serving(encodedScript, door: door) { served in
            for path in ["/garbage", "/unknown"] {
                await #expect(throws: (any Error).self, "\(path)") { _ = try await served.fetch(path) }
            }
            let next = try await served.fetch("/gzip")
            #expect(next.status == 200)   // and the next request is answered
        }
    }
}

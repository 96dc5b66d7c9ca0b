import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
import MoonmockScript
import MoonmockServer
import Testing

/// A listener that accepts one connection, reads its request, then waits for the client to
/// close it: `closed` tells whether (and how soon) it did. An upstream that never answers.
final class SilentUpstream: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    let accepted = DispatchSemaphore(value: 0)
    let closed = DispatchSemaphore(value: 0)

    init() {
        let (listener, port) = loopbackListener()
        fd = listener
        self.port = port
        Thread { [accepted, closed] in
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            accepted.signal()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(client, &buffer, buffer.count) > 0 {}
            closed.signal()
            close(client)
        }.start()
    }

    deinit { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}

/// A listener that accepts one connection, reads its request, and answers `body` only when the
/// test signals `release`: a handler fetching from it waits for as long as the test wants.
final class HeldUpstream: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    let accepted = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)

    init(body: String) {
        let (listener, port) = loopbackListener()
        fd = listener
        self.port = port
        Thread { [accepted, release] in
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(client, &buffer, buffer.count)
            accepted.signal()
            release.wait()
            let answer = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            _ = answer.withCString { write(client, $0, strlen($0)) }
            close(client)
        }.start()
    }

    deinit { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}

@Suite("Handlers that wait, on the server")
struct WaitingTests {
    @Test("mock.fetch: JSON, text and binary answers, headers, a POST with json, an unreachable host and a timeout")
    func fetch() async throws {
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        let base = "http://127.0.0.1:\(upstream.port)"
        let server = try startServer("""
        mock.get("/json", function(req)
          local res = mock.fetch("\(base)/echo/x?q=7", { method = "POST", json = { a = 1 }, headers = { ["X-Added"] = "h" } })
          return { status = res.status, q = res.json.q, method = res.json.method, body = res.json.body, added = res.json.added,
                   type = res.headers["content-type"] }
        end)
        mock.get("/text", function(req)
          local res = mock.fetch("\(base)/text")
          return mock.text(res.body .. "|" .. res.headers["x-up"], { status = res.status })
        end)
        mock.get("/bin", function(req)
          local res = mock.fetch("\(base)/bin")
          return { n = #res.body, last = res.body:byte(4), json = res.json == nil }
        end)
        mock.get("/down", function(req)
          local res, err = mock.fetch("http://127.0.0.1:1/", { timeout = 2000 })
          return { res = res == nil, err = err }
        end)
        mock.get("/slow", function(req)
          local res, err = mock.fetch("\(base)/slow", { timeout = 300 })
          return { res = res == nil, err = err }
        end)
        """)
        defer { server.stop() }
        let json = try JSONValue(parsing: Array(try await server.fetch("/json").body.utf8))
        #expect(json["status"] == .integer(200) && json["q"] == .string("7") && json["method"] == .string("POST"))
        #expect(json["body"] == .string(#"{"a":1}"#) && json["added"] == .string("h"))
        #expect(json["type"]?.stringValue?.hasPrefix("application/json") == true)
        let text = try await server.fetch("/text")
        #expect(text.body == "plain text|yes" && text.status == 200)
        let bin = try JSONValue(parsing: Array(try await server.fetch("/bin").body.utf8))
        #expect(bin["n"] == .integer(4) && bin["last"] == .integer(255) && bin["json"] == .bool(true))
        let down = try JSONValue(parsing: Array(try await server.fetch("/down").body.utf8))
        #expect(down["res"] == .bool(true) && down["err"]?.stringValue?.contains("onnect") == true)
        let slow = try JSONValue(parsing: Array(try await server.fetch("/slow").body.utf8))
        #expect(slow["res"] == .bool(true) && slow["err"]?.stringValue?.lowercased().contains("time") == true)

        // The journal has each outbound call, with its status or error.
        let entries = server.engine.journal.entries()
        let calls = entries.first { $0.path == "/json" }?.outbound ?? []
        #expect(calls.count == 1 && calls.first?.status == 200 && calls.first?.method == "POST" && calls.first?.kind == "fetch")
        #expect(entries.first { $0.path == "/down" }?.outbound.first?.error != nil)
        // The upstream's 2 s were not waited out: the call ended at its 300 ms timeout.
        let slowCall = entries.first { $0.path == "/slow" }?.outbound.first
        #expect(slowCall?.status == nil && (slowCall?.durationMilliseconds ?? 9_999) < 1_500 * timeScale)
    }

    @Test("mock.fetch over TLS: a local CA given with ca = trusts it; without it the check fails; insecure skips it")
    func tls() async throws {
        let upstream = try startServer(upstreamScript, scheme: .https)
        defer { upstream.stop() }
        let base = "https://127.0.0.1:\(upstream.port)"
        let ca = testCertificate.authorityFile.path
        let server = try startServer("""
        local function try(opts)
          local res, err = mock.fetch("\(base)/text", opts)
          return res and res.body or ("error: " .. err)
        end
        mock.get("/ca", function() return try({ ca = "\(ca)" }) end)
        mock.get("/plain", function() return try({}) end)
        mock.get("/insecure", function() return try({ insecure = true }) end)
        """)
        defer { server.stop() }
        #expect(try await server.fetch("/ca").body == "plain text")
        let plain = try await server.fetch("/plain").body
        #expect(plain.hasPrefix("error: ") && plain.lowercased().contains("certificate"))
        #expect(try await server.fetch("/insecure").body == "plain text")
    }

    @Test("mock.proxy with a transform edits the upstream's status, fields and JSON; an upstream that is away is a 502")
    func transform() async throws {
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        let server = try startServer("""
        mock.any("/echo/*rest", mock.proxy("http://127.0.0.1:\(upstream.port)", { transform = function(res, req)
          res.status = 201
          res.headers["X-Patched"] = req.params.rest
          res.json.patched = true
          return res
        end }))
        mock.get("/text", mock.proxy("http://127.0.0.1:\(upstream.port)", { transform = function(res)
          res.body = res.body:upper()
        end }))
        mock.get("/away", mock.proxy("http://127.0.0.1:1", { transform = function(res) return res end }))
        """)
        defer { server.stop() }
        let echo = try await server.fetch("/echo/a/b?q=2", method: "PUT", body: "hi")
        #expect(echo.status == 201 && echo.response.value(forHTTPHeaderField: "X-Patched") == "a/b")
        let json = try JSONValue(parsing: Array(echo.body.utf8))
        #expect(json["patched"] == .bool(true) && json["q"] == .string("2") && json["method"] == .string("PUT") && json["body"] == .string("hi"))
        let text = try await server.fetch("/text")
        #expect(text.body == "PLAIN TEXT" && text.response.value(forHTTPHeaderField: "X-Up") == "yes")
        let away = try await server.fetch("/away")
        #expect(away.status == 502 && away.body.contains("did not answer"))
        #expect(server.engine.journal.entries().first { $0.path == "/text" }?.outbound.first?.kind == "proxy")
    }

    @Test("--handler-timeout: a handler still waiting gets a 504 naming what it waited for")
    func handlerTimeout() async throws {
        let server = try startServer(#"mock.get("/long", function() mock.sleep(5000); return "late" end)"#)
        defer { server.stop() }
        server.engine.handlerTimeoutMilliseconds.store(300, ordering: .relaxed)
        // A raw client: URLSession's few connections per host are shared by the tests that run at once.
        // Timed on the client's own thread: the test's task may wait for the busy cooperative pool.
        let (answer, took) = await onThread { () -> (RawHTTP.Result, Double) in
            let started = Date()
            let answer = RawHTTP.exchange(server, "GET /long HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return (answer, Date().timeIntervalSince(started))
        }
        #expect(answer.text.hasPrefix("HTTP/1.1 504") && answer.text.contains("mock.sleep(5000 ms)") && answer.text.contains("--handler-timeout (300 ms)"))
        #expect(took < 3 * timeScale, "took \(took) s")
        #expect(server.engine.journal.entries().last?.status == 504)
    }

    @Test("a client that leaves mid-fetch cancels the handler's call (the upstream sees it close); the server serves on")
    func clientLeaves() async throws {
        let upstream = SilentUpstream()
        let server = try startServer("""
        mock.get("/hang", function() local res, err = mock.fetch("http://127.0.0.1:\(upstream.port)/", { timeout = 20000 }); return "never" end)
        mock.get("/ok", "ok")
        """)
        defer { server.stop() }
        let fd = RawHTTP.connect(server.port)
        #expect(fd >= 0)
        _ = "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n".withCString { write(fd, $0, strlen($0)) }
        #expect(await onThread { upstream.accepted.wait(timeout: .now() + 5) == .success })
        close(fd)
        #expect(await onThread { upstream.closed.wait(timeout: .now() + 5 * timeScale) == .success })
        #expect(try await server.fetch("/ok").body == "ok")
        try await Task.sleep(for: .milliseconds(100))
        let entry = server.engine.journal.entries().first { $0.path == "/hang" }
        #expect(entry?.error?.contains("client left") == true)
    }

    @Test("a reload while handlers wait: they finish on their generation, new requests get the new one")
    func reloadWhileWaiting() async throws {
        let upstream = HeldUpstream(body: "late")
        let server = try startServer("""
        local v = "v1"
        mock.get("/v", function() local r = mock.fetch("http://127.0.0.1:\(upstream.port)/", { timeout = 20000 }); return v .. ":" .. r.body end)
        """)
        defer { server.stop() }
        // A raw client on a thread started now; the handler waits for the held upstream.
        let answer = Locked("")
        let answered = DispatchSemaphore(value: 0)
        Thread {
            answer.withLock { $0 = RawHTTP.exchange(server, "GET /v HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout: 30).text }
            answered.signal()
        }.start()
        #expect(await onThread { upstream.accepted.wait(timeout: .now() + 20) } == .success)
        try server.engine.loadScript(source: #"local v = "v2"; mock.get("/v", function() return v end)"#)
        #expect(try await server.fetch("/v").body == "v2")
        upstream.release.signal()
        #expect(await onThread { answered.wait(timeout: .now() + 20) } == .success)
        #expect(answer.withLock { $0 }.hasSuffix("\r\n\r\nv1:late"))
    }

    @Test("a stream generator fetches between its events, in its first stretch and later ones; mock.sleep in it paces the stream")
    func generatorWaits() async throws {
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        let server = try startServer("""
        mock.get("/feed", mock.sse(function(req, stream)
          local first = mock.fetch("http://127.0.0.1:\(upstream.port)/text")
          stream:send({ data = first.body })
          mock.sleep(50)
          for i = 1, 2 do
            local res = mock.fetch("http://127.0.0.1:\(upstream.port)/echo/" .. i)
            stream:send({ data = res.json.path })
          end
        end))
        """)
        defer { server.stop() }
        let answer = await onThread { RawHTTP.exchange(server, "GET /feed HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(answer.text.hasPrefix("HTTP/1.1 200"))
        let events = answer.text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n").filter { $0.hasPrefix("data: ") }
        #expect(events == ["data: plain text", "data: /echo/1", "data: /echo/2"], "\(answer.text)")
    }

    @Test("a when condition waits (mock.fetch, mock.sleep): it decides after its wait; a false one falls through to the next rule")
    func conditionsWait() async throws {
        let upstream = try startServer(upstreamScript)
        defer { upstream.stop() }
        let server = try startServer("""
        mock.route { method = "GET", path = "/gate", respond = "open",
          when = function(req) local r = mock.fetch("http://127.0.0.1:\(upstream.port)/text"); return r ~= nil and r.body == "plain text" end }
        mock.route { method = "GET", path = "/shut", respond = "never", when = function(req) mock.sleep(20); return false end }
        mock.route { method = "GET", path = "/shut", respond = "twice", times = 2, when = function(req) mock.sleep(5); return true end }
        mock.get("/shut", "fell through")
        mock.route { method = "GET", path = "/closed", respond = "never", when = function(req) mock.sleep(5); return false end }
        """)
        defer { server.stop() }
        let gate = try await server.fetch("/gate")
        #expect(gate.status == 200 && gate.body == "open")
        #expect(try await server.fetch("/shut").body == "twice")
        #expect(try await server.fetch("/shut").body == "twice")
        #expect(try await server.fetch("/shut").body == "fell through")
        let entries = server.engine.journal.entries().filter { $0.path == "/shut" }
        #expect(entries.map { $0.ruleID ?? "-" } == ["GET /shut", "GET /shut", "GET /shut"] || entries.count == 3)
        #expect(server.engine.journal.entries().first { $0.path == "/gate" }?.status == 200)
        // Nothing answers: the near miss says the condition waits (it is not waited for to explain).
        let closed = try await server.fetch("/closed")
        #expect(closed.status == 404 && closed.body.contains("it waits") && !closed.body.contains("\\u0001"))
    }

    @Test("mock.sleep outside a handler, and a handler's own coroutine.yield, are errors that say where waiting works")
    func misuse() async throws {
        let server = try startServer("""
        mock.get("/co", function() local co = coroutine.wrap(function() mock.sleep(1) end); co(); return "x" end)
        mock.get("/yield", function() coroutine.yield(); return "x" end)
        mock.route { method = "GET", path = "/when", when = function() mock.sleep(1); return true end, respond = "x" }
        """)
        defer { server.stop() }
        let co = try await server.fetch("/co")
        #expect(co.status == 500 && co.body.contains("not inside a coroutine the handler made"))
        let yield = try await server.fetch("/yield")
        #expect(yield.status == 500 && yield.body.contains("yielded without waiting"))
        #expect(try await server.fetch("/when").body == "x")   // a condition may wait
        #expect(throws: (any Error).self) { try Engine().loadScript(source: "mock.sleep(10)") }
    }
}

import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
import MoonmockServer
import Testing

let serverScript = #"""
mock.get("/users/:id", function(req) return { id = tonumber(req.params.id), name = "User " .. req.params.id } end)
mock.graphql("GetUser", function(req) return { data = { user = { id = req.json.variables.id } } } end)
mock.post("/echo", function(req) return { body = req.body, len = #req.body, host = req.host, q = req.query.q } end)
mock.get("/flaky", function()
  local n = mock.state:incr("flaky", 1, 0)
  if n <= 2 then return mock.json({ attempt = n }, { status = 503 }) end
  return { ok = true, attempt = n }
end)
mock.get("/slow", mock.json({ ok = true }, { delay = 1000 }))
mock.get("/half", mock.json({ ok = true }, { delay = 400 }))
mock.get("/reset", mock.fault("connection_reset"))
mock.get("/empty", mock.fault("empty_response"))
mock.get("/chunk", mock.json({ items = { 1, 2, 3, 4, 5, 6, 7, 8 } }, { fault = "malformed_chunk" }))
mock.get("/hang", mock.fault("timeout"))
mock.get("/dribble", mock.text("0123456789", { fault = "dribble", bytes_per_second = 20 }))
mock.head("/head", mock.text("body not sent"))
"""#

@Suite("Socket server")
struct ServerTests {
    @Test("routes, GraphQL and request details over real HTTP", arguments: Scheme.allCases)
    func routing(scheme: Scheme) async throws {
        let dated = #"mock.get("/dated", mock.text("x", { headers = { Date = "Sun, 06 Nov 1994 08:49:37 GMT" } }))"#
        let server = try startServer(serverScript + dated, scheme: scheme)
        defer { server.stop() }
        let user = try await server.fetch("/users/7")
        #expect(user.status == 200 && user.body == #"{"id":7,"name":"User 7"}"#)
        #expect(user.response.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
        // Dated by the engine's clock, pinned by `startServer` at 1,700,000,000 s, on either layer;
        // a rule's own Date is the only one sent (URLSession would join two with a comma).
        #expect(user.response.value(forHTTPHeaderField: "Date") == "Tue, 14 Nov 2023 22:13:20 GMT")
        let ruleDated = try await server.fetch("/dated")
        #expect(ruleDated.response.value(forHTTPHeaderField: "Date") == "Sun, 06 Nov 1994 08:49:37 GMT")
        let gql = try await server.fetch("/graphql", method: "POST", body: #"{"operationName":"GetUser","variables":{"id":"5"}}"#)
        #expect(gql.body == #"{"data":{"user":{"id":"5"}}}"#)
        let echo = try await server.fetch("/echo?q=a%20b", method: "POST", body: "hello")
        #expect(echo.body == #"{"body":"hello","host":"127.0.0.1","len":5,"q":"a b"}"#)
    }

    @Test("state persists across requests")
    func state() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        var statuses: [Int] = []
        for _ in 0..<3 { statuses.append(try await server.fetch("/flaky").status) }
        #expect(statuses == [503, 503, 200])
    }

    @Test("an unmatched request gets the near-miss 404")
    func nearMiss() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let miss = try await server.fetch("/graphql", method: "POST", body: #"{"operationName":"GetViewer"}"#)
        #expect(miss.status == 404)
        let json = try JSONValue(parsing: Array(miss.body.utf8))
        #expect(json["closest"]?[0]?["summary"] == .string("method ok; path ok; json.operationName: expected GetUser, got GetViewer"))
    }

    @Test("200 parallel delayed requests complete together, about one delay later", arguments: Scheme.allCases)
    func parallelDelays(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        // Timed on the thread that waits: the test's own task may resume later on a busy machine.
        let (statuses, elapsed) = await onThread {
            let started = Date()
            let statuses = RawHTTP.parallel(server, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", count: 200)
            return (statuses, Date().timeIntervalSince(started))
        }
        #expect(statuses.count == 200)
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(elapsed >= 0.95 && elapsed < 3 * timeScale, "took \(elapsed) s")
    }

    @Test("connection_reset is a TCP reset", arguments: Scheme.allCases)
    func reset(scheme: Scheme) throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        let r = RawHTTP.exchange(server, "GET /reset HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(r.bytes.isEmpty)
        #expect(r.error == ECONNRESET)
    }

    @Test("empty_response closes without a byte", arguments: Scheme.allCases)
    func empty(scheme: Scheme) throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        let r = RawHTTP.exchange(server, "GET /empty HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(r.bytes.isEmpty && r.error == 0 && !r.timedOut)
    }

    @Test("malformed_chunk cuts a chunked body off without its last chunk", arguments: Scheme.allCases)
    func malformedChunk(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        let r = RawHTTP.exchange(server, "GET /chunk HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(r.text.hasPrefix("HTTP/1.1 200"))
        #expect(r.text.lowercased().contains("transfer-encoding: chunked"))
        #expect(!r.text.hasSuffix("0\r\n\r\n"))
        let curl = await curlExit(["-s", "-o", "/dev/null", "--cacert", testCertificate.authorityFile.path, server.baseURL + "/chunk"])
        #expect(curl != 0)
    }

    @Test("timeout holds the connection without an answer", arguments: Scheme.allCases)
    func hold(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        let r = await onThread { RawHTTP.exchange(server, "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n", timeout: 0.5) }
        #expect(r.bytes.isEmpty && r.timedOut)
    }

    @Test("dribble sends the body slowly", arguments: Scheme.allCases)
    func dribble(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme)
        defer { server.stop() }
        let started = Date()
        let r = await onThread { RawHTTP.exchange(server, "GET /dribble HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
        #expect(r.text.hasSuffix("\r\n\r\n0123456789"))
        #expect(Date().timeIntervalSince(started) >= 0.35)
    }

    @Test("oversized bodies get 413, malformed HTTP gets 400, HEAD gets no body", arguments: Scheme.allCases)
    func limits(scheme: Scheme) throws {
        let server = try startServer(serverScript, scheme: scheme) { $0.maxBodyBytes = 1024 }
        defer { server.stop() }
        let declared = RawHTTP.exchange(server, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n")
        #expect(declared.text.hasPrefix("HTTP/1.1 413"))
        let big = String(repeating: "x", count: 2000)
        let chunked = RawHTTP.exchange(server, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n7d0\r\n\(big)\r\n0\r\n\r\n")
        #expect(chunked.text.hasPrefix("HTTP/1.1 413"))
        let small = RawHTTP.exchange(server, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
        #expect(small.text.hasPrefix("HTTP/1.1 200"))
        let garbage = RawHTTP.exchange(server, "THIS IS NOT HTTP\r\n\r\n")
        #expect(garbage.text.hasPrefix("HTTP/1.1 400"))
        let head = RawHTTP.exchange(server, "HEAD /head HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(head.text.hasPrefix("HTTP/1.1 200") && !head.text.contains("body not sent"))
    }

    @Test("stop drains requests in flight, then refuses connections", arguments: Scheme.allCases)
    func gracefulStop(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme)
        let port = server.port
        // The held request first (it stays in flight), then /slow, which answers after 1 s: both are
        // in flight from the moment /slow arrives, however busy the machine.
        let held = Task { await onThread { RawHTTP.exchange(server, "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n", timeout: 5 * timeScale) } }
        let heldDeadline = Date().addingTimeInterval(5)
        while server.requestsInFlight < 1 && Date() < heldDeadline { try await Task.sleep(nanoseconds: 10_000_000) }
        let inFlight = Task { await onThread { RawHTTP.exchange(server, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") } }
        // Both requests reached the server (a loaded machine may take a while to send them).
        let deadline = Date().addingTimeInterval(5)
        while server.requestsInFlight < 2 && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.requestsInFlight == 2)
        let started = Date()
        server.stop(drainSeconds: 5)
        // It waited for /slow, not for the held connection.
        #expect(Date().timeIntervalSince(started) < 3 * timeScale)
        #expect(await inFlight.value.text.hasSuffix(#"{"ok":true}"#))
        #expect(await held.value.bytes.isEmpty)
        #expect(RawHTTP.connect(port) == -1)
    }

    @Test("connections are spread over the worker threads, and health reports each worker's count", arguments: Scheme.allCases)
    func spread(scheme: Scheme) async throws {
        let server = try startServer(serverScript, scheme: scheme) { $0.threads = 2 }
        defer { server.stop() }
        var connections: [RawConnection] = []
        for _ in 0..<24 {
            let connection = RawConnection(server)
            #expect(connection != nil)
            // The first bytes of a request: a connection is accepted once it has sent something
            // (deferred accept), and this one stays open waiting for the rest.
            connection?.send("GET")
            connection.map { connections.append($0) }
        }
        let deadline = Date().addingTimeInterval(5)
        while server.connectionsPerWorker.reduce(0, +) < 24 && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        let perWorker = server.connectionsPerWorker
        #expect(connections.count == 24)
        #expect(perWorker.count == 2)
        #expect(perWorker.reduce(0, +) == 24)
        // One shared socket let the first worker to wake accept the whole burst.
        #expect(perWorker.allSatisfy { $0 > 0 }, "\(perWorker)")
        let health = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/health").body.utf8))
        if case .array(let counts)? = health["connections_per_worker"] { #expect(counts.count == 2) } else {
            Issue.record("health has no connections_per_worker: \(health)")
        }
    }

    @Test("a second server cannot take the same port")
    func portInUse() throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        let error = #expect(throws: ServerError.self) { _ = try startServer(serverScript) { $0.port = server.port } }
        #expect(error?.isListenError == true)
    }
}

/// Runs curl (installed by scripts/install-deps) and returns its exit status.
func curlExit(_ arguments: [String]) async -> Int32 {
    // On a thread of its own: waiting for a process on the cooperative pool holds up other tests.
    await onThread {
        let process = Subprocess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["--max-time", "10"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

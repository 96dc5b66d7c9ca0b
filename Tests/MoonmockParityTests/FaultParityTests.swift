import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockServer
import Testing

/// Faults and timeouts as a `URLSession` client sees them, through sessions whose
/// `timeoutIntervalForRequest` is 1 s (a request without a timeout of its own gets the session's).
@Suite("Faults through both doors")
struct FaultParityTests {
    static let script = parityScript + #"""
    mock.get("/empty", mock.fault("empty_response"))
    mock.get("/chunk", mock.json({ items = { 1, 2, 3, 4, 5, 6, 7, 8 } }, { fault = "malformed_chunk" }))
    mock.get("/hang", mock.fault("timeout"))
    mock.get("/dribble", mock.text("0123456789", { fault = "dribble", bytes_per_second = 20 }))
    mock.head("/head", mock.text("body not sent"))
    mock.get("/late", mock.json({ ok = true }, { delay = 60000 }))
    mock.get("/brief", mock.json({ ok = true }, { delay = 300 }))
    """#

    /// The session a test's client uses at `door`, timing out after `timeout` seconds.
    static func session(_ served: Served, timeout: TimeInterval = 1) -> URLSession {
        served.makeSession { $0.timeoutIntervalForRequest = timeout }
    }

    /// The `URLError` code a GET of `path` fails with, or `nil` when it succeeds; `timeout` is
    /// the request's own, when given (the session's is 1 s).
    static func failure(_ served: Served, _ path: String, timeout: TimeInterval? = nil, sessionTimeout: TimeInterval = 1) async -> URLError.Code? {
        var request = URLRequest(url: URL(string: served.baseURL + path)!)
        if let timeout { request.timeoutInterval = timeout }
        let session = session(served, timeout: sessionTimeout)
        defer { session.finishTasksAndInvalidate() }
        do {
            _ = try await session.data(for: request)
            return nil
        } catch let error as URLError {
            return error.code
        } catch {
            return .unknown
        }
    }

    @Test("a reset and an empty reply fail with the same URLError", arguments: Door.allCases)
    func resetAndEmpty(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            #expect(await Self.failure(served, "/reset") == .networkConnectionLost)
            #expect(await Self.failure(served, "/empty") == .badServerResponse)
        }
    }

    @Test("a broken chunked body fails the request", arguments: Door.allCases)
    func brokenChunk(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { (served: Served) async throws in
            // In-process the fault maps to .badServerResponse; URLSession on Linux reports the same
            // bytes from a socket as .unknown. Either way the request fails and the door serves on.
            let code = await Self.failure(served, "/chunk")
            #expect(code == (door == .inProcess ? .badServerResponse : .unknown))
            #expect(try await served.fetch("/users/2").status == 200)
        }
    }

    /// A GET of `path` that must end in `.timedOut` after about 1 s (the timeout in force):
    /// not at URLRequest's default 60 s, nor when a 60 s delay is over. The upper bound is
    /// loose: tests running in parallel can hold up this task's resumption.
    static func expectTimeoutAfterOneSecond(_ door: Door, _ path: String, timeout: TimeInterval? = nil,
                                            sessionTimeout: TimeInterval = 1) async throws {
        try await Served.serving(script, door: door) { served in
            let started = Date()
            #expect(await failure(served, path, timeout: timeout, sessionTimeout: sessionTimeout) == .timedOut)
            let waited = Date().timeIntervalSince(started)
            #expect(waited >= 0.9 && waited < 30)
        }
    }

    @Test("a held request times out after the session's timeout", arguments: Door.allCases)
    func held(door: Door) async throws {
        try await Self.expectTimeoutAfterOneSecond(door, "/hang")
    }

    @Test("a request's own timeout comes before the session's", arguments: Door.allCases)
    func requestTimeout(door: Door) async throws {
        try await Self.expectTimeoutAfterOneSecond(door, "/hang", timeout: 1, sessionTimeout: 60)
    }

    @Test("a delay longer than the timeout ends in a timeout, when the timeout is up", arguments: Door.allCases)
    func delayPastTimeout(door: Door) async throws {
        try await Self.expectTimeoutAfterOneSecond(door, "/late")
        // A delay within the timeout is answered.
        try await Served.serving(Self.script, door: door) { served in
            #expect(await Self.failure(served, "/brief") == nil)
        }
    }

    @Test("a dribbled body arrives whole, over time", arguments: Door.allCases)
    func dribble(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let reply = try await served.fetch("/dribble")
            #expect(reply.status == 200 && reply.body == "0123456789")
            // 10 bytes at 20 bytes a second: about half a second (the first slice leaves at once).
            #expect(reply.elapsed >= 0.3)
        }
    }

    @Test("a redirect is followed: the final response, both requests journaled", arguments: Door.allCases)
    func redirect(door: Door) async throws {
        try await Served.serving(Self.script + "\nmock.get(\"/moved\", mock.redirect(\"/users/1\", 301))", door: door) { served in
            let reply = try await served.fetch("/moved")
            #expect(reply.status == 200 && reply.body == #"{"id":1,"name":"User 1"}"#)
            #expect(reply.url == served.baseURL + "/users/1")
            #expect(served.moonmock.engine.journal.entries().map(\.request.path) == ["/moved", "/users/1"])
        }
    }

    @Test("HEAD answers the headers without the body", arguments: Door.allCases)
    func head(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let reply = try await served.fetch("/head", method: "HEAD")
            #expect(reply.status == 200 && reply.body.isEmpty)
            #expect(reply.headers["content-length"] == "13")
        }
    }
}

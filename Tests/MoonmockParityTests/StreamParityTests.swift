import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

/// A delegate that notes when each piece of a body arrives.
final class PieceDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private let started = Date()
    private var pieces: [(Double, Data)] = []
    private var response: HTTPURLResponse?
    private var done: CheckedContinuation<Void, Never>?
    private var finished = false
    private var error: (any Error)?

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.withLock { self.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { pieces.append((Date().timeIntervalSince(started), data)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            finished = true
            self.error = error
            defer { done = nil }
            return done
        }
        waiting?.resume()
    }

    /// Waits for the task to complete: (arrival time, bytes) of each piece, the response, the error.
    func wait() async -> ([(Double, Data)], HTTPURLResponse?, (any Error)?) {
        await withCheckedContinuation { c in
            let now = lock.withLock { () -> Bool in
                if finished { return true }
                done = c
                return false
            }
            if now { c.resume() }
        }
        return lock.withLock { (pieces, response, error) }
    }

    /// The pieces so far.
    var received: [(Double, Data)] { lock.withLock { pieces } }
}

/// Streamed answers (`mock.sse`, `mock.stream`) through both doors, read by URLSession: pieces
/// reach a delegate as they are sent, a completion handler gets the whole body, a client may
/// resume with Last-Event-ID or leave mid-stream.
@Suite("Streams through both doors")
struct StreamParityTests {
    static let script = #"""
    mock.get("/events", mock.sse({
      { id = "1", data = "one" }, { id = "2", data = { n = 2 } }, { id = "3", event = "last", data = "three" },
    }, { interval = 250 }))
    mock.get("/ndjson", mock.stream({ { step = 1 }, { step = 2 } }, { interval = 50 }))
    mock.get("/forever", mock.sse({ { data = "first" } }, { close = false, heartbeat = 50 }))
    mock.get("/ticks/:n", mock.sse(function(req, stream)
      for i = 1, tonumber(req.params.n) do
        stream:send { id = i, data = { tick = i, seen = mock.state:incr("ticks") } }
        stream:sleep(150)
      end
      stream:send { event = "done", data = "bye" }
    end))
    mock.get("/endless", mock.sse(function(req, stream)
      local i = 0
      while true do
        i = i + 1
        mock.state:set("endless", i)
        stream:send { data = tostring(i) }
        stream:sleep(40)
      end
    end))
    mock.get("/progress", mock.stream(function(req, stream)
      for i = 1, 3 do stream:send { step = i }; stream:sleep(30) end
      stream:send("done\n")
    end))
    mock.get("/runaway", mock.sse(function(req, stream)
      stream:send { data = "start" }
      stream:sleep(10)
      while true do end
    end))
    """#

    static let events = "id: 1\ndata: one\n\nid: 2\ndata: {\"n\":2}\n\nevent: last\nid: 3\ndata: three\n\n"

    static func delegateSession(_ served: Served, _ delegate: PieceDelegate) -> URLSession {
        let configuration = served.door == .inProcess ? served.moonmock.makeConfiguration() : URLSessionConfiguration.ephemeral
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    @Test("a delegate gets each event as it is sent: the first long before the last", arguments: Door.allCases)
    func pieces(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let delegate = PieceDelegate()
            let session = Self.delegateSession(served, delegate)
            defer { session.finishTasksAndInvalidate() }
            session.dataTask(with: URL(string: served.baseURL + "/events")!).resume()
            let (pieces, response, error) = await delegate.wait()
            #expect(error == nil)
            #expect(response?.statusCode == 200)
            #expect(response?.value(forHTTPHeaderField: "Content-Type") == "text/event-stream")
            #expect(response?.value(forHTTPHeaderField: "Cache-Control") == "no-cache")
            #expect(response?.value(forHTTPHeaderField: "Content-Length") == nil)
            #expect(String(decoding: pieces.reduce(Data()) { $0 + $1.1 }, as: UTF8.self) == Self.events)
            #expect(pieces.count >= 3, "\(pieces.map(\.0))")
            let first = try #require(pieces.first?.0), last = try #require(pieces.last?.0)
            // Planned 0.45-0.5 s apart; a loaded machine may hand the first piece over late.
            #expect(last - first >= 0.25, "\(pieces.map(\.0))")
            // The journal has what was sent, and that it completed.
            let entry = try #require(served.moonmock.requests.last)
            #expect(entry.stream?.ended == "completed")
            #expect(entry.stream?.chunks == 3)
            #expect(entry.stream?.sent.last?.text.contains("three") == true)
        }
    }

    @Test("a completion handler gets the whole body; NDJSON chunks too", arguments: Door.allCases)
    func whole(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let reply = try await served.fetch("/events")
            #expect(reply.body == Self.events)
            let progress = try await served.fetch("/progress")
            #expect(progress.body == "{\"step\":1}\n{\"step\":2}\n{\"step\":3}\ndone\n")
            #expect(progress.contentType == "application/x-ndjson")
            let ndjson = try await served.fetch("/ndjson")
            #expect(ndjson.body == "{\"step\":1}\n{\"step\":2}\n")
            #expect(ndjson.contentType == "application/x-ndjson")
        }
    }

    @Test("Last-Event-ID resumes after that event", arguments: Door.allCases)
    func resume(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let reply = try await served.fetch("/events", headers: ["Last-Event-ID": "2"])
            #expect(reply.body == "event: last\nid: 3\ndata: three\n\n")
            // Sent as the stream started, not after the interval (the stream's own clock: a
            // loaded machine delays the client, not this).
            let stream = try #require(served.moonmock.requests.last?.stream)
            #expect(try #require(stream.sent.first).atMilliseconds < 200)
            #expect(stream.resumedAt == 2)
        }
    }

    @Test("a generator's events come as it sends them; state changes between them are seen", arguments: Door.allCases)
    func generator(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let delegate = PieceDelegate()
            let session = Self.delegateSession(served, delegate)
            defer { session.finishTasksAndInvalidate() }
            session.dataTask(with: URL(string: served.baseURL + "/ticks/3")!).resume()
            let (pieces, _, error) = await delegate.wait()
            #expect(error == nil)
            let text = String(decoding: pieces.reduce(Data()) { $0 + $1.1 }, as: UTF8.self)
            #expect(text == "id: 1\ndata: {\"seen\":1,\"tick\":1}\n\nid: 2\ndata: {\"seen\":2,\"tick\":2}\n\n"
                    + "id: 3\ndata: {\"seen\":3,\"tick\":3}\n\nevent: done\ndata: bye\n\n")
            let first = try #require(pieces.first?.0), last = try #require(pieces.last?.0)
            // Planned 0.45-0.5 s apart; a loaded machine may hand the first piece over late.
            #expect(last - first >= 0.25, "\(pieces.map(\.0))")
            let stream = try #require(served.moonmock.requests.last?.stream)
            #expect(stream.ended == "completed" && stream.chunks == 4)
        }
    }

    @Test("cancelling an endless generator ends its coroutine: it sends and counts no more", arguments: Door.allCases)
    func endlessGenerator(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let delegate = PieceDelegate()
            let session = Self.delegateSession(served, delegate)
            defer { session.invalidateAndCancel() }
            let task = session.dataTask(with: URL(string: served.baseURL + "/endless")!)
            task.resume()
            let deadline = Date().addingTimeInterval(10)
            while delegate.received.count < 3 && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            task.cancel()
            _ = await delegate.wait()
            while served.moonmock.requests.last?.stream?.ended == nil && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            #expect(served.moonmock.requests.last?.stream?.ended == "client left")
            let stopped = try served.moonmock.engine.state.get("endless")
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(try served.moonmock.engine.state.get("endless") == stopped)
        }
    }

    @Test("a runaway generator is stopped by the instruction budget; the stream ends, the door serves on", arguments: Door.allCases)
    func runaway(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let reply = try await served.fetch("/runaway")
            #expect(reply.body == "data: start\n\n")
            let stream = try #require(served.moonmock.requests.last?.stream)
            #expect(stream.ended == "error")
            #expect(stream.error?.contains("instruction budget exceeded") == true)
            #expect(try await served.fetch("/ndjson").status == 200)
        }
    }

    @Test("cancelling the task ends a stream kept open: the journal says the client left", arguments: Door.allCases)
    func leaving(door: Door) async throws {
        try await Served.serving(Self.script, door: door) { served in
            let delegate = PieceDelegate()
            let session = Self.delegateSession(served, delegate)
            defer { session.invalidateAndCancel() }
            let task = session.dataTask(with: URL(string: served.baseURL + "/forever")!)
            task.resume()
            let deadline = Date().addingTimeInterval(10)
            while delegate.received.count < 3 && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            #expect(delegate.received.count >= 3)
            task.cancel()
            let (_, _, error) = await delegate.wait()
            #expect((error as? URLError)?.code == .cancelled)
            while served.moonmock.requests.last?.stream?.ended == nil && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            let stream = try #require(served.moonmock.requests.last?.stream)
            #expect(stream.ended == "client left")
            #expect(stream.heartbeats >= 2)
        }
    }
}

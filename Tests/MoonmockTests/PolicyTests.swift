import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Moonmock
import MoonmockCore
import MoonmockTestSupport
import Testing

@Suite("Unmatched requests, logging, verification")
struct PolicyTests {
    @Test("by default an unmatched request fails with the near-miss in the error")
    func failPolicy() async throws {
        let moonmock = try makeMoonmock()
        let error = await #expect(throws: MoonmockError.self) {
            try await moonmock.makeSession().fetch("http://x.test/graphql", method: "POST", body: Data(#"{"operationName":"GetViewer"}"#.utf8))
        }
        #expect(error?.isUnmatchedRequest == true)
        #expect(error?.description.contains("no rule matched POST http://x.test/graphql; closest:") == true)
        #expect(error?.description.contains("graphql GetUser (mocks.lua:2): method ok; path ok; json.operationName: expected GetUser, got GetViewer") == true)
        #expect(error?.localizedDescription == error?.description)
        #expect(moonmock.unmatchedRequests.count == 1)
    }

    @Test("the 501 policy answers with the same near-miss text")
    func notImplementedPolicy() async throws {
        let moonmock = try makeMoonmock()
        moonmock.unmatchedPolicy = .notImplemented
        let (body, response) = try await moonmock.makeSession().fetch("http://x.test/userz/1")
        #expect(response.statusCode == 501)
        #expect(body.hasPrefix("no rule matched GET http://x.test/userz/1; closest:"))
        #expect(body.contains("GET /users/:id"))
    }

    @Test("the pass-through policy sends unmatched requests to the real network on its own session")
    func passThroughPolicy() async throws {
        let upstream = try LoopbackServer(body: "from upstream", limit: 80)
        let moonmock = try makeMoonmock()
        moonmock.unmatchedPolicy = .passThrough
        let s = moonmock.makeSession()
        let (body, response) = try await s.fetch("http://127.0.0.1:\(upstream.port)/anything")
        #expect(response.statusCode == 200 && body == "from upstream")
        #expect(try await s.fetch("http://127.0.0.1:\(upstream.port)/users/2").0 == #"{"id":2,"name":"User 2"}"#)
        // Many at once: the upstream answers come back on other threads and are handed to the
        // task on its own queue.
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for n in 0..<64 { group.addTask { try await s.fetch("http://127.0.0.1:\(upstream.port)/p\(n)").0 } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(bodies.count == 64 && bodies.allSatisfy { $0 == "from upstream" })
    }

    @Test("logging: compact and verbose lines to a callback, limited to some URLs")
    func logging() async throws {
        let moonmock = try makeMoonmock()
        let lines = Lines()
        moonmock.logging = .callback(.compact) { lines.add($0) }
        let s = moonmock.makeSession()
        _ = try await s.fetch("http://x.test/users/1", headers: ["X-Secret": "s"])
        _ = try await s.fetch("http://x.test/echo", method: "POST", body: Data("payload".utf8))
        var entries = lines.all
        #expect(entries.map(\.url) == ["http://x.test/users/1", "http://x.test/echo"])
        #expect(entries[0].headers.isEmpty && entries[0].status == 200 && entries[0].ruleID == "GET /users/:id")
        #expect(String(decoding: entries[1].body, as: UTF8.self) == "payload")

        lines.clear()
        moonmock.logging = RequestLogging.callback(.verbose) { lines.add($0) }.only(["/echo"])
        _ = try await s.fetch("http://x.test/users/1")
        _ = try await s.fetch("http://x.test/echo", method: "POST", body: Data("p".utf8), headers: ["X-Trace": "t"])
        entries = lines.all
        #expect(entries.count == 1)
        #expect(entries.first?.headers["x-trace"] == "t")

        lines.clear()
        moonmock.logging = .callback(.none) { lines.add($0) }
        _ = try await s.fetch("http://x.test/users/1")
        #expect(lines.all.isEmpty)
    }

    @Test("the stderr format names method, URL, status, rule, headers and body")
    func logFormat() {
        let text = RequestLogging.format(LoggedRequest(method: "POST", url: "http://x.test/a", headers: ["X-A": "1"],
                                                       body: Data("hi".utf8), status: 201, ruleID: "POST /a"))
        #expect(text == "[moonmock] POST http://x.test/a → 201 (POST /a)\n    X-A: 1\n    hi")
    }

    @Test("verification counts by rule and by pattern, and explains failures")
    func verification() async throws {
        let moonmock = try makeMoonmock()
        let s = moonmock.makeSession()
        _ = try await s.fetch("http://x.test/users/1")
        _ = try await s.fetch("http://x.test/users/2")
        _ = try? await s.fetch("http://x.test/nope")
        #expect(moonmock.count(rule: "GET /users/:id") == 2)
        #expect(try moonmock.count(.get, "/users/:id") == 2)
        #expect(try moonmock.count(nil, "/nope") == 1)
        try moonmock.verify(.get, "/users/:id", times: 2)
        try moonmock.verify(rule: "GET /users/:id")
        let error = #expect(throws: MoonmockError.self) { try moonmock.verify(.post, "/users/:id", times: 1) }
        #expect(error?.isVerificationFailure == true)
        #expect(error?.description.hasPrefix("Moonmock: expected POST /users/:id 1 time, got 0. Last requests:") == true)
        let unmatched = #expect(throws: MoonmockError.self) { try moonmock.verifyNoUnmatchedRequests() }
        #expect(unmatched?.description.contains("GET http://x.test/nope") == true)
        moonmock.reset()
        #expect(moonmock.requests.isEmpty)
        try moonmock.verifyNoUnmatchedRequests()
    }

    @Test("variants switch from Swift")
    func variants() async throws {
        let moonmock = try makeMoonmock(#"mock.get("/me", mock.variants { ok = "fine", server_error = mock.status(500) })"#)
        let s = moonmock.makeSession()
        #expect(try await s.fetch("http://x.test/me").0 == "fine")
        #expect(moonmock.variants.first?.names == ["ok", "server_error"])
        let watch = moonmock.engine.feed.subscribe()
        defer { watch.cancel() }
        try moonmock.activateVariant("server_error", for: "GET /me")
        // A server's /__moonmock/events on this engine shows the switch.
        #expect(watch.take().events == [.switched(.object(["rule": .string("GET /me"), "active": .string("server_error")]))])
        #expect(try await s.fetch("http://x.test/me").1.statusCode == 500)
        #expect(throws: (any Error).self) { try moonmock.activateVariant("nope", for: "GET /me") }
        moonmock.resetVariants()
        #expect(try await s.fetch("http://x.test/me").0 == "fine")
    }

    @Test("stub folders and Mock-Bundles switch from Swift")
    func seeds() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-seeds-\(UUID().uuidString)")
        for (path, content) in [
            "mocks.lua": #"mock.stubs("stubs", { getMe = "GET /me" }) mock.bundle("one")"#,
            "stubs/getMe/ok.200.json": #"{"me":true}"#, "stubs/getMe/gone.410": "",
            "one/bundle.json": #"[{"request":{"url":"://api.test/b"},"response":{"code":200,"file":"b.txt"}}]"#, "one/b.txt": "one",
            "two/bundle.json": #"[{"request":{"url":"://api.test/b"},"response":{"code":200,"file":"b.txt"}}]"#, "two/b.txt": "two",
        ] {
            let url = dir.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(content.utf8).write(to: url)
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        let moonmock = try Moonmock(script: dir.appendingPathComponent("mocks.lua"))
        let s = moonmock.makeSession()
        await #expect(throws: MoonmockError.self) { try await s.fetch("http://x.test/me") }
        try moonmock.activateStub("ok", for: "getMe")
        #expect(try await s.fetch("http://x.test/me").0 == #"{"me":true}"#)
        try moonmock.activateStub("gone.410", for: "getMe")
        moonmock.stubDelay = 0.1
        let started = Date()
        #expect(try await s.fetch("http://x.test/me").1.statusCode == 410)
        #expect(Date().timeIntervalSince(started) >= 0.1)
        try moonmock.deactivateStub(for: "getMe")
        await #expect(throws: MoonmockError.self) { try await s.fetch("http://x.test/me") }
        #expect(try await s.fetch("https://api.test/b").0 == "one")
        try moonmock.switchBundle(to: "two")
        #expect(try await s.fetch("http://api.test/b").0 == "two")
    }

    @Test("reset clears stubs, journal and state but keeps the script")
    func reset() async throws {
        let moonmock = try makeMoonmock("mock.get('/n', function() return { n = mock.state:incr('n') } end)")
        let s = moonmock.makeSession()
        moonmock.stub(.path("/stub"), .text("s"))
        #expect(try await s.fetch("http://x.test/n").0 == #"{"n":1}"#)
        #expect(try await s.fetch("http://x.test/n").0 == #"{"n":2}"#)
        moonmock.reset()
        #expect(try await s.fetch("http://x.test/n").0 == #"{"n":1}"#)
        await #expect(throws: MoonmockError.self) { try await s.fetch("http://x.test/stub") }
    }

    @Test("watch reloads a script-backed instance on save; a broken save keeps the old rules")
    func watch() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("mocks.lua")
        try Data(#"mock.get("/v", "one")"#.utf8).write(to: file)
        let moonmock = try Moonmock(script: file)
        #expect(throws: MoonmockError.self) { try Moonmock().watch() }
        try moonmock.watch()
        let s = moonmock.makeSession()
        #expect(try await s.fetch("http://x.test/v").0 == "one")
        try Data("mock.get('/v',".utf8).write(to: file)
        var status = moonmock.scriptStatus
        for _ in 0..<300 where status?.lastError == nil {
            try await Task.sleep(nanoseconds: 10_000_000)
            status = moonmock.scriptStatus
        }
        #expect(status?.lastError?.hasPrefix("mocks.lua:1:") == true)
        #expect(try await s.fetch("http://x.test/v").0 == "one")
        try Data(#"mock.get("/v", "two")"#.utf8).write(to: file)
        var body = ""
        for _ in 0..<300 where body != "two" {
            try await Task.sleep(nanoseconds: 10_000_000)
            body = try await s.fetch("http://x.test/v").0
        }
        #expect(body == "two")
        #expect(moonmock.scriptStatus?.generation == 2)
        moonmock.stopWatching()
    }

    @Test("loading from a file, a folder and a string; script errors name file and line")
    func loading() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("mock.get('/f', mock.file('f.json'))".utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        try Data("{}".utf8).write(to: folder.appendingPathComponent("f.json"))
        let fromFolder = try Moonmock(script: folder)
        #expect(fromFolder.engine.handle(MockRequest(method: "GET", url: "http://x/f")).response.body == Array("{}".utf8))
        let fromFile = try Moonmock(script: folder.appendingPathComponent("mocks.lua"))
        #expect(fromFile.script?.rules.count == 1)
        #expect(fromFile.fixturesDirectory.standardizedFileURL.path == folder.standardizedFileURL.path)
        let broken = Moonmock()
        let error = #expect(throws: (any Error).self) { try broken.load(lua: "mock.get('/a', 'a')\nmock.get(", baseDirectory: folder) }
        #expect(String(describing: error!).hasPrefix("mocks.lua:2:"))
    }
}

final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [LoggedRequest] = []
    func add(_ e: LoggedRequest) { lock.withLock { entries.append(e) } }
    func clear() { lock.withLock { entries.removeAll() } }
    var all: [LoggedRequest] { lock.withLock { entries } }
}

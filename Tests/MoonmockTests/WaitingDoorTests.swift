import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockTestSupport
import Testing

@Suite("Handlers that wait, in-process")
struct WaitingDoorTests {
    @Test("mock.fetch through URLSession and mock.sleep: the task gets the handler's answer; the journal has the call")
    func fetchAndSleep() async throws {
        let upstream = try LoopbackServer(body: #"{"name":"ada"}"#)
        let moonmock = try makeMoonmock("""
        mock.get("/who", function(req)
          mock.sleep(50)
          local res, err = mock.fetch("http://127.0.0.1:\(upstream.port)/person")
          if not res then return mock.status(502, err) end
          return { upstream = res.status, name = res.json.name, type = res.headers["content-type"] }
        end)
        mock.get("/down", function(req)
          local res, err = mock.fetch("http://127.0.0.1:1/", { timeout = 2000 })
          return { failed = res == nil, has_reason = type(err) == "string" }
        end)
        """)
        let session = moonmock.makeSession()
        let started = Date()
        let (body, response) = try await session.fetch("http://api.test/who")
        #expect(Date().timeIntervalSince(started) >= 0.05)
        #expect(response.statusCode == 200)
        let json = try JSONValue(parsing: Array(body.utf8))
        #expect(json["upstream"] == .integer(200) && json["name"] == .string("ada") && json["type"] == .string("text/plain"))
        let calls = moonmock.engine.journal.entries().first { $0.path == "/who" }?.outbound ?? []
        #expect(calls.map(\.url) == ["http://127.0.0.1:\(upstream.port)/person"] && calls.first?.status == 200)
        let down = try JSONValue(parsing: Array(try await session.fetch("http://api.test/down").0.utf8))
        #expect(down["failed"] == .bool(true) && down["has_reason"] == .bool(true))
    }

    @Test("a task cancelled while its handler sleeps ends; the instance serves on; the handler timeout answers 504")
    func cancelAndTimeout() async throws {
        let moonmock = try makeMoonmock("""
        mock.get("/long", function() mock.sleep(20000); return "late" end)
        mock.get("/ok", "ok")
        """)
        let session = moonmock.makeSession()
        let task = Task { try await session.fetch("http://api.test/long") }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
        #expect(try await session.fetch("http://api.test/ok").0 == "ok")
        moonmock.engine.handlerTimeoutMilliseconds.store(200, ordering: .relaxed)
        let (body, response) = try await session.fetch("http://api.test/long")
        #expect(response.statusCode == 504 && body.contains("mock.sleep(20000 ms)"))
    }

    @Test("a webhook in-process goes after the task's answer; flushWebhooks waits for it; verifyOutbound counts it")
    func webhook() async throws {
        let receiver = try LoopbackServer(body: "thanks")
        let hook = "http://127.0.0.1:\(receiver.port)/hooks"
        let moonmock = try makeMoonmock("""
        mock.post("/pay", function() mock.webhook { url = "\(hook)", json = { paid = true }, delay = 50 }; return mock.status(202) end)
        """)
        let (_, response) = try await moonmock.makeSession().fetch("http://api.test/pay", method: "POST")
        #expect(response.statusCode == 202)
        #expect(await moonmock.flushWebhooks() == 0)
        try moonmock.verifyOutbound(url: hook, method: "post", kind: "webhook", times: 1)
        #expect(moonmock.outboundCalls.first?.status == 200)
        #expect(throws: MoonmockError.self) { try moonmock.verifyOutbound(path: "/other") }
    }
}

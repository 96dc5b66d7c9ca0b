import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockServer
import Testing

@Suite("Record a real API, replay it through both doors")
struct RecordReplayTests {
    static let upstreamScript = #"""
    mock.get("/users/:id", function(req)
      return { id = tonumber(req.params.id), name = "User " .. req.params.id, session = { token = "secret-" .. req.params.id } }
    end, { headers = { ["Set-Cookie"] = "sid=live", ["X-Api-Key"] = "k-1", ["X-Trace"] = "t" } })
    mock.get("/report", mock.text(string.rep("line of the report\n", 40)))
    mock.get("/logo", mock.text("\137PNG\r\n\026\n\000\001", { headers = { ["Content-Type"] = "image/png" } }))
    mock.graphql("GetViewer", { data = { viewer = { id = "v1" } } })
    mock.graphql("GetFeed", { data = { feed = mock.json.array() } })
    mock.get("/job", function()
      local n = mock.state:incr("job")
      if n < 3 then return mock.json({ state = "pending", n = n }, { status = 202 }) end
      return { state = "done" }
    end)
    mock.post("/orders", mock.json({ id = "o-1" }, { status = 201 }))
    """#

    struct Call: Sendable {
        let method: String, path: String, body: String?
    }
    static let calls = [
        Call(method: "GET", path: "/users/7", body: nil), Call(method: "GET", path: "/report", body: nil),
        Call(method: "GET", path: "/logo", body: nil),
        Call(method: "POST", path: "/graphql", body: #"{"operationName":"GetViewer","query":"{ viewer { id } }"}"#),
        Call(method: "POST", path: "/graphql", body: #"{"operationName":"GetFeed","query":"{ feed }"}"#),
        Call(method: "GET", path: "/job", body: nil), Call(method: "GET", path: "/job", body: nil), Call(method: "GET", path: "/job", body: nil),
        Call(method: "POST", path: "/orders", body: #"{"sku":"A"}"#), Call(method: "GET", path: "/users/8", body: nil),
    ]

    @Test("a recording's snapshot checks, redacts what it must, and answers every recorded request as the upstream did")
    func recordAndReplay() async throws {
        let upstream = try Served(Self.upstreamScript, door: .socket)
        defer { upstream.stop() }
        let recording = try Served("", door: .socket)
        defer { recording.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-recorded-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let start = try await recording.fetch("/__moonmock/recordings/start", method: "POST",
                                              body: #"{"upstream": "\#(upstream.baseURL)", "out": "\#(out.path)", "redact_json": ["token"], "redact": ["X-Trace"]}"#)
        #expect(start.status == 200 && start.body.contains(#""recording":true"#))
        var answers: [(Int, String)] = []
        for call in Self.calls {
            let reply = try await recording.fetch(call.path, method: call.method, body: call.body)
            answers.append((reply.status, reply.body))
        }
        #expect(answers[5].0 == 202 && answers[7].0 == 200)   // the upstream's own answers, through the recorder
        let snapshot = try await recording.fetch("/__moonmock/recordings/stop", method: "POST")
        #expect(snapshot.status == 200 && snapshot.body.contains(#""rules":8"#), "\(snapshot.body)")
        let script = try String(contentsOf: out.appendingPathComponent("mocks.lua"), encoding: .utf8)
        #expect(script.contains("REDACTED") && !script.contains("secret-7") && !script.contains("sid=live") && !script.contains("k-1") && !script.contains("\"t\""))
        #expect(script.contains("mock.graphql(\"GetViewer\"") && script.contains("mock.sequence {"))
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("fixtures/get_report.txt").path))
        // After stop, requests go to the (empty) rules again.
        #expect(try await recording.fetch("/users/7").status == 404)

        for door in Door.allCases {
            let replay = Moonmock()
            try replay.load(script: out)
            replay.unmatchedPolicy = .notImplemented
            let server = door == .socket ? try Served.serve(replay.engine) : nil
            defer { server?.stop() }
            let session = door == .socket ? plainSession : replay.makeSession()
            let base = server?.baseURL ?? "http://127.0.0.1:9"
            for (call, (status, body)) in zip(Self.calls, answers) {
                let reply = try await Served.fetch(session, base + call.path, method: call.method, body: call.body)
                #expect(reply.status == status, "\(door) \(call.method) \(call.path)")
                if call.path.hasPrefix("/users") {
                    #expect(reply.body.replacingOccurrences(of: "REDACTED", with: "secret-" + call.path.dropFirst(7)) == body, "\(door) \(call.path)")
                } else {
                    #expect(reply.body == body, "\(door) \(call.method) \(call.path)")
                }
            }
        }
    }
}

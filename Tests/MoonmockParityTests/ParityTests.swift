import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import MoonmockServer
import Testing

/// Routes of the kinds the README shows; none of the answers depends on the door (no `req.host`,
/// no port), so each test expects the same bytes from both.
let parityScript = #"""
mock.get("/users/:id", function(req) return { id = tonumber(req.params.id), name = "User " .. req.params.id } end)
mock.graphql("GetUser", function(req) return { data = { user = { id = req.json.variables.id } } } end)
mock.graphql("ListPosts", { data = { posts = mock.json.array() } })
mock.post("/echo", function(req)
  return { method = req.method, path = req.path, q = req.query.q, tag = req.headers["x-tag"], body = req.body,
           sku = req.json and req.json.sku }
end)
mock.post("/orders", mock.template('{"id":"{{uuid}}","sku":"{{req.json.sku}}"}', { status = 201 }))
mock.get("/created", mock.json({ ok = true }, { status = 201, headers = { ["X-Trace"] = "abc" } }))
mock.get("/text", mock.text("plain words"))
mock.get("/flaky", function()
  local n = mock.state:incr("flaky", 1, 0)
  if n <= 2 then return mock.json({ attempt = n }, { status = 503 }) end
  return { ok = true, attempt = n }
end)
mock.get("/slow", mock.json({ ok = true }, { delay = 200 }))
mock.get("/reset", mock.fault("connection_reset"))
mock.get("/broken", function(req) return req.nothing.here end)
"""#

@Suite("Both front doors answer alike")
struct ParityTests {
    @Test("path captures, JSON bodies and their content type", arguments: Door.allCases)
    func routes(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            let user = try await served.fetch("/users/7")
            #expect(user.status == 200)
            #expect(user.body == #"{"id":7,"name":"User 7"}"#)
            #expect(user.contentType == "application/json; charset=utf-8")
            let text = try await served.fetch("/text")
            #expect(text.body == "plain words" && text.contentType == "text/plain; charset=utf-8")
        }
    }

    @Test("GraphQL operations are told apart by the body's operationName", arguments: Door.allCases)
    func graphQL(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            let json = ["Content-Type": "application/json"]
            let user = try await served.fetch("/graphql", method: "POST", body: #"{"operationName":"GetUser","variables":{"id":"5"}}"#, headers: json)
            #expect(user.status == 200 && user.body == #"{"data":{"user":{"id":"5"}}}"#)
            let posts = try await served.fetch("/graphql", method: "POST", body: #"{"operationName":"ListPosts","query":"{ posts }"}"#, headers: json)
            #expect(posts.status == 200 && posts.body == #"{"data":{"posts":[]}}"#)
        }
    }

    @Test("a handler sees the same method, path, query, headers and body", arguments: Door.allCases)
    func requestDetails(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            let reply = try await served.fetch("/echo?q=shoes%20red", method: "POST", body: #"{"sku":"A1"}"#,
                                               headers: ["X-Tag": "t-1", "Content-Type": "application/json"])
            #expect(reply.status == 200)
            #expect(reply.body == #"{"body":"{\"sku\":\"A1\"}","method":"POST","path":"/echo","q":"shoes red","sku":"A1","tag":"t-1"}"#)
        }
    }

    @Test("builders set status, headers and templated bodies", arguments: Door.allCases)
    func builders(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            let created = try await served.fetch("/created")
            #expect(created.status == 201 && created.body == #"{"ok":true}"#)
            #expect(created.headers["x-trace"] == "abc")
            let order = try await served.fetch("/orders", method: "POST", body: #"{"sku":"B2"}"#, headers: ["Content-Type": "application/json"])
            // The uuid comes from the pinned environment: the first one, through either door.
            #expect(order.status == 201)
            #expect(order.body == #"{"id":"00000000-0000-4000-8000-000000000001","sku":"B2"}"#)
        }
    }

    @Test("state carries across requests: fails twice, then succeeds", arguments: Door.allCases)
    func state(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await served.fetch("/flaky").status) }
            #expect(statuses == [503, 503, 200])
            #expect(try served.moonmock.engine.state.get("flaky") == .integer(3))
        }
    }

    @Test("a delay holds the answer back", arguments: Door.allCases)
    func delay(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            let reply = try await served.fetch("/slow")
            #expect(reply.status == 200 && reply.body == #"{"ok":true}"#)
            #expect(reply.elapsed >= 0.19)
        }
    }

    @Test("a reset connection fails the request", arguments: Door.allCases)
    func fault(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { (served: Served) async throws in
            await #expect(throws: (any Error).self) { _ = try await served.fetch("/reset") }
            // The door still answers afterwards.
            #expect(try await served.fetch("/users/1").status == 200)
        }
    }

    @Test("a failing handler answers 500 with the rule and the error", arguments: Door.allCases)
    func handlerError(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            let reply = try await served.fetch("/broken")
            #expect(reply.status == 500)
            #expect(reply.body.contains("GET /broken"))
            #expect(reply.body.contains("nothing"))
        }
    }

    @Test("an unmatched request names the closest rule and why it missed", arguments: Door.allCases)
    func unmatched(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            let reply = try await served.fetch("/graphql", method: "POST", body: #"{"operationName":"GetViewer"}"#,
                                               headers: ["Content-Type": "application/json"])
            // The server answers 404 with JSON; in-process the policy chosen here answers 501 with the
            // text of the error the default policy fails the task with. The diagnosis is the same.
            #expect(reply.status == (door == .socket ? 404 : 501))
            #expect(reply.contentType == (door == .socket ? "application/json; charset=utf-8" : "text/plain; charset=utf-8"))
            #expect(reply.body.contains("graphql GetUser"))
            #expect(reply.body.contains("json.operationName: expected GetUser, got GetViewer"))
            #expect(reply.body.contains("mocks.lua:2"))
        }
    }

    @Test("the journal records each request with the rule that answered", arguments: Door.allCases)
    func journal(door: Door) async throws {
        try await Served.serving(parityScript, door: door) { served in
            _ = try await served.fetch("/users/3")
            _ = try await served.fetch("/text?x=1")
            let entries = served.moonmock.engine.journal.entries()
            #expect(entries.map(\.request.path) == ["/users/3", "/text"])
            #expect(entries.map(\.ruleID) == ["GET /users/:id", "GET /text"])
            #expect(entries.map(\.status) == [200, 200])
            // Each door's requests are its own: over the socket they came to 127.0.0.1.
            let host = door == .socket ? "127.0.0.1" : "api.example.test"
            #expect(entries.map(\.request.host) == [host, host])
        }
    }
}

@Suite("One engine behind both doors")
struct SharedEngineTests {
    @Test("a Moonmock served over a socket too: state and journal are shared")
    func sharedEngine() async throws {
        let served = try Served(parityScript, door: .inProcess)
        let server = try Served.serve(served.moonmock.engine)
        defer { server.stop() }
        // Alternate doors: one counter, one sequence.
        let first = try await served.fetch("/flaky")
        let second = try await Served.fetch(plainSession, server.baseURL + "/flaky")
        let third = try await served.fetch("/flaky")
        let statuses: [Int] = [first.status, second.status, third.status]
        #expect(statuses == [503, 503, 200])
        #expect(third.body == #"{"attempt":3,"ok":true}"#)
        let hosts = served.moonmock.engine.journal.entries().map(\.request.host)
        #expect(hosts == ["api.example.test", "127.0.0.1", "api.example.test"])
    }
}

// The README's "The same instance over a socket" example, verbatim apart from the script path.
private let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../examples")

@Test("the README's shared instance: one journal for both doors")
func readmeSharedInstance() async throws {
    let moonmock = try Moonmock(script: examples.appendingPathComponent("mocks.lua"))
    var configuration = ServerConfiguration()
    configuration.port = 0                  // a free port on 127.0.0.1
    let server = MoonmockServer(engine: moonmock.engine, configuration: configuration)
    try server.start()
    defer { server.stop() }

    let inProcess = try await Served.fetch(moonmock.makeSession(), "https://api.example.com/users/7")
    let overSocket = try await Served.fetch(plainSession, server.baseURL + "/users/7")
    #expect(inProcess.status == 200 && overSocket.status == 200)
    #expect(inProcess.body == overSocket.body)
    #expect(inProcess.body.contains("User 7"))
    try moonmock.verify(.get, "/users/:id", times: 2)
}

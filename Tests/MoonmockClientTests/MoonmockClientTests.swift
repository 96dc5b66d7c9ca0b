import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockClient
import MoonmockCore
import MoonmockScript
import MoonmockServer
import Testing

/// `MoonmockClient` against a real server on a free port, as a UI test drives the server its app talks to.
@Suite("MoonmockClient: the server door from Swift")
struct MoonmockClientTests {
    static let script = #"""
    mock.get("/users/:id", function(req) return { id = tonumber(req.params.id) } end, { name = "user" })
    mock.get("/weather", mock.variants { default = "sunny", sunny = { sky = "clear" }, storm = mock.status(503, { sky = "dark" }) })
    mock.get("/count", function() return { n = mock.state:incr("hits") } end)
    mock.post("/notify", function(req) mock.webhook { url = req.query.to, json = { ok = true } }; return mock.status(202) end)
    """#

    /// A server serving `script`, and a client for it; stopped at the end.
    static func serving(_ body: (MoonmockClient, String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(script.utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        let engine = Engine()
        try engine.loadScript(file: folder.appendingPathComponent("mocks.lua").path)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        let server = MoonmockServer(engine: engine, configuration: configuration)
        try server.start()
        defer { server.stop(drainSeconds: 0) }
        try await body(MoonmockClient(url: URL(string: server.baseURL)!), server.baseURL)
    }

    /// Not `URLSession.shared`: other suites in this process route it to in-process mocks.
    static let session = URLSession(configuration: .ephemeral)

    static func get(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await session.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test("stub, verify (pass, and a failure listing the near misses), requests since an id, remove")
    func stubAndVerify() async throws {
        try await Self.serving { mm, base in
            let id = try await mm.stub("GET", "/users/7", status: 404, json: ["error": "no such user"], headers: ["X-Kind": "stub"])
            #expect(try await Self.get(base + "/users/7") == (404, #"{"error":"no such user"}"#))
            #expect(try await mm.rules().contains { $0["id"] as? String == id })
            #expect(try await mm.verify("GET", "/users/:id", times: 1) == 1)
            _ = try await Self.get(base + "/userz/3")
            do {
                try await mm.verify("GET", "/users/:id", times: 2)
                Issue.record("verify passed")
            } catch let error as MoonmockClientError {
                #expect("\(error)".contains("closest: GET \(base)/userz/3: path: expected /users/:id, got /userz/3"), "\(error)")
            }
            let last = try #require(try await mm.requests().last?["id"] as? Int)
            _ = try await Self.get(base + "/users/8")
            #expect(try await mm.requests(since: last).compactMap { $0["url"] as? String } == [base + "/users/8"])
            try await mm.removeRule(id: id)
            #expect(try await Self.get(base + "/users/7").0 == 200)
            #expect(try await mm.addRule(json: #"[{"path": "/a", "respond": {"text": "a"}}, {"path": "/b", "respond": {"text": "b"}}]"#).count == 2)
        }
    }

    @Test("verifyOutbound and flushWebhooks: a webhook sent back to the server itself")
    func outbound() async throws {
        try await Self.serving { client, base in
            let hook = base + "/users/1"
            var request = URLRequest(url: URL(string: base + "/notify?to=" + hook)!)
            request.httpMethod = "POST"
            let (_, response) = try await Self.session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 202)
            let flushed = try await client.flushWebhooks()
            #expect(flushed["pending"] as? Int == 0 && flushed["sent"] as? Int == 1)
            #expect(try await client.verifyOutbound(url: hook, method: "POST", times: 1) == 1)
            await #expect(throws: MoonmockClientError.self) { try await client.verifyOutbound(path: "/elsewhere", times: 1) }
        }
    }

    @Test("state, switchVariant, reset, health; a refused rule names its field")
    func stateAndSwitches() async throws {
        try await Self.serving { mm, base in
            try await mm.setState("hits", 41)
            #expect(try await mm.state("hits") as? Int == 41)
            #expect(try await Self.get(base + "/count").1 == #"{"n":42}"#)
            try await mm.deleteState("hits")
            #expect(try await mm.state("hits") == nil)
            try await mm.switchVariant("GET /weather", to: "storm")
            #expect(try await Self.get(base + "/weather").0 == 503)
            try await mm.reset()
            #expect(try await Self.get(base + "/weather").0 == 200)
            #expect(try await mm.health()["ok"] as? Bool != false)
            do {
                try await mm.stub("GET", "/a", status: 99)
                Issue.record("the rule was taken")
            } catch let error as MoonmockClientError {
                #expect(error.field == "rule.respond.status" && "\(error)".contains("rule.respond.status"), "\(error)")
            }
        }
    }
}

@Suite("MoonmockClient: contracts")
struct MoonmockClientContractTests {
    @Test("contract() and assertContractClean() against a server keeping the pet store spec")
    func contract() async throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/contract")
        let engine = Engine()
        try engine.loadScript(file: fixtures.appendingPathComponent("mocks.lua").path)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        let server = MoonmockServer(engine: engine, configuration: configuration)
        try server.start()
        defer { server.stop(drainSeconds: 0) }
        let client = MoonmockClient(url: URL(string: server.baseURL)!)
        #expect(try await MoonmockClientTests.get(server.baseURL + "/v1/pets").0 == 200)
        try await client.assertContractClean()
        #expect(try await MoonmockClientTests.get(server.baseURL + "/v1/pets?broken=1").0 == 200)
        #expect(try await client.contract()["violations"] as? Int == 1)
        await #expect { try await client.assertContractClean() } throws: { error in
            String(describing: error).contains("listPets response: /body/0/name")
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockScript
import MoonmockServer
import Testing

@Suite("Hot reload through the server", .serialized)
struct ReloadServerTests {
    /// A folder with mocks.lua, a watching ScriptHost and a server on port 0.
    final class Fixture: @unchecked Sendable {
        let dir: URL
        let host: ScriptHost
        let server: MoonmockServer

        init(_ script: String) throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-reload-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data(script.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
            let engine = Engine()
            let host = try ScriptHost(file: dir.appendingPathComponent("mocks.lua").path, engine: engine)
            try host.startWatching()
            self.host = host
            var configuration = ServerConfiguration()
            configuration.port = 0
            server = MoonmockServer(engine: engine, configuration: configuration,
                                    reload: { let o = host.reload(); return .init(ok: o.ok, message: o.message, rules: host.status.rules) },
                                    scriptStatus: { host.status.json })
            try server.start()
        }

        func write(_ script: String) throws { try Data(script.utf8).write(to: dir.appendingPathComponent("mocks.lua")) }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(at: dir)
        }
    }

    @Test("a request in flight during a reload completes with the old behaviour")
    func inFlight() async throws {
        let f = try Fixture(#"mock.get("/v", mock.text("old", { delay = 600 }))"#)
        let port = f.server.port
        let slow = Task { await onThread { RawHTTP.exchange(port, "GET /v HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") } }
        // The save comes once the request is in the server's hands (its answer is 600 ms off).
        let sent = Date().addingTimeInterval(10)
        while f.server.requestsInFlight == 0 && Date() < sent { try await Task.sleep(nanoseconds: 5_000_000) }
        try f.write(#"mock.get("/v", "new")"#)
        var reloaded = false
        let deadline = Date().addingTimeInterval(10)   // a bound for a loaded machine; it takes ~60 ms
        while !reloaded && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
            reloaded = f.host.status.generation == 2
        }
        #expect(reloaded)
        #expect(try await f.server.fetch("/v").body == "new")
        #expect(await slow.value.text.hasSuffix("\r\n\r\nold"))
    }

    @Test("health shows the generation, its load time and the last error; reload forces one")
    func health() async throws {
        let f = try Fixture(#"mock.get("/v", "one")"#)
        try f.write("mock.get('/v',\n")
        var failed = false
        let deadline = Date().addingTimeInterval(10)
        while !failed && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
            failed = f.host.status.lastError != nil
        }
        let health = try JSONValue(parsing: Array(try await f.server.fetch("/__moonmock/health").body.utf8))
        #expect(health["script"]?["generation"] == .integer(1))
        #expect(health["script"]?["last_error"]?.stringValue?.hasPrefix("mocks.lua:2:") == true)
        #expect(health["script"]?["load_ms"] != nil)
        // A failed last reload is not "ok": the old version serves, the file is broken.
        #expect(health["status"] == .string("reload_failed"))
        #expect(health["reload_error"]?.stringValue?.hasPrefix("mocks.lua:2:") == true)
        #expect(try await f.server.fetch("/v").body == "one")

        f.host.stopWatching()
        try f.write(#"mock.get("/v", "two")"#)
        let forced = try await f.server.fetch("/__moonmock/reload", method: "POST")
        #expect(forced.status == 200 && forced.body.contains("reloaded mocks.lua (gen 2"))
        #expect(try await f.server.fetch("/v").body == "two")
        let healed = try JSONValue(parsing: Array(try await f.server.fetch("/__moonmock/health").body.utf8))
        #expect(healed["status"] == .string("ok"))
        #expect(healed["reload_error"] == nil)
    }
}

import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockServer
import Testing

@Suite("Admin API and TLS")
struct AdminTests {
    @Test("health, rules with hits, requests, unmatched, state, reset")
    func admin() async throws {
        let server = try startServer(serverScript)
        defer { server.stop() }
        _ = try await server.fetch("/users/1")
        _ = try await server.fetch("/users/2")
        _ = try await server.fetch("/flaky")
        _ = try await server.fetch("/nope")

        let health = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/health").body.utf8))
        #expect(health["status"] == .string("ok"))
        #expect(health["rules"] == .integer(12))

        let rules = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/rules").body.utf8))
        #expect(rules[0]?["id"] == .string("GET /users/:id"))
        #expect(rules[0]?["hits"] == .integer(2))
        #expect(rules[0]?["location"] == .string("mocks.lua:1"))

        let requests = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/requests").body.utf8))
        guard case .array(let entries) = requests else { Issue.record("not an array"); return }
        #expect(entries.map { $0["url"]?.stringValue?.split(separator: "/").last.map(String.init) } == ["1", "2", "flaky", "nope"])
        #expect(entries[0]["rule"] == .string("GET /users/:id"))

        #expect(try await server.fetch("/__moonmock/requests/count?rule=GET%20%2Fusers%2F%3Aid").body == #"{"count":2}"#)
        #expect(try await server.fetch("/__moonmock/requests/count?method=get&pattern=/users/:id").body == #"{"count":2}"#)
        #expect(try await server.fetch("/__moonmock/requests/count?method=POST&pattern=/users/:id").body == #"{"count":0}"#)
        let filtered = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/requests?pattern=/flaky").body.utf8))
        #expect(filtered[0]?["rule"] == .string("GET /flaky") && filtered[1] == nil)
        #expect(try await server.fetch("/__moonmock/requests/count?pattern=/a?b").status == 400)

        let unmatched = try JSONValue(parsing: Array(try await server.fetch("/__moonmock/requests/unmatched").body.utf8))
        #expect(unmatched[0]?["near_misses"]?[0]?["rule"] != nil)

        let state = try await server.fetch("/__moonmock/state")
        #expect(state.body == #"{"flaky":1}"#)
        #expect(try await server.fetch("/__moonmock/state", method: "DELETE").status == 200)
        #expect(try await server.fetch("/__moonmock/state").body == "{}")

        #expect(try await server.fetch("/__moonmock/requests", method: "DELETE").status == 200)
        #expect(try await server.fetch("/__moonmock/requests").body == "[]")

        _ = try await server.fetch("/flaky")
        #expect(try await server.fetch("/__moonmock/reset", method: "POST").status == 200)
        #expect(try await server.fetch("/__moonmock/state").body == "{}")
        #expect(try await server.fetch("/__moonmock/nope").status == 404)

        let dashboard = try await server.fetch("/__moonmock/")
        #expect(dashboard.status == 200 && dashboard.body.contains("<title>Moonmock</title>"))
    }

    @Test("variants are listed and switched through the admin API")
    func variants() async throws {
        let server = try startServer(#"mock.get("/users/:id", mock.variants { ok = { ok = true }, server_error = mock.status(500) })"#)
        defer { server.stop() }
        #expect(try await server.fetch("/__moonmock/variants").body == #"[{"active":"ok","none_allowed":false,"rule":"GET /users/:id","variants":["ok","server_error"]}]"#)
        let id = "GET%20%2Fusers%2F%3Aid"
        let put = try await server.fetch("/__moonmock/variants/\(id)", method: "PUT", body: #"{"active":"server_error"}"#)
        #expect(put.status == 200)
        #expect(try await server.fetch("/users/1").status == 500)
        #expect(try await server.fetch("/__moonmock/variants/\(id)", method: "PUT", body: #"{"active":"nope"}"#).status == 422)
        #expect(try await server.fetch("/__moonmock/variants/\(id)", method: "PUT", body: #"{"active":null}"#).status == 422)
        #expect(try await server.fetch("/__moonmock/variants/GET%20%2Fnope", method: "PUT", body: #"{"active":"ok"}"#).status == 404)
        #expect(try await server.fetch("/__moonmock/variants/\(id)", method: "PUT", body: "not json").status == 400)
        _ = try await server.fetch("/__moonmock/reset", method: "POST")
        #expect(try await server.fetch("/users/1").status == 200)
    }

    @Test("the Mock-Bundle is swapped through the admin API; stub endpoints can be deactivated")
    func bundleAndStubs() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-admin-bundle-\(UUID().uuidString)")
        for (path, content) in [
            "a/bundle.json": #"[{"request":{"url":"://api.test/x"},"response":{"code":200,"file":"x.txt"}}]"#, "a/x.txt": "from a",
            "b/bundle.json": #"[{"request":{"url":"://api.test/x"},"response":{"code":200,"file":"x.txt"}}]"#, "b/x.txt": "from b",
            "stubs/getX/ok.200.txt": "stub ok",
        ] {
            let url = dir.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(content.utf8).write(to: url)
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = Engine()
        try engine.loadScript(source: #"mock.stubs("stubs", { getX = "GET /stubbed" }) mock.bundle("a")"#, baseDirectory: dir.path)
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = MoonmockServer(engine: engine, configuration: configuration)
        try server.start()
        defer { server.stop() }
        let x = ["Host": "api.test"]
        #expect(try await server.fetch("/x", headers: x).body == "from a")
        #expect(try await server.fetch("/__moonmock/bundle").body == #"[{"path":"a","rule":"bundle a"}]"#)
        #expect(try await server.fetch("/__moonmock/bundle", method: "PUT", body: #"{"path":"b"}"#).status == 200)
        #expect(try await server.fetch("/x", headers: x).body == "from b")
        #expect(try await server.fetch("/__moonmock/bundle", method: "PUT", body: #"{"path":"nope"}"#).status == 422)
        #expect(try await server.fetch("/x", headers: x).body == "from b")

        #expect(try await server.fetch("/stubbed").status == 404)
        #expect(try await server.fetch("/__moonmock/variants/getX", method: "PUT", body: #"{"active":"ok"}"#).status == 200)
        #expect(try await server.fetch("/stubbed").body == "stub ok")
        #expect(try await server.fetch("/__moonmock/variants/getX", method: "PUT", body: #"{"active":null}"#).status == 200)
        #expect(try await server.fetch("/stubbed").status == 404)
    }

    @Test("reload reports success and failure")
    func reload() async throws {
        let ok = try startServer(serverScript, reload: { .init(ok: true, message: "reloaded mocks.lua", rules: 3) })
        defer { ok.stop() }
        let r = try await ok.fetch("/__moonmock/reload", method: "POST")
        #expect(r.status == 200 && r.body.contains("reloaded mocks.lua"))
        let bad = try startServer(serverScript, reload: { .init(ok: false, message: "mocks.lua:3: boom", rules: 12) })
        defer { bad.stop() }
        let b = try await bad.fetch("/__moonmock/reload", method: "POST")
        #expect(b.status == 422 && b.body.contains("mocks.lua:3: boom"))
        let none = try startServer(serverScript)
        defer { none.stop() }
        #expect(try await none.fetch("/__moonmock/reload", method: "POST").status == 501)
    }

    @Test("an admin token protects the admin API and nothing else")
    func token() async throws {
        let server = try startServer(serverScript) { $0.adminToken = "s3cret" }
        defer { server.stop() }
        #expect(try await server.fetch("/__moonmock/health").status == 401)
        #expect(try await server.fetch("/__moonmock/health", headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try await server.fetch("/__moonmock/health", headers: ["Authorization": "Bearer s3cret"]).status == 200)
        #expect(try await server.fetch("/users/1").status == 200)
    }

    @Test("binding beyond loopback without a token is refused")
    func exposedAdmin() throws {
        let error = #expect(throws: ServerError.self) { _ = try startServer(serverScript) { $0.host = "0.0.0.0" } }
        #expect(error?.description.contains("--admin-token") == true)
    }

    @Test("HTTPS with a certificate made by the openssl command, and a plain request to the HTTPS port")
    func tls() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = dir.appendingPathComponent("key.pem").path, cert = dir.appendingPathComponent("cert.pem").path
        let openssl = Subprocess()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        #expect(openssl.terminationStatus == 0)

        let server = try startServer(serverScript) {
            $0.tlsCertificatePEM = try? String(contentsOfFile: cert, encoding: .utf8)
            $0.tlsKeyPEM = try? String(contentsOfFile: key, encoding: .utf8)
        }
        defer { server.stop() }
        #expect(server.baseURL.hasPrefix("https://"))
        let out = dir.appendingPathComponent("out.json").path, head = dir.appendingPathComponent("head.txt").path
        #expect(await curlExit(["-s", "--cacert", cert, "-D", head, "-o", out, "\(server.baseURL)/users/9"]) == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == #"{"id":9,"name":"User 9"}"#)
        // Dated by the engine's clock (pinned by `startServer`), not the library's reading of the real one.
        let dates = try String(contentsOfFile: head, encoding: .utf8).split(separator: "\r\n").filter { $0.lowercased().hasPrefix("date:") }
        // (curl negotiates HTTP/2 by ALPN: the field's name is in lower case there.)
        #expect(dates.map { $0.lowercased() } == ["date: tue, 14 nov 2023 22:13:20 gmt"], "\(dates)")
        // Plain HTTP to the TLS port gets a plain 400 that says so, and the port still serves HTTPS.
        let plain = RawHTTP.exchange(server.port, "GET /users/9 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(plain.text.hasPrefix("HTTP/1.1 400") && plain.text.contains("this port speaks HTTPS"), "\(plain.text)")
        #expect(await curlExit(["-s", "--cacert", cert, "-o", out, "\(server.baseURL)/users/10"]) == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == #"{"id":10,"name":"User 10"}"#)
    }
}

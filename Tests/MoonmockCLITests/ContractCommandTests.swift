import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `serve --spec` and `test --spec` as a user runs them.
@Suite("moonmock serve --spec, moonmock test --spec")
struct ContractCommandTests {
    static let fixtures = CLIRunner.packageRoot.appendingPathComponent("Tests/Fixtures/contract")

    @Test("serve --spec --spec-mode enforce: says what it checks, refuses a bad request with 400, logs it, summarises it")
    func serveEnforce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("contract-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"mock.get("/v1/pets", mock.json({ { id = 1, name = "Rex" } }, { headers = { ["X-Total-Count"] = "1" } }))"#.utf8)
            .write(to: folder.appendingPathComponent("mocks.lua"))
        let (process, out, text) = try launchServe([folder.appendingPathComponent("mocks.lua").path, "--port", "0", "--no-watch",
                                                    "--spec", Self.fixtures.appendingPathComponent("petstore.yaml").path, "--spec-mode", "enforce"],
                                                   until: "admin API")
        defer { process.stop() }
        #expect(text.contains("moonmock: checking against petstore.yaml (6 operations, enforce)"), "\(text)")
        let port = try #require(text.split(separator: "\n").first { $0.contains("serving") }?.split(separator: ":").last.flatMap { Int($0) })
        let session = URLSession(configuration: .ephemeral)
        let base = "http://127.0.0.1:\(port)"
        let (_, ok) = try await session.data(from: URL(string: base + "/v1/pets?limit=3")!)
        #expect((ok as? HTTPURLResponse)?.statusCode == 200)
        let (body, refused) = try await session.data(from: URL(string: base + "/v1/pets?limit=0")!)
        #expect((refused as? HTTPURLResponse)?.statusCode == 400)
        #expect(String(decoding: body, as: UTF8.self).contains("/query/limit"))
        let (summary, _) = try await session.data(from: URL(string: base + "/__moonmock/contract")!)
        let text2 = String(decoding: summary, as: UTF8.self)
        #expect(text2.contains(#""violations":1"#), "\(text2)")
        var verify = URLRequest(url: URL(string: base + "/__moonmock/verify")!)
        verify.httpMethod = "POST"
        verify.httpBody = Data(#"{"contract": "clean"}"#.utf8)
        let (_, verdict) = try await session.data(for: verify)
        #expect((verdict as? HTTPURLResponse)?.statusCode == 422)
        #expect(process.stop())
        let rest = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect((text + rest).contains("contract: GET /v1/pets (#2, listPets)\n    request /query/limit: 0 is less than 1"), "\(text + rest)")
    }

    @Test("serve: an unreadable spec exits 1 naming it; a wrong --spec-mode is a usage error (64)")
    func serveErrors() async throws {
        let missing = try await runCLI(["serve", "examples/mocks.lua", "--port", "0", "--spec", "nowhere.yaml"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("--spec: ") && missing.stderr.contains("nowhere.yaml"), "\(missing.stderr)")
        let mode = try await runCLI(["serve", "examples/mocks.lua", "--spec-mode", "strict"])
        #expect(mode.status == 64)
        #expect(mode.stderr.contains("--spec-mode takes warn or enforce, got 'strict'"))
    }

    @Test("test --spec fails a spec test whose answers break the spec, naming the operation and the place")
    func testSpec() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("contract-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"""
        mock.get("/v1/pets", mock.json({ { id = 1, name = "Rex" } }, { headers = { ["X-Total-Count"] = "1" } }))
        mock.get("/v1/pets/:id", function(req) return { id = req.params.id, name = "Pet" } end)
        """#.utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        try Data(#"""
        test("the list", function() expect(request{ url = "/v1/pets" }.status):equals(200) end)
        test("one pet", function() expect(request{ url = "/v1/pets/7", headers = { ["X-Request-ID"] = "x" } }.status):equals(200) end)
        """#.utf8).write(to: folder.appendingPathComponent("mocks_test.lua"))
        #expect(try await runCLI(["test", "mocks.lua"], in: folder).status == 0)
        let r = try await runCLI(["test", "mocks.lua", "--spec", Self.fixtures.appendingPathComponent("petstore.yaml").path], in: folder)
        #expect(r.status == 1)
        #expect(r.stdout.contains("✔ the list"), "\(r.stdout)")
        #expect(r.stdout.contains("✘ one pet"))
        #expect(r.stdout.contains("an answer breaks the API's spec:"))
        #expect(r.stdout.contains("getPet: /body/id: expected integer, got string (petstore.yaml#/paths/~1pets~1{petId}/get/responses/200/content/application~1json/schema/$ref/properties/id/type)")
                || r.stdout.contains("getPet: /body/id: expected integer, got string"), "\(r.stdout)")
        #expect(r.stdout.contains("1 passed, 1 failed"))
    }
}

import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
import Testing

/// `moonmock drift` against a "real API" on loopback (another moonmock serving what the real
/// one answers today): a field that changed type and one that was dropped are both reported.
@Suite("moonmock drift")
struct DriftCommandTests {
    static let fixtures = CLIRunner.packageRoot.appendingPathComponent("Tests/Fixtures/contract")

    static let mocks = #"""
    mock.get("/v1/pets", mock.json({ { id = 1, name = "Rex", status = "available" } }, { headers = { ["X-Total-Count"] = "1" } }))
    mock.get("/v1/pets/:id", function(req) return { id = tonumber(req.params.id), name = "Pet", status = "sold" } end)
    """#

    /// The real API: `/v1/pets` changed `id` to a string and dropped `status`; every call needs the token.
    static let real = #"""
    mock.get("/v1/pets", function(req)
      if req.headers.authorization ~= "Bearer s3cret-token" then return mock.json({ code = 401, message = "no" }, { status = 401 }) end
      return mock.json({ { id = "1", name = "Rex" } }, { headers = { ["X-Total-Count"] = "1" } })
    end)
    mock.get("/v1/pets/:id", function(req)
      if req.headers.authorization ~= "Bearer s3cret-token" then return mock.json({ code = 401, message = "no" }, { status = 401 }) end
      return { id = tonumber(req.params.id), name = "Pet", status = "sold" }
    end)
    """#

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-drift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(mocks.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        try Data(real.utf8).write(to: dir.appendingPathComponent("real.lua"))
        for name in ["petstore.yaml", "schemas.yaml"] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        try Data(#"[{"method": "GET", "url": "http://127.0.0.1:9/v1/pets", "headers": {"accept": "application/json"}}, {"method": "GET", "url": "http://127.0.0.1:9/v1/pets/4"}]"#.utf8)
            .write(to: dir.appendingPathComponent("journal.json"))
        return dir
    }

    @Test("a changed type and a dropped field: both reported, exit 1; the token is sent and never printed")
    func drift() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (upstream, _, text) = try launchServe([dir.appendingPathComponent("real.lua").path, "--port", "0", "--no-watch"], until: "admin API")
        defer { upstream.stop() }
        let port = try #require(text.split(separator: "\n").first { $0.contains("serving") }?.split(separator: ":").last.flatMap { Int($0) })
        let junit = dir.appendingPathComponent("drift.xml")
        let r = try await runCLI(["drift", "mocks.lua", "--upstream", "http://127.0.0.1:\(port)", "--requests", "journal.json",
                                   "--spec", "petstore.yaml", "--token-env", "REAL_API_TOKEN", "--json", "--junit", junit.path],
                                  in: dir, environment: ["REAL_API_TOKEN": "s3cret-token"])
        #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let requests = report?["requests"] as? [[String: Any]] ?? []
        #expect(requests.count == 2)
        let list = try #require(requests.first { $0["request"] as? String == "GET /v1/pets" })
        let differences = list["differences"] as? [String] ?? []
        #expect(differences.contains("/0/id: a number in the mock, a string in the real API"), "\(differences)")
        #expect(differences.contains("/0/status: in the mock, not in the real API"), "\(differences)")
        #expect(list["operation"] as? String == "listPets")
        let real = (list["violations"] as? [String: Any])?["real"] as? [[String: Any]] ?? []
        #expect(real.contains { $0["instance_path"] as? String == "/body/0/id" }, "the real API breaks the spec too")
        #expect(requests.first { $0["request"] as? String == "GET /v1/pets/4" }?["drift"] as? Bool == false)
        #expect(report?["drift"] as? Int == 1)
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains(#"<testsuite name="moonmock drift" tests="2" failures="1">"#))
        #expect(!r.stdout.contains("s3cret-token") && !xml.contains("s3cret-token") && !r.stderr.contains("s3cret-token"))

        // Without the token the real API says 401: a status drift, in the table.
        let plain = try await runCLI(["drift", "mocks.lua", "--upstream", "http://127.0.0.1:\(port)", "--requests", "journal.json"], in: dir)
        #expect(plain.status == 1)
        #expect(plain.stdout.contains("✘ GET /v1/pets\n    status: 200 in the mock, 401 in the real API"), "\(plain.stdout)")
        #expect(plain.stdout.hasSuffix("2 of 2 requests drifted\n"))
    }

    @Test("no drift: exit 0; requests made from the spec; an unreachable real API exits 2; usage errors 64")
    func clean() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (upstream, _, text) = try launchServe([dir.appendingPathComponent("mocks.lua").path, "--port", "0", "--no-watch"], until: "admin API")
        defer { upstream.stop() }
        let port = try #require(text.split(separator: "\n").first { $0.contains("serving") }?.split(separator: ":").last.flatMap { Int($0) })
        let same = try await runCLI(["drift", "mocks.lua", "--upstream", "http://127.0.0.1:\(port)", "--requests", "journal.json", "--values"], in: dir)
        #expect(same.status == 0, "\(same.stdout)")
        #expect(same.stdout.contains("✔ GET /v1/pets\n"))
        let fromSpec = try await runCLI(["drift", "mocks.lua", "--upstream", "http://127.0.0.1:\(port)", "--spec", "petstore.yaml", "--json"], in: dir)
        let report = try JSONSerialization.jsonObject(with: Data(fromSpec.stdout.utf8)) as? [String: Any]
        #expect(report?["total"] as? Int == 6, "one request per operation: \(fromSpec.stdout)")
        // Without --requests or --spec: the requests the spec tests beside the script send.
        try Data(#"test("a pet", function() expect(request{ url = "/v1/pets/4" }.status):equals(200) end)"#.utf8)
            .write(to: dir.appendingPathComponent("mocks_test.lua"))
        let fromTests = try await runCLI(["drift", "mocks.lua", "--upstream", "http://127.0.0.1:\(port)"], in: dir)
        #expect(fromTests.status == 0)
        #expect(fromTests.stdout == "✔ GET /v1/pets/4\n0 of 1 request drifted\n", "\(fromTests.stdout)")
        let unreachable = try await runCLI(["drift", "mocks.lua", "--upstream", "http://127.0.0.1:9", "--requests", "journal.json"], in: dir)
        #expect(unreachable.status == 2, "\(unreachable.stdout) \(unreachable.stderr)")
        #expect(try await runCLI(["drift", "mocks.lua"], in: dir).status == 64)
        #expect(try await runCLI(["drift", "mocks.lua", "--upstream", "http://x", "--bogus"], in: dir).status == 64)
    }
}

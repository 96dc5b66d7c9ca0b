import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

/// The in-process door keeping a spec, through URLSession: the same checks, refusals and
/// summary as the socket server's.
@Suite("contract in process: Moonmock(script:spec:) through URLSession")
struct ContractDoorTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/contract")

    @Test("enforce with a 3.1 JSON spec: a bad request gets 400 problem+json, a bad answer 500 naming the rule, good ones pass")
    func enforce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("contract-door-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"""
        mock.get("/museum-hours", function(req)
          if req.query.limit == "1" then return mock.json({ { date = "2026-12-06", timeOpen = "9am", timeClose = "18:00" } }) end
          return mock.json({ { date = "2026-12-06", timeOpen = "09:00", timeClose = "18:00" } })
        end)
        """#.utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        let moonmock = try Moonmock(script: folder.appendingPathComponent("mocks.lua"), spec: Self.fixtures.appendingPathComponent("museum.json"),
                                    specMode: .enforce)
        let session = URLSession(configuration: moonmock.makeConfiguration())
        let (good, goodResponse) = try await session.fetch("https://museum.example/museum-hours?startDate=2026-12-06")
        #expect(goodResponse.statusCode == 200, "\(good)")
        try moonmock.assertContractClean()

        let (refused, refusedResponse) = try await session.fetch("https://museum.example/museum-hours?startDate=soon")
        #expect(refusedResponse.statusCode == 400)
        #expect(refusedResponse.value(forHTTPHeaderField: "Content-Type") == "application/problem+json")
        let problem = try JSONValue(parsing: Array(refused.utf8))
        #expect(problem["violations"]?[0]?["instance_path"] == .string("/query/startDate"))

        let (broken, brokenResponse) = try await session.fetch("https://museum.example/museum-hours?limit=1")
        #expect(brokenResponse.statusCode == 500)
        #expect(try JSONValue(parsing: Array(broken.utf8))["rule"] == .string("mocks.lua:1"))

        let (_, missing) = try await session.fetch("https://museum.example/gift-shop")
        #expect(missing.statusCode == 404)
        #expect(moonmock.contractSummary["violations"] == .integer(3))
        #expect { try moonmock.assertContractClean() } throws: { String(describing: $0).contains("/query/startDate") }
        moonmock.reset()
        try moonmock.assertContractClean()
    }

    @Test("warn with the script's mock.spec (3.0 YAML, $ref to a second file): served as written, reported in the journal")
    func warn() async throws {
        let moonmock = try Moonmock(script: Self.fixtures.appendingPathComponent("mocks.lua"))
        let session = URLSession(configuration: moonmock.makeConfiguration())
        let (_, response) = try await session.fetch("http://localhost:8080/v1/pets?broken=1")
        #expect(response.statusCode == 200)
        let entry = try #require(moonmock.engine.journal.entries().last)
        #expect(entry.contract?["operation"] == .string("listPets"))
        #expect(entry.contract?["response"]?[0]?["instance_path"] == .string("/body/0/name"))
        #expect { try moonmock.assertContractClean() } throws: { String(describing: $0).contains("listPets response: /body/0/name") }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

/// Mock-Bundles chosen from Swift: any folder (the test's own, by absolute path), or none.
@Suite("Mock-Bundles from Swift")
struct SwiftBundleTests {
    /// A temporary folder holding two bundles, `a` and `b`, each answering `/which`.
    static func bundles() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-bundles-\(UUID().uuidString)")
        for name in ["a", "b"] {
            let dir = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data(#"[{ "request": { "url": "://api.example.test/which" }, "response": { "code": 200, "file": "body.txt" } }]"#.utf8)
                .write(to: dir.appendingPathComponent("bundle.json"))
            try Data("bundle \(name)".utf8).write(to: dir.appendingPathComponent("body.txt"))
        }
        return root
    }

    @Test("setMockBundle serves an absolute folder, nil serves none, handle-all answers 501 for the rest")
    func withoutScript() async throws {
        let root = try Self.bundles()
        defer { try? FileManager.default.removeItem(at: root) }
        let moonmock = Moonmock()
        moonmock.unmatchedPolicy = .notImplemented
        let session = moonmock.makeSession()
        try moonmock.setMockBundle(root.appendingPathComponent("a"))
        #expect(moonmock.mockBundleDirectory?.lastPathComponent == "a")
        let (body, response) = try await session.fetch("https://api.example.test/which")
        #expect(body == "bundle a")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
        try moonmock.setMockBundle(root.appendingPathComponent("b"))
        #expect(try await session.fetch("http://api.example.test/which").0 == "bundle b")
        // Not in the bundle: the unmatched policy, until handle-all is on.
        let (missing, missingResponse) = try await session.fetch("https://api.example.test/other")
        #expect(missingResponse.statusCode == 501 && missing.contains("no rule"))
        moonmock.bundleHandlesAllRequests = true
        let (handled, _) = try await session.fetch("https://api.example.test/other")
        #expect(handled.contains("no entry in the Mock-Bundle"))
        try moonmock.setMockBundle(nil)
        #expect(moonmock.mockBundleDirectory == nil)
        // No bundle while handling all: every request is a 501, as MockingBird answers it.
        let (none, noneResponse) = try await session.fetch("https://api.example.test/which")
        #expect(noneResponse.statusCode == 501 && none.contains("(none)"), "\(none)")
        moonmock.bundleHandlesAllRequests = false
        #expect(try await session.fetch("https://api.example.test/which").0.contains("no rule"))
        #expect(throws: (any Error).self) { try moonmock.setMockBundle(root.appendingPathComponent("missing")) }
    }

    @Test("a script's bundle switches to any folder from Swift, or to none")
    func scriptBundle() async throws {
        let root = try Self.bundles()
        defer { try? FileManager.default.removeItem(at: root) }
        let moonmock = Moonmock()
        try moonmock.load(lua: #"mock.bundle("a")"#, baseDirectory: root)
        moonmock.unmatchedPolicy = .notImplemented
        let session = moonmock.makeSession()
        #expect(try await session.fetch("https://api.example.test/which").0 == "bundle a")
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-elsewhere-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: root.appendingPathComponent("b"), to: elsewhere)
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        try moonmock.switchBundle(to: elsewhere)   // outside the script's folder: Swift may
        #expect(try await session.fetch("https://api.example.test/which").0 == "bundle b")
        try moonmock.switchBundle(to: nil)
        #expect(try await session.fetch("https://api.example.test/which").0.contains("no rule"))
        // The string form (the admin API's) stays confined to the script's folder.
        #expect(throws: (any Error).self) { try moonmock.switchBundle(to: "../" + elsewhere.lastPathComponent) }
    }
}

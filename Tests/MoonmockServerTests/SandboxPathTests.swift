import Foundation
import MoonmockCore
import MoonmockScript
import MoonmockServer
import Testing

/// Mock-Bundles and stub folders are confined to the script's folder like `mock.read`.
@Suite("File sandbox for seed formats")
struct SandboxPathTests {
    /// A script folder with `files`, plus an outside folder holding a secret.
    final class Folders {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-sandbox-\(UUID().uuidString)")
        var scripts: URL { root.appendingPathComponent("scripts") }
        var secret: URL { root.appendingPathComponent("outside/secret.txt") }
        init(_ files: [String: String], links: [String: String] = [:]) throws {
            let fm = FileManager.default
            try fm.createDirectory(at: secret.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "TOP SECRET".write(to: secret, atomically: true, encoding: .utf8)
            for (path, text) in files {
                let url = scripts.appendingPathComponent(path)
                try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try text.write(to: url, atomically: true, encoding: .utf8)
            }
            for (path, target) in links {
                let url = scripts.appendingPathComponent(path)
                try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try fm.createSymbolicLink(atPath: url.path, withDestinationPath: target)
            }
        }
        deinit { try? FileManager.default.removeItem(at: root) }
    }

    static let bundleJSON = #"[{"request":{"url":"://api.test/x"},"response":{"code":200,"file":"x.txt"}}]"#

    @Test("a bundle entry whose file is a symlink out of the script folder is refused at load, naming the entry")
    func bundleFileLink() throws {
        let f = try Folders(["b/bundle.json": Self.bundleJSON], links: ["b/x.txt": "/etc/passwd"])
        let engine = Engine()
        let error = #expect(throws: (any Error).self) {
            try engine.loadScript(source: #"mock.bundle("b")"#, baseDirectory: f.scripts.path)
        }
        #expect(String(describing: error).contains("response.file 'x.txt' is outside the script folder (a symlink leads out)"), "\(String(describing: error))")
    }

    @Test("a bundle folder that is a symlink out, or reached by '..', is refused; so is one switched to over the admin API")
    func bundleFolders() async throws {
        let f = try Folders(["a/bundle.json": Self.bundleJSON, "a/x.txt": "inside",
                             "../outside/bundle.json": Self.bundleJSON, "../outside/x.txt": "outside"],
                            links: ["linked": "../outside"])
        let engine = Engine()
        #expect(throws: (any Error).self) { try engine.loadScript(source: #"mock.bundle("linked")"#, baseDirectory: f.scripts.path) }
        #expect(throws: (any Error).self) { try engine.loadScript(source: #"mock.bundle("../outside")"#, baseDirectory: f.scripts.path) }
        try engine.loadScript(source: #"mock.bundle("a")"#, baseDirectory: f.scripts.path)
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = MoonmockServer(engine: engine, configuration: configuration)
        try server.start()
        defer { server.stop() }
        for path in ["linked", "../outside", f.root.appendingPathComponent("outside").path] {
            let r = try await server.fetch("/__moonmock/bundle", method: "PUT", body: #"{"path":"\#(path)"}"#)
            #expect(r.status == 422 && r.body.contains("outside the script folder"), "\(path): \(r.body)")
        }
        let x = try await server.fetch("/x", headers: ["Host": "api.test"])
        #expect(x.body == "inside")
    }

    @Test("a stub file or endpoint folder linked out of the script folder is refused at load")
    func stubLinks() throws {
        let file = try Folders(["stubs/getX/ok.200.json": "{}"], links: ["stubs/getX/leak.200.txt": "/etc/passwd"])
        #expect(throws: (any Error).self) {
            try Engine().loadScript(source: #"mock.stubs("stubs", { getX = "GET /x" })"#, baseDirectory: file.scripts.path)
        }
        let folder = try Folders(["stubs/.keep": ""], links: ["stubs/getX": "../../outside"])
        let error = #expect(throws: (any Error).self) {
            try Engine().loadScript(source: #"mock.stubs("stubs", { getX = "GET /x" })"#, baseDirectory: folder.scripts.path)
        }
        #expect(String(describing: error).contains("outside the script folder"), "\(String(describing: error))")
        // Inside the folder, a symlink is fine.
        let fine = try Folders(["stubs/getX/ok.200.json": #"{"ok":true}"#, "shared/err.500.json": "{}"],
                               links: ["stubs/getX/err.500.json": "../../shared/err.500.json"])
        try Engine().loadScript(source: #"mock.stubs("stubs", { getX = "GET /x" })"#, baseDirectory: fine.scripts.path)
    }
}

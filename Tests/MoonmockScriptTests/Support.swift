import Foundation
import LuaBridge
import MoonmockCore
import Testing
@testable import MoonmockScript

/// A temporary folder holding a script and its fixtures, removed on deinit.
final class ScriptFolder {
    let url: URL

    init(_ files: [String: String] = [:]) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, content) in files { try write(name, content) }
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func write(_ name: String, _ content: String) throws {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(content.utf8).write(to: file)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

let pinned = MockEnvironment.fixed(now: 1_700_000_000, uuids: ["11111111-1111-4111-8111-111111111111"], seed: 42)

/// An engine serving `script` (written as `mocks.lua` into a fresh folder with `files`).
func makeEngine(_ script: String, files: [String: String] = [:], options: ScriptOptions = ScriptOptions(libraryPaths: []),
                environment: MockEnvironment = pinned) throws -> (Engine, ScriptFolder) {
    let folder = try ScriptFolder(files.merging(["mocks.lua": script]) { a, _ in a })
    let engine = Engine(environment: environment)
    try engine.loadScript(file: folder.path("mocks.lua"), options: options)
    return (engine, folder)
}

/// The load error for `script`, or `nil` when it loads.
func loadError(_ script: String, files: [String: String] = [:]) throws -> ScriptError? {
    do {
        _ = try makeEngine(script, files: files)
        return nil
    } catch let error as ScriptError {
        return error
    }
}

extension Engine {
    func send(_ method: String, _ url: String, headers: HTTPHeaders = HTTPHeaders(), body: String = "") -> Exchange {
        let full = url.hasPrefix("/") ? "http://localhost" + url : url
        return handle(MockRequest(method: method, url: full, headers: headers, body: Array(body.utf8)))
    }

    /// `send` on a thread of its own, waiting at most `seconds`: a handler that is never
    /// stopped fails the test instead of hanging the run. `nil` after a timeout (recorded); the
    /// VM is still busy then, so the caller must not send again.
    func sendBounded(_ method: String, _ url: String, within seconds: Double = 20,
                     sourceLocation: SourceLocation = #_sourceLocation) -> Exchange? {
        final class Outcome: @unchecked Sendable { var exchange: Exchange? }
        let outcome = Outcome(), done = DispatchSemaphore(value: 0)
        Thread {
            outcome.exchange = self.send(method, url)
            done.signal()
        }.start()
        guard done.wait(timeout: .now() + seconds) == .success else {
            Issue.record("\(method) \(url) not answered within \(Int(seconds)) s", sourceLocation: sourceLocation)
            return nil
        }
        return outcome.exchange
    }
}

extension Exchange {
    var status: Int { response.status }
    var text: String { String(decoding: response.body, as: UTF8.self) }
    var json: JSONValue? { try? JSONValue(parsing: response.body) }
    var contentType: String? { response.headers["content-type"] }
}

import Foundation
import MoonmockCore
import MoonmockImport

/// `GET /__moonmock/recordings`, `POST .../start` `{"upstream", "out"?, "only"?, "redact"?,
/// "redact_json"?, "redact_cookies"?, "keep_cookies"?, "keep_host"?}`, `POST .../snapshot` and `POST .../stop` (both answer the script).
extension AdminAPI {
    func startRecording(_ request: MockRequest, _ server: MoonmockServer) -> MockResponse {
        guard case .object(let o)? = request.json, let upstream = o["upstream"]?.stringValue else {
            return Self.error(#"send {"upstream": "https://api.example.com", "out": "recorded"} (out, only, redact, redact_json, redact_cookies, keep_cookies, keep_host optional)"#, 400)
        }
        guard upstream.lowercased().hasPrefix("http://") || upstream.lowercased().hasPrefix("https://") else {
            return Self.error("upstream must start with http:// or https://, got '\(upstream)'", 400)
        }
        func strings(_ key: String) -> [String]? {
            guard let v = o[key] else { return [] }
            guard case .array(let items) = v else { return nil }
            let s = items.compactMap(\.stringValue)
            return s.count == items.count ? s : nil
        }
        guard let only = strings("only"), let redact = strings("redact"), let redactJSON = strings("redact_json"),
              let redactCookies = strings("redact_cookies") else {
            return Self.error("only, redact, redact_json and redact_cookies are lists of strings", 400)
        }
        var settings = Recorder.Settings(upstream: upstream, out: o["out"]?.stringValue)
        do { settings.only = try only.map { try RoutePattern($0) } } catch { return Self.error("only: \(error)", 400) }
        settings.redactHeaders = Set(redact)
        settings.redactJSONKeys = Set(redactJSON)
        settings.keepHost = o["keep_host"] == .bool(true)
        settings.redactCookies = Set(redactCookies)
        settings.keepCookies = o["keep_cookies"] == .bool(true)
        server.recorder.start(settings)
        return .json(server.recorder.status)
    }

    func snapshotRecording(_ server: MoonmockServer, stop: Bool) -> MockResponse {
        let out = server.recorder.out
        guard let output = stop ? server.recorder.stop() : server.recorder.snapshot() else {
            return Self.error("no recording runs: POST /__moonmock/recordings/start first", 409)
        }
        if let out {
            do { try output.save(in: URL(fileURLWithPath: out)) } catch {
                return Self.error("cannot write \(out)/mocks.lua: \(error)", 500)
            }
        }
        return .json(.object([
            "out": out.map(JSONValue.string) ?? .null,
            "script": .string(output.script),
            "rules": .integer(Int64(output.ruleCount)),
            "fixtures": .array(output.fixtures.map { .string($0.path) }),
            "recording": .bool(!stop),
        ]))
    }
}

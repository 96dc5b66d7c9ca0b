import Foundation
import MoonmockCore

/// `GET`, `PUT` and `DELETE /__moonmock/chaos`, and `mock.resource` collections
/// (`GET /__moonmock/resources`, `DELETE /__moonmock/resources/{path}`).
extension AdminAPI {
    /// `{"profile": "bad-day", "duration_ms": 60000}`, or settings (`{"error_rate": 0.1, …}`)
    /// with an optional `duration_ms`: on from the next request, for every replica sharing a store.
    func startChaos(_ request: MockRequest) throws -> MockResponse {
        guard case .object(var body)? = request.json else {
            return Self.error(#"send {"profile": "name", "duration_ms": 60000} or chaos settings such as {"error_rate": 0.1}"#, 400)
        }
        let profile = body.removeValue(forKey: "profile")
        let duration = body.removeValue(forKey: "duration_ms")
        if let profile, profile.stringValue == nil { return Self.error("profile must be a name", 400) }
        var milliseconds: Double?
        if let duration {
            guard let ms = ChaosPolicy.number(duration), ms > 0 else { return Self.error("duration_ms must be a number of milliseconds more than 0", 400) }
            milliseconds = ms
        }
        var policy: ChaosPolicy?
        if !body.isEmpty {
            guard profile == nil else { return Self.error("give a profile or chaos settings, not both", 400) }
            do { policy = try ChaosPolicy(json: .object(body)) } catch { return Self.error(String(describing: error), 400) }
        }
        guard profile != nil || policy != nil else { return Self.error("give a profile or chaos settings such as {\"error_rate\": 0.1}", 400) }
        let token = UUID().uuidString
        do {
            try engine.chaos.start(profile: profile?.stringValue, policy: policy, durationMilliseconds: milliseconds, token: token)
        } catch {
            return Self.error(String(describing: error), 404)
        }
        var shared: [String: JSONValue] = ["token": .string(token)]
        if let profile { shared["profile"] = profile }
        if let policy { shared["settings"] = policy.json }
        if let milliseconds { shared["until_epoch_ms"] = .double(Date().timeIntervalSince1970 * 1000 + milliseconds) }
        try engine.store?.putSetting(.chaos, "runtime", String(decoding: JSONValue.object(shared).encoded(), as: UTF8.self))
        engine.feed.publish(.switched(.object(["chaos": engine.chaos.json])))
        return .json(engine.chaos.json)
    }

    func stopChaos() throws -> MockResponse {
        let token = UUID().uuidString
        engine.chaos.stop(token: token)
        try engine.store?.putSetting(.chaos, "runtime", String(decoding: JSONValue.object(["stopped": .bool(true), "token": .string(token)]).encoded(), as: UTF8.self))
        engine.feed.publish(.switched(.object(["chaos": engine.chaos.json])))
        return .json(engine.chaos.json)
    }

    /// Another replica's switch (``SharedSettings/chaos``), as it made it.
    func applySharedChaos(_ shared: [String: String]) {
        guard let text = shared["runtime"], case .object(let o)? = try? JSONValue(parsing: Array(text.utf8)),
              let token = o["token"]?.stringValue else { return }
        if o["stopped"] == .bool(true) {
            engine.chaos.stop(token: token)
            return
        }
        var remaining: Double?
        if let until = o["until_epoch_ms"].flatMap(ChaosPolicy.number) {
            remaining = until - Date().timeIntervalSince1970 * 1000
            if remaining! <= 0 { return }
        }
        let policy = o["settings"].flatMap { try? ChaosPolicy(json: $0) }
        try? engine.chaos.start(profile: o["profile"]?.stringValue, policy: policy, durationMilliseconds: remaining, token: token)
    }

    func resourceCollections() throws -> MockResponse {
        .json(.object(["resources": .array(try engine.resources.collections(in: engine.state))]))
    }

    /// Brings a collection back to its seed (`/resources/pets` for `/pets`).
    func resetResource(_ encodedPath: Substring) throws -> MockResponse {
        let path = "/" + PercentDecoding.decode(encodedPath).drop { $0 == "/" }
        guard try engine.resources.reset(path, in: engine.state) else {
            let known = engine.resources.declarations.map(\.path)
            return Self.error("no resource '\(path)'" + (known.isEmpty ? " (the script declares none)" : " (resources: \(known.joined(separator: ", ")))"), 404)
        }
        return .json(.object(["reset": .string(path)]))
    }
}

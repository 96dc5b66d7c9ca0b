import Foundation
import MoonmockCore

extension Moonmock {
    /// Switches on one of the script's chaos profiles (`mock.chaos_profile`) for every request
    /// from the next, for `durationMilliseconds` or until ``stopChaos()``; the same seed fails
    /// the same requests of a sequence.
    ///
    /// ```swift
    /// try moonmock.chaos(profile: "bad-day", durationMilliseconds: 60_000)
    /// ```
    public func chaos(profile: String, durationMilliseconds: Double? = nil) throws {
        try engine.chaos.start(profile: profile, durationMilliseconds: durationMilliseconds)
    }

    /// Switches on chaos settings, as the script writes them (`error_rate`, `status`, `body`,
    /// `latency`, `fault`, `fault_rate`, `rate_limit`, `path`, `host`).
    ///
    /// ```swift
    /// try moonmock.chaos(["error_rate": 0.1, "status": 503])
    /// ```
    public func chaos(_ settings: [String: Any], durationMilliseconds: Double? = nil) throws {
        let data = try JSONSerialization.data(withJSONObject: settings)
        let policy = try ChaosPolicy(json: try JSONValue(parsing: Array(data)))
        try engine.chaos.start(policy: policy, durationMilliseconds: durationMilliseconds)
    }

    /// Ends runtime chaos, and pauses the script's own (`mock.chaos`, rules' `chaos`) until the
    /// next ``chaos(profile:durationMilliseconds:)`` or reload.
    public func stopChaos() { engine.chaos.stop() }
}

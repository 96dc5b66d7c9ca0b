import Foundation

/// The chaos an engine applies: the script's layers (`mock.chaos{...}`, each on everything, a
/// path prefix or a host), its named profiles (`mock.chaos_profile`), and one layer switched on
/// at runtime (`PUT /__moonmock/chaos`, for a while or until `DELETE`). `DELETE` also pauses
/// the script's layers and rules' chaos until chaos is switched on again or the script reloads.
///
/// ```swift
/// try engine.chaos.start(profile: "bad-day", durationMilliseconds: 60_000)
/// engine.chaos.stop()
/// ```
public final class ChaosController: Sendable {
    private struct Runtime {
        let runner: ChaosRunner
        let profile: String?
        /// Monotonic nanoseconds when it ends (`nil`: until stopped).
        let until: UInt64?
    }
    private struct State {
        var script: [ChaosRunner] = []
        var profiles: [String: ChaosPolicy] = [:]
        var runtime: Runtime?
        var paused = false
        /// The last switch's token (``start(profile:policy:durationMilliseconds:token:)``): a
        /// replica applying what the store holds skips the switch it made itself.
        var token: String?
    }
    private let state = Locked(State())
    /// Whether a layer may apply: one relaxed load per request when there is none.
    private let layered = AtomicBool(false)
    /// Whether rules' own chaos applies (off after `DELETE`).
    private let rulesPaused = AtomicBool(false)
    let seed: UInt64

    /// No such profile.
    public struct UnknownProfile: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    init(seed: UInt64) { self.seed = seed }

    /// Whether any layer is on.
    public var isActive: Bool { layered.load(ordering: .relaxed) }
    /// Whether rules' `chaos = {...}` applies.
    public var rulesApply: Bool { !rulesPaused.load(ordering: .relaxed) }

    /// The script's layers and profiles (a reload starts their draws again and ends a pause).
    public func declare(layers: [ChaosPolicy], profiles: [String: ChaosPolicy]) {
        state.withLock { s in
            s.script = layers.enumerated().map { ChaosRunner($0.element, seed: SeededRandom.mix(seed, SeededRandom.seed("layer:\($0.offset)"))) }
            s.profiles = profiles
            s.paused = false
            publish(s)
        }
    }

    /// Switches on a profile of the script, or `policy`, for `durationMilliseconds` (until
    /// ``stop()`` when `nil`), replacing what was switched on before; its draws start from the seed.
    public func start(profile: String? = nil, policy: ChaosPolicy? = nil, durationMilliseconds: Double? = nil, token: String? = nil) throws {
        try state.withLock { s in
            if let token, token == s.token { return }
            let chosen: ChaosPolicy
            if let profile {
                guard let p = s.profiles[profile] else {
                    let names = s.profiles.keys.sorted()
                    let near = EditDistance.nearest(to: profile, among: names)
                    throw UnknownProfile(description: "no chaos profile '\(profile)'" + (near.map { "; did you mean '\($0)'?" } ?? "")
                                         + (names.isEmpty ? " (the script declares none: mock.chaos_profile(name, {...}))" : " (profiles: \(names.joined(separator: ", ")))"))
                }
                chosen = p
            } else if let policy {
                chosen = policy
            } else {
                throw UnknownProfile(description: "give a profile or chaos settings")
            }
            let until = durationMilliseconds.map { DispatchTime.now().uptimeNanoseconds + UInt64(max(0, $0) * 1e6) }
            s.runtime = Runtime(runner: ChaosRunner(chosen, seed: SeededRandom.mix(seed, SeededRandom.seed("runtime:" + (profile ?? "")))),
                                profile: profile, until: until)
            s.paused = false
            s.token = token
            publish(s)
        }
    }

    /// Ends the runtime layer and pauses the script's layers and rules' chaos.
    public func stop(token: String? = nil) {
        state.withLock { s in
            if let token, token == s.token { return }
            s.token = token
            s.runtime = nil
            s.paused = true
            publish(s)
        }
    }

    private func publish(_ s: State) {
        layered.store(!s.paused && (!s.script.isEmpty || s.runtime != nil), ordering: .relaxed)
        rulesPaused.store(s.paused, ordering: .relaxed)
    }

    /// What the layers do to `request`; `nil` when none applies.
    public func decide(_ request: MockRequest) -> ChaosOutcome? {
        let runners: [ChaosRunner] = state.withLock { s in
            if let r = s.runtime, let until = r.until, DispatchTime.now().uptimeNanoseconds >= until {
                s.runtime = nil
                publish(s)
            }
            guard !s.paused else { return [] }
            return s.runtime.map { s.script + [$0.runner] } ?? s.script
        }
        var outcome: ChaosOutcome?
        for runner in runners where runner.policy.applies(to: request) {
            let o = runner.decide(request)
            if outcome == nil { outcome = o } else { outcome!.add(o) }
        }
        return outcome
    }

    /// `{"active": bool, "paused": bool, "layers": [...], "runtime": {...} | null, "profiles": {...}}`.
    public var json: JSONValue {
        state.withLock { s in
            var runtime = JSONValue.null
            if let r = s.runtime {
                var o: [String: JSONValue] = ["settings": r.runner.policy.json]
                if let p = r.profile { o["profile"] = .string(p) }
                if let until = r.until {
                    let now = DispatchTime.now().uptimeNanoseconds
                    o["remaining_ms"] = .integer(until > now ? Int64((until - now) / 1_000_000) : 0)
                }
                runtime = .object(o)
            }
            return .object([
                "active": .bool(!s.paused && (!s.script.isEmpty || s.runtime != nil)),
                "paused": .bool(s.paused),
                "layers": .array(s.script.map { $0.policy.json }),
                "runtime": runtime,
                "profiles": .object(s.profiles.mapValues { $0.json }),
            ])
        }
    }
}

import Foundation

/// What chaos did to a request, as the journal says it.
public enum ChaosKind: UInt8, Sendable {
    case errorRate, latency, fault, rateLimit

    /// `"error_rate"`, `"latency"`, `"fault"`, `"rate_limit"`.
    public var name: String {
        switch self {
        case .errorRate: return "error_rate"
        case .latency: return "latency"
        case .fault: return "fault"
        case .rateLimit: return "rate_limit"
        }
    }
}

/// What chaos did to a request, without its answer: what the journal records and the delay it
/// added (a plain value, copied along the request path without reference counting).
public struct ChaosMark: Sendable {
    public var kind: ChaosKind?
    public var extraDelay: Double = 0

    /// Another layer's mark on top: the first decisive kind stays, delays add up.
    mutating func add(_ other: ChaosMark) {
        extraDelay += other.extraDelay
        if kind == nil || kind == .latency, let k = other.kind, k != .latency || kind == nil { kind = k }
    }
}

/// What chaos did to one request: an answer instead of the rule's (an error, a fault, a 429),
/// and its mark.
public struct ChaosOutcome: Sendable {
    public var answer: MockResponse?
    public var mark = ChaosMark()

    /// Another layer's outcome on top: the first answer stays, delays add up.
    mutating func add(_ other: ChaosOutcome) {
        if answer == nil, let a = other.answer {
            answer = a
            mark.kind = other.mark.kind
            mark.extraDelay += other.mark.extraDelay
            return
        }
        mark.add(other.mark)
    }
}

/// One policy at work: its seeded draws (one stream per kind of failure, so that adding
/// latency does not move which requests fail) and its rate limit's bucket.
///
/// ```swift
/// let runner = ChaosRunner(ChaosPolicy(json: settings), seed: SeededRandom.seed("global"))
/// runner.decide(request).answer?.status   // 503 for about error_rate of the requests
/// ```
public final class ChaosRunner: Sendable {
    public let policy: ChaosPolicy
    private struct Draws {
        var errors: SeededRandom
        var faults: SeededRandom
        var latency: SeededRandom
        var tokens: Double
        var refilled: UInt64
    }
    private let draws: Locked<Draws>

    public init(_ policy: ChaosPolicy, seed: UInt64) {
        self.policy = policy
        draws = Locked(Draws(errors: SeededRandom(seed: SeededRandom.mix(seed, 1)), faults: SeededRandom(seed: SeededRandom.mix(seed, 2)),
                             latency: SeededRandom(seed: SeededRandom.mix(seed, 3)), tokens: Double(policy.rateLimit?.burst ?? 0),
                             refilled: DispatchTime.now().uptimeNanoseconds))
    }

    /// Decides for one request (the draws advance whatever happens, so the same seed fails
    /// the same requests of a sequence).
    public func decide(_ request: MockRequest) -> ChaosOutcome {
        let p = policy
        var outcome = ChaosOutcome()
        draws.withLock { d in
            if let limit = p.rateLimit {
                let now = DispatchTime.now().uptimeNanoseconds
                d.tokens = min(Double(limit.burst), d.tokens + Double(now - d.refilled) / 1e9 * limit.rps)
                d.refilled = now
                if d.tokens >= 1 {
                    d.tokens -= 1
                } else {
                    let wait = max(1, Int(((1 - d.tokens) / limit.rps).rounded(.up)))
                    var r = MockResponse.json(.object(["error": .string("rate limit exceeded: \(Self.figure(limit.rps)) requests per second"),
                                                       "chaos": .string("rate_limit")]), status: 429)
                    r.headers["Retry-After"] = String(wait)
                    outcome.answer = r
                    outcome.mark.kind = .rateLimit
                }
            }
            let faultDraw = p.faultRate > 0 ? d.faults.unit() : 1
            let errorDraw = p.errorRate > 0 ? d.errors.unit() : 1
            if outcome.answer == nil, let fault = p.fault, faultDraw < p.faultRate {
                outcome.answer = .fault(fault)
                outcome.mark.kind = .fault
            }
            if outcome.answer == nil, errorDraw < p.errorRate {
                outcome.answer = errorAnswer()
                outcome.mark.kind = .errorRate
            }
            if let latency = p.latency {
                outcome.mark.extraDelay = Self.sample(latency, &d.latency)
                if outcome.mark.kind == nil { outcome.mark.kind = .latency }
            }
        }
        return outcome
    }

    private func errorAnswer() -> MockResponse {
        let status = policy.status
        switch policy.body {
        case nil:
            return .json(.object(["error": .string("chaos: injected \(status) \(HTTPStatus.reason(status))"), "chaos": .string("error_rate")]), status: status)
        case .string(let text)?:
            return .text(text, status: status)
        case let value?:
            return .json(value, status: status)
        }
    }

    static func sample(_ latency: ChaosPolicy.Latency, _ random: inout SeededRandom) -> Double {
        switch latency {
        case .uniform(let lo, let hi): return lo + (hi - lo) * random.unit()
        case .logNormal(let median, let p99):
            // ln(p99 / median) = 2.326 sigma: the 99th percentile of a standard normal.
            let sigma = log(p99 / median) / 2.326_347_874
            let u1 = max(random.unit(), .leastNonzeroMagnitude), u2 = random.unit()
            let z = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
            return max(0, median * exp(sigma * z))
        }
    }

    static func figure(_ x: Double) -> String { x.rounded() == x ? String(Int(x)) : String(x) }
}

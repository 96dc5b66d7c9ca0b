import Foundation

/// The result of running one request through the ``Engine``.
public struct Exchange: Sendable {
    public let request: MockRequest
    /// What to send. For unmatched requests, the 404 near-miss response.
    public let response: MockResponse
    /// The sampled delay in milliseconds (0 when none).
    public let delayMilliseconds: Double
    /// The id of the rule that answered, `nil` when none matched.
    public let ruleID: String?
    /// For unmatched requests, the closest rules.
    public let nearMisses: [NearMiss]
    /// What the API's spec says of it (`--spec`, `mock.spec`); `nil` without a spec.
    public var contract: ContractVerdict? = nil
    /// What chaos did; `nil` when nothing.
    public var chaos: ChaosKind? = nil

    public var matched: Bool { ruleID != nil }
    /// Chaos answered before any rule ran (an error, a fault, a 429): an answer all the same.
    public var answeredByChaos: Bool { ruleID == nil && chaos != nil && chaos != .latency }
    /// An enforced spec answered for the rules: the request breaks it.
    public var refusedByContract: Bool { contract.map { $0.enforces && !$0.request.isEmpty } ?? false }
}

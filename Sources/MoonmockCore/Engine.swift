import Foundation
import Synchronization

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

    public var matched: Bool { ruleID != nil }
}

/// Matches requests against rules, runs responders, and records the journal. Both transports
/// call ``handle(_:)`` with a ``MockRequest`` and deliver the ``Exchange`` they get back.
///
/// ```swift
/// let engine = Engine()
/// engine.add(try Rule(method: "GET", pattern: "/ping") { _ in .text("pong") })
/// let exchange = engine.handle(MockRequest(method: "GET", url: "http://localhost/ping"))
/// exchange.response.status   // 200
/// ```
public final class Engine: Sendable {
    public let state: StateStore
    /// The variants of rules that have them, and which one is active.
    public let variants = VariantStore()
    /// The Mock-Bundles the script declared and the folder each serves.
    public let bundles = BundleRegistry()
    public let journal: Journal
    public let environment: MockEnvironment
    /// Runtime and script rules as one immutable snapshot: a request takes one lock and one
    /// retain to read both.
    private let sets = Mutex(RuleSets(runtime: .empty, script: .empty))
    private let nextID = Atomic<Int>(1)

    public init(environment: MockEnvironment = .system, journalCapacity: Int = 1000, state: StateStore? = nil) {
        self.environment = environment
        self.journal = Journal(capacity: journalCapacity)
        self.state = state ?? StateStore(clock: environment.now)
    }

    // MARK: rules

    /// Replaces the script rules (a new script generation) in one step.
    public func setScriptRules(_ rules: RuleSet) { sets.withLock { $0 = RuleSets(runtime: $0.runtime, script: rules) } }

    /// The current script rules.
    public var scriptRuleSet: RuleSet { sets.withLock { $0.script } }

    /// Adds a runtime rule; runtime rules are tried before script rules, newest first.
    public func add(_ rule: Rule) {
        sets.withLock { $0 = RuleSets(runtime: RuleSet([rule] + $0.runtime.rules), script: $0.script) }
    }

    /// Removes one runtime rule; returns whether it was there.
    @discardableResult
    public func remove(_ rule: Rule) -> Bool {
        sets.withLock { sets in
            let kept = sets.runtime.rules.filter { $0 !== rule }
            defer { sets = RuleSets(runtime: RuleSet(kept), script: sets.script) }
            return kept.count != sets.runtime.rules.count
        }
    }

    /// Removes every runtime rule.
    public func removeRuntimeRules() { sets.withLock { $0 = RuleSets(runtime: .empty, script: $0.script) } }

    /// Every rule in evaluation order: runtime rules, then script rules.
    public var allRules: [Rule] { sets.withLock { $0.runtime.rules + $0.script.rules } }

    /// Clears runtime rules, the journal and the state, and puts every rule back on its default variant.
    public func reset() {
        removeRuntimeRules()
        journal.clear()
        state.flush()
        variants.reset()
    }

    // MARK: requests

    /// Routes `request` and records it in the journal.
    ///
    /// A GraphQL batch (a JSON array of operations with `operationName`) is answered operation
    /// by operation when every one of them has a rule: the response is the array of their
    /// JSON bodies, the delay the longest, and each operation gets its own journal entry.
    public func handle(_ request: MockRequest) -> Exchange {
        let started = DispatchTime.now().uptimeNanoseconds
        var request = request
        request.id = nextID.add(1, ordering: .relaxed).oldValue
        let sets = self.sets.withLock { $0 }

        if let batch = graphQLBatch(request), let exchange = handleBatch(request, batch, sets, started) {
            return exchange
        }
        var fellThrough: Set<ObjectIdentifier> = []
        if let routed = route(request, sets, &fellThrough) {
            return finish(request, routed.response, routed.rule.id, routed.logs, routed.error, [], started)
        }
        let misses = NearMiss.closest(to: request, among: sets.runtime.rules + sets.script.rules, fellThrough: fellThrough)
        let response = MockResponse.json(NearMiss.body(for: request, misses), status: 404)
        return finish(request, response, nil, [], nil, misses, started)
    }

    private struct Routed {
        let rule: Rule
        let response: MockResponse
        let logs: [String]
        let error: String?
    }

    /// Finds the first rule that answers; `nil` when none does.
    /// The two rule sets of one request: runtime rules first, then script rules.
    private final class RuleSets: Sendable {
        let runtime: RuleSet
        let script: RuleSet
        init(runtime: RuleSet, script: RuleSet) {
            self.runtime = runtime
            self.script = script
        }
    }

    private func route(_ request: MockRequest, _ sets: RuleSets, _ fellThrough: inout Set<ObjectIdentifier>) -> Routed? {
        if let routed = route(request, in: sets.runtime, &fellThrough) { return routed }
        return route(request, in: sets.script, &fellThrough)
    }

    private func route(_ request: MockRequest, in set: RuleSet, _ fellThrough: inout Set<ObjectIdentifier>) -> Routed? {
        if set.rules.isEmpty { return nil }
        return request.withPathSegments { path in route(request, path, in: set, &fellThrough) }
    }

    private func route(_ request: MockRequest, _ path: PathSegments, in set: RuleSet, _ fellThrough: inout Set<ObjectIdentifier>) -> Routed? {
        for index in set.candidates(for: request, path) {
            // Borrowed: the set keeps its rules alive while this request holds the set.
            if let routed = set.borrowed[index]._withUnsafeGuaranteedRef({ attempt($0, request, path, &fellThrough) }) {
                return routed
            }
        }
        return nil
    }

    /// Runs `rule` when it matches; `nil` when it does not, or when its responder fell through.
    private func attempt(_ rule: Rule, _ request: MockRequest, _ path: PathSegments, _ fellThrough: inout Set<ObjectIdentifier>) -> Routed? {
        guard let params = rule.pattern.match(request, path),
              rule.predicates.allSatisfy({ $0.check(request, params) == nil }),
              rule.claim() else { return nil }
        let context = RequestContext(request: request, params: params, rule: rule, state: state, environment: environment)
        var error: String?
        let response: MockResponse
        do {
            guard let r = try rule.responder(context) else {
                rule.unclaim()
                fellThrough.insert(ObjectIdentifier(rule))
                return nil
            }
            response = r
        } catch let failure as HandlerFailure {
            error = failure.description
            response = .text("handler error in rule '\(rule.id)': \(failure.description)\n", status: 500)
        } catch let other {
            error = String(describing: other)
            response = .text("handler error in rule '\(rule.id)': \(other)\n", status: 500)
        }
        rule.recordHit()
        return Routed(rule: rule, response: response, logs: context.logs, error: error)
    }

    /// The operations of a GraphQL batch body, or `nil` when the body is not one.
    private func graphQLBatch(_ request: MockRequest) -> [JSONValue]? {
        guard request.method == "POST", request.bodyLooksLikeJSONArray, case .array(let items)? = request.json, !items.isEmpty,
              items.allSatisfy({ $0["operationName"]?.stringValue != nil }) else { return nil }
        return items
    }

    private func handleBatch(_ request: MockRequest, _ operations: [JSONValue], _ sets: RuleSets, _ started: UInt64) -> Exchange? {
        var parts: [(MockRequest, Routed)] = []
        for operation in operations {
            var sub = MockRequest(method: request.method, url: request.url, headers: request.headers, body: operation.encoded())
            sub.id = request.id
            var ignored: Set<ObjectIdentifier> = []
            guard let routed = route(sub, sets, &ignored) else {
                for (_, done) in parts { done.rule.undoHit() }
                return nil
            }
            parts.append((sub, routed))
        }
        var bodies: [JSONValue] = []
        var combined = MockResponse(status: 200, headers: .json)
        var longest: (delay: DelaySpec, ms: Double)?
        for (sub, routed) in parts {
            let r = routed.response
            bodies.append((try? JSONValue(parsing: r.body)) ?? .object(["errors": .array([.object(["message": .string("non-JSON response from rule '\(routed.rule.id)' (status \(r.status))")])])]))
            if combined.fault == nil { combined.fault = r.fault }
            if let d = r.delay {
                let ms = d.sample(environment.random)
                if ms > (longest?.ms ?? -1) { longest = (.fixed(ms), ms) }
            }
            _ = finish(sub, MockResponse(status: r.status, headers: r.headers, body: r.body), routed.rule.id, routed.logs, routed.error, [], started)
        }
        combined.body = JSONValue.array(bodies).encoded()
        combined.delay = longest?.delay
        let delay = longest?.ms ?? 0
        return Exchange(request: request, response: combined, delayMilliseconds: delay, ruleID: parts[0].1.rule.id, nearMisses: [])
    }

    private func finish(_ request: MockRequest, _ response: MockResponse, _ ruleID: String?, _ logs: [String],
                        _ error: String?, _ misses: [NearMiss], _ started: UInt64) -> Exchange {
        let delay = response.delay?.sample(environment.random) ?? 0
        let elapsed = Int((DispatchTime.now().uptimeNanoseconds - started) / 1000)
        journal.record(JournalEntry(
            request: request.body.count > Journal.maxBodyBytes ? request.truncatingBody(to: Journal.maxBodyBytes) : request,
            timestamp: environment.now(),
            status: response.fault == nil ? response.status : 0, ruleID: ruleID, durationMicros: elapsed,
            delayMilliseconds: delay, fault: response.fault, logs: logs, error: error, nearMisses: misses))
        return Exchange(request: request, response: response, delayMilliseconds: delay, ruleID: ruleID, nearMisses: misses)
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a request's routing learned while it waited — a `times` budget counted in the shared
/// store, a condition that fetched — so that routing it again uses those answers instead of
/// asking again. Rules are kept alive while their identities key it.
final class RoutingMemo: @unchecked Sendable {
    // @unchecked: used by one request at a time (its driver resumes it on one thread at a time).
    var claims: [ObjectIdentifier: Bool] = [:]
    var conditions: [ConditionKey: String?] = [:]
    var kept: [Rule] = []
}

struct ConditionKey: Hashable {
    let rule: ObjectIdentifier
    let index: Int
}

/// A `when` condition that waits (`mock.fetch`, `mock.sleep`, `mock.state` on a shared store):
/// what it waits for, and how to run it on once the wait is over.
public final class ConditionWait: @unchecked Sendable {
    // @unchecked: resumed by one thread at a time (the request's driver).
    public enum Decision: Sendable {
        case passed
        case failed(String)
        case waiting(ConditionWait)
    }
    public let wait: Suspension.Wait
    private let resumeBody: (Suspension.Outcome) -> Decision
    private let dropBody: () -> Void
    private let keep: [AnyObject]

    public init(wait: Suspension.Wait, keep: [AnyObject], resume: @escaping (Suspension.Outcome) -> Decision, drop: @escaping () -> Void) {
        self.wait = wait
        self.keep = keep
        resumeBody = resume
        dropBody = drop
    }

    public func resume(_ outcome: Suspension.Outcome) -> Decision { resumeBody(outcome) }
    public func drop() { dropBody() }
}

/// The condition that just asked to wait, handed from the script to the engine on the thread
/// that runs it (its predicate can only return a reason: ``Predicate/waitMarker``).
public enum PendingCondition {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)   // no destructor: taken at once by the engine
        return key
    }()

    public static func put(_ wait: ConditionWait) {
        take()?.drop()
        pthread_setspecific(key, UnsafeRawPointer(Unmanaged.passRetained(wait).toOpaque()))
    }

    public static func take() -> ConditionWait? {
        guard let raw = pthread_getspecific(key) else { return nil }
        pthread_setspecific(key, nil)
        return Unmanaged<ConditionWait>.fromOpaque(raw).takeRetainedValue()
    }
}

/// A loop's object (its store channel) carried through a `@Sendable` closure that runs on that
/// loop only.
public struct LoopBound<T>: @unchecked Sendable {
    public let value: T
    public init(_ value: T) { self.value = value }
}

extension Suspension.Wait {
    /// A wait for one operation on the shared store: `submit` sends it (on the loop, in the turn
    /// the wait starts) and calls back with the store's result.
    public static func store(_ what: String,
                             _ submit: @escaping @Sendable (@escaping (Result<StateResult, StoreUnavailable>) -> Void) -> Void) -> Suspension.Wait {
        .task(what: what) { done in
            submit { result in
                switch result {
                case .success(let value): done(.stored(value))
                case .failure(let away): done(.failed(away.description))
                }
            }
            return {}
        }
    }
}

extension Engine {
    /// Routes `request` (its id kept) again with what `memo` learned; the answer is recorded
    /// as any other (unless it waits again).
    func replay(_ request: MockRequest, _ memo: RoutingMemo) -> Suspension.Resumed {
        let lane = EngineLanes.lane(serial)
        let saved = lane.memo
        lane.memo = memo
        lane.depth += 1
        defer { lane.memo = saved; lane.depth -= 1 }
        let exchange = handle(request, sets.withLock { $0 }, lane, DispatchTime.now().uptimeNanoseconds)
        if case .suspended? = exchange.response.fault { return Suspension.Resumed(exchange.response) }
        return Suspension.Resumed(exchange.response, journaledDelay: exchange.delayMilliseconds)
    }

    /// A `times` budget counted in the shared store through the loop's channel.
    func budgetWait(_ rule: Rule, _ request: MockRequest, _ channel: any StoreChannel, _ lane: EngineLane) -> Suspension {
        let memo = lane.memo ?? RoutingMemo()
        let bound = LoopBound(channel)
        let counter = rule.budgetCounter
        let wait = Suspension.Wait.store("the times budget of rule '\(rule.id)' in the shared store") { bound.value.submit(.count(counter, by: 1), $0) }
        return Suspension(wait: wait, context: .probe(request: request, params: [:], engine: self), keep: [rule], resume: { [self] outcome in
            guard case .stored(.value(.integer(let n)?)) = outcome else {
                let reason: String
                if case .failed(let text) = outcome { reason = text } else { reason = "the store did not answer a count" }
                rule.recordHit(stripe: EngineLanes.lane(serial).stripe)
                return Suspension.Resumed(StoreUnavailable.response("rule '\(rule.id)': \(reason)"), error: reason)
            }
            memo.claims[ObjectIdentifier(rule)] = rule.noteSharedClaim(count: n)
            memo.kept.append(rule)
            return replay(request, memo)
        }, drop: {})
    }

    /// A condition that waits: resumed until it decides, then the request is routed again.
    func conditionWait(_ rule: Rule, _ pending: ConditionWait, _ request: MockRequest, _ lane: EngineLane) -> Suspension {
        let memo = lane.memo ?? RoutingMemo()
        let key = ConditionKey(rule: ObjectIdentifier(rule), index: lane.waitingPredicate)
        return Suspension(wait: pending.wait, context: .probe(request: request, params: [:], engine: self), keep: [rule, pending], resume: { [self] outcome in
            switch pending.resume(outcome) {
            case .waiting(let next):
                return Suspension.Resumed(.fault(.suspended(conditionWait(rule, next, request, key, memo))))
            case .passed: memo.conditions[key] = .some(nil)
            case .failed(let reason): memo.conditions[key] = .some(reason)
            }
            memo.kept.append(rule)
            return replay(request, memo)
        }, drop: { pending.drop() })
    }

    private func conditionWait(_ rule: Rule, _ pending: ConditionWait, _ request: MockRequest, _ key: ConditionKey, _ memo: RoutingMemo) -> Suspension {
        let lane = EngineLanes.lane(serial)
        let saved = (lane.memo, lane.waitingPredicate)
        lane.memo = memo
        lane.waitingPredicate = key.index
        defer { (lane.memo, lane.waitingPredicate) = saved }
        return conditionWait(rule, pending, request, lane)
    }
}

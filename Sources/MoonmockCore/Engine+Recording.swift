import Foundation

extension Engine {
    /// `nil` when the request meets every predicate of `rule`, else the first one's reason. Read
    /// in place (an iterator would retain the rule's array, whose reference count every worker shares).
    func failedPredicate(_ rule: Rule, _ request: MockRequest, _ captures: RouteCaptures, _ lane: EngineLane) -> String? {
        rule.predicates.withUnsafeBufferPointer { predicates in
            if predicates.isEmpty { return nil }
            let params = captures.dictionary
            for i in predicates.indices {
                // The operation-name index only offers this rule to requests naming its operation.
                if let operation = rule.graphQLOperation, predicates[i].graphQLOperation == operation { continue }
                // A condition that waited, decided before this request was routed again.
                if let memo = lane.memo, let decided = memo.conditions[ConditionKey(rule: ObjectIdentifier(rule), index: i)] {
                    if let reason = decided { return reason }
                    continue
                }
                if let reason = predicates[i].check(request, params) {
                    if reason == Predicate.waitMarker { lane.waitingPredicate = i }
                    return reason
                }
            }
            return nil
        }
    }

    /// Counts an answer for the metrics, in this thread's table.
    @inline(__always)
    func countRequest(_ request: MockRequest, status: Int, ruleID: String?, micros: Int, error: Bool, _ lane: EngineLane) {
        let table = lane.metrics ?? newMetricsTable(lane)
        table.record(rule: ruleID, method: request.method, status: status, micros: micros, error: error)
    }

    @inline(never)
    private func newMetricsTable(_ lane: EngineLane) -> RequestMetrics.Table {
        let table = requestMetrics.table(door: ThreadDoor.current)
        lane.metrics = table
        return table
    }

    func finish(_ request: MockRequest, _ response: MockResponse, _ ruleID: String?, _ logs: [String],
                        _ error: String?, _ misses: [NearMiss], _ started: UInt64, _ lane: EngineLane, contract: JSONValue? = nil,
                        chaos: ChaosMark? = nil) -> Exchange {
        // A handler that waits is recorded when it answers (``finishWaiting``).
        if case .suspended? = response.fault { return Exchange(request: request, response: response, delayMilliseconds: 0, ruleID: ruleID, nearMisses: []) }
        let delay = (response.delay?.sample(environment.random) ?? 0) + (chaos?.extraDelay ?? 0)
        let now = DispatchTime.now().uptimeNanoseconds
        let elapsed = Int((now - started) / 1000)
        journal.record(at: now, request, timestamp: environment.usesSystemClock ? lane.wallClock(at: now) : environment.now(),
                       status: response.fault == nil ? response.status : 0, ruleID: ruleID, durationMicros: elapsed,
                       delayMilliseconds: delay, fault: response.fault, logs: logs, error: error, nearMisses: misses, stripe: lane.stripe,
                       response: response, contract: contract, chaos: chaos?.kind, spare: &lane.spareRecord)
        countRequest(request, status: response.fault == nil ? response.status : 0, ruleID: ruleID, micros: elapsed, error: error != nil, lane)
        if traces { endSpan(request, response, ruleID, error, chaos?.kind, delay, lane) }
        if feed.isWatched { feed.publish(.request(id: request.id)) }
        var exchange = Exchange(request: request, response: response, delayMilliseconds: delay, ruleID: ruleID, nearMisses: misses)
        if let chaos { exchange.chaos = chaos.kind }
        return exchange
    }
}

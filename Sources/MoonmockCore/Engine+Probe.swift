import Foundation

extension Engine {
    /// Whether some rule would answer `request`: its pattern, method and conditions hold and
    /// its `times` budget is not spent. Nothing runs, counts or goes into the journal (a
    /// responder that falls through is not foreseen). The in-process door asks it before it
    /// claims a request under ``UnmatchedPolicy``'s `leaveUnclaimed`.
    ///
    /// ```swift
    /// engine.wouldAnswer(MockRequest(method: "GET", url: "https://api.example.com/users/7"))
    /// ```
    public func wouldAnswer(_ request: MockRequest) -> Bool {
        let sets = self.sets.withLock { $0 }
        if let batch = graphQLBatch(request) {
            // A batch is answered when each of its operations is.
            return batch.allSatisfy { operation in
                wouldAnswer(MockRequest(method: request.method, url: request.url, headers: request.headers, body: operation.encoded()))
            }
        }
        return request.withPathSegments { path in
            for set in [sets.runtime, sets.script] where !set.isEmpty {
                for index in set.candidates(for: request, path) {
                    let rule = set.rules[index]
                    guard let captures = rule.pattern.match(request, path), !rule.isRetired else { continue }
                    if let failure = failedPredicate(rule, request, captures, EngineLanes.lane(serial)) {
                        // A condition that would wait: the request is taken (the wait happens when it is answered).
                        if failure == Predicate.waitMarker { PendingCondition.take()?.drop(); return true }
                        if !failure.hasPrefix(Predicate.stoppedMarker) { continue }
                    }
                    return true
                }
            }
            return false
        }
    }
}

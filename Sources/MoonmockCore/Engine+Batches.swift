import Foundation

/// GraphQL batches: a JSON array of operations answered operation by operation.
extension Engine {
    /// The operations of a GraphQL batch body, or `nil` when the body is not one.
    func graphQLBatch(_ request: MockRequest) -> [JSONValue]? {
        guard request.method == "POST", request.bodyLooksLikeJSONArray, case .array(let items)? = request.json, !items.isEmpty,
              items.allSatisfy({ $0["operationName"]?.stringValue != nil }) else { return nil }
        return items
    }

    func handleBatch(_ request: MockRequest, _ operations: [JSONValue], _ sets: RuleSets, _ lane: EngineLane,
                             _ started: UInt64) -> Exchange? {
        var parts: [(MockRequest, Routed)] = []
        for operation in operations {
            var sub = MockRequest(method: request.method, url: request.url, headers: request.headers, body: operation.encoded())
            sub.id = request.id
            // Traced: each operation a span of its own under the batch's.
            if let tracer, let outer = request.span { sub.attach(tracer.span(parent: outer.context, remote: false)) }
            var ignored: Set<ObjectIdentifier> = []
            guard let routed = route(sub, sets, lane, &ignored) else {
                for (_, done) in parts { done.rule._withUnsafeGuaranteedRef { $0.undoHit(stripe: lane.stripe, store: store) } }
                return nil
            }
            parts.append((sub, routed))
        }
        var bodies: [JSONValue] = []
        var combined = MockResponse(status: 200, headers: .json)
        var longest: (delay: DelaySpec, ms: Double)?
        for (sub, routed) in parts {
            let r = routed.response
            bodies.append((try? JSONValue(parsing: r.body)) ?? .object(["errors": .array([.object(["message": .string("non-JSON response from rule '\(routed.rule.takeUnretainedValue().id)' (status \(r.status))")])])]))
            if combined.fault == nil { combined.fault = r.fault }
            if let d = r.delay {
                let ms = d.sample(environment.random)
                if ms > (longest?.ms ?? -1) { longest = (.fixed(ms), ms) }
            }
            if tracer != nil { lane.spanRule = routed.rule }
            _ = finish(sub, MockResponse(status: r.status, headers: r.headers, body: r.body), routed.rule.takeUnretainedValue().id, routed.logs, routed.error, [], started, lane)
        }
        combined.body = JSONValue.array(bodies).encoded()
        combined.delay = longest?.delay
        let delay = longest?.ms ?? 0
        if let tracer {
            endServerSpan(tracer, request, combined, ruleID: nil, rule: nil, error: nil, chaos: nil, delay: delay)
        }
        return Exchange(request: request, response: combined, delayMilliseconds: delay, ruleID: parts[0].1.rule.takeUnretainedValue().id, nearMisses: [])
    }
}

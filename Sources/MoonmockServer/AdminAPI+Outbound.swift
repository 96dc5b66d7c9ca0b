import Foundation
import MoonmockCore

/// Outbound calls over the admin API: `POST /__moonmock/webhooks/flush` waits (without holding
/// the loop) until no webhook or `mock.after` work is pending, and `POST /__moonmock/verify`
/// with `{"outbound": {...}}` counts the calls handlers made.
extension AdminAPI {
    /// `?timeout_ms=N` (default 10000): `200 {"pending": 0, "sent": n, "failed": m}` once idle,
    /// else `504` with what is still pending.
    func flushWebhooks(_ request: MockRequest) -> MockResponse {
        var limit = 10_000.0
        if let given = request.query("timeout_ms") {
            guard let ms = Double(given), ms >= 0, ms.isFinite else { return Self.error("webhooks/flush: timeout_ms must be milliseconds, got '\(given)'", 400) }
            limit = ms
        }
        let timeout = limit
        let outbox = engine.outbox
        let left = Locked(0)
        let context = RequestContext.probe(request: request, params: [:], engine: engine)
        let wait = Suspension.Wait.task(what: "the pending webhooks") { done in
            outbox.whenIdle(timeout: timeout / 1000) { pending in
                left.withLock { $0 = pending }
                done(.slept)
            }
            return {}
        }
        let suspension = Suspension(wait: wait, context: context, keep: [], resume: { _ in
            let (pending, sent, failed) = outbox.counts
            let body = JSONValue.object(["pending": .integer(Int64(pending)), "sent": .integer(Int64(sent)), "failed": .integer(Int64(failed))])
            guard left.withLock({ $0 }) == 0 else {
                return Suspension.Resumed(.json(.object(["error": .string("\(pending) webhook(s) or mock.after function(s) still pending after \(Int(timeout)) ms"),
                                       "pending": .integer(Int64(pending)), "sent": .integer(Int64(sent)), "failed": .integer(Int64(failed))]),
                              status: 504))
            }
            return Suspension.Resumed(.json(body))
        }, drop: {})
        return .fault(.suspended(suspension))
    }

    /// `{"outbound": {"url": U, "method": M, "kind": K, "path": P}, "times" | "at_least" | "at_most": n}`.
    func verifyOutbound(_ o: [String: JSONValue]) -> MockResponse {
        guard case .object(let spec)? = o["outbound"] else { return Self.error(#"verify: "outbound" must be an object such as {"url": "http://…", "method": "POST"}"#, 400) }
        let known = ["url", "method", "kind", "path"]
        if let unknown = spec.keys.sorted().first(where: { !known.contains($0) }) {
            return Self.error("verify: unknown outbound field '\(unknown)'; fields: \(known.joined(separator: ", "))", 400)
        }
        if let other = o.keys.sorted().first(where: { !["outbound", "times", "at_least", "at_most"].contains($0) }) {
            return Self.error("verify: '\(other)' does not go with outbound (use times, at_least or at_most)", 400)
        }
        let expected: Verification.Expected
        switch Self.expectedCount(o) {
        case .success(let e): expected = e
        case .failure(let refusal): return refusal.response
        }
        let url = spec["url"]?.stringValue, method = spec["method"]?.stringValue?.uppercased(), kind = spec["kind"]?.stringValue
        let path = spec["path"]?.stringValue
        let calls = engine.journal.outboundCalls()
        let matching = calls.filter { call in
            (url == nil || call.url == url) && (method == nil || call.method == method) && (kind == nil || call.kind == kind)
                && (path == nil || URLComponents(string: call.url)?.path == path)
        }
        let label = [method, url ?? path].compactMap { $0 }.joined(separator: " ")
        if expected.holds(matching.count) { return .json(.object(["ok": .bool(true), "count": .integer(Int64(matching.count))])) }
        return .json(.object([
            "ok": .bool(false), "count": .integer(Int64(matching.count)), "expected": .string(expected.description),
            "message": .string("expected outbound \(label.isEmpty ? "calls" : label) \(expected.description) time(s), got \(matching.count)"),
            "calls": .array(calls.suffix(20).map(\.json)),
        ]), status: 422)
    }
}

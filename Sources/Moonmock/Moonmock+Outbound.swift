import Foundation
import MoonmockCore

extension Moonmock {
    /// The calls handlers made (`mock.fetch`, webhooks, `mock.proxy` with a transform), oldest
    /// request first.
    public var outboundCalls: [OutboundCall] { engine.journal.outboundCalls() }

    /// Waits until no webhook or `mock.after` function is pending (or `timeout` seconds pass);
    /// how many are still pending (0 when all are done).
    ///
    /// ```swift
    /// _ = try await session.data(from: URL(string: "https://api.test/payments")!)
    /// await moonmock.flushWebhooks()
    /// try moonmock.verifyOutbound(url: "https://hooks.test/paid", method: "POST", times: 1)
    /// ```
    @discardableResult
    public func flushWebhooks(timeout: TimeInterval = 10) async -> Int {
        await withCheckedContinuation { continuation in
            engine.outbox.whenIdle(timeout: timeout) { pending in continuation.resume(returning: pending) }
        }
    }

    /// Throws unless handlers called out as many times as said (`nil`: at least once), matching
    /// every field given: the whole `url`, its `path`, the `method`, the `kind` (`"fetch"`,
    /// `"webhook"`, `"proxy"`). The error lists the calls made.
    public func verifyOutbound(url: String? = nil, path: String? = nil, method: String? = nil, kind: String? = nil,
                               times: Int? = nil) throws {
        let calls = outboundCalls
        let n = calls.count { call in
            (url == nil || call.url == url) && (method == nil || call.method == method?.uppercased()) && (kind == nil || call.kind == kind)
                && (path == nil || URLComponents(string: call.url)?.path == path)
        }
        guard !(times.map { n == $0 } ?? (n > 0)) else { return }
        let label = [method?.uppercased(), url ?? path].compactMap { $0 }.joined(separator: " ")
        var text = "Moonmock: expected outbound \(label.isEmpty ? "calls" : label) \(times.map { "\($0) time\($0 == 1 ? "" : "s")" } ?? "at least once"), got \(n)."
        text += calls.isEmpty ? " No calls were made." : " Calls made:"
        for c in calls.suffix(10) { text += "\n  \(c.kind) \(c.method) \(c.url) → \(c.status.map(String.init) ?? "no answer: " + (c.error ?? ""))" }
        throw MoonmockError.verification(text)
    }
}

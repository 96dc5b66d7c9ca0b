import Foundation

/// A handler that waits: what it waits for, and how to go on once the wait is over. A door
/// that gets a response whose fault is ``Fault/suspended(_:)`` hands the exchange to
/// ``Engine/drive(_:client:hop:done:)``, which performs the waits and resumes the handler
/// until it answers.
///
/// ```swift
/// if case .suspended(let s)? = exchange.response.fault { print(s) }   // waiting for mock.sleep(200 ms)
/// ```
public final class Suspension: @unchecked Sendable, Equatable, CustomStringConvertible {
    // @unchecked: the closures run the handler's coroutine under its VM's lock; one thread at a
    // time resumes a suspension (the driver's claim).
    public enum Wait: Sendable {
        /// `mock.sleep(ms)`.
        case sleep(milliseconds: Double)
        /// `mock.fetch`, or a `mock.proxy` with a `transform` (`kind` says which).
        case fetch(OutboundRequest, kind: String)
        /// Anything else (`POST /__moonmock/webhooks/flush`): `start` begins it and gives its
        /// cancel; it calls its argument once, when done. `what` names it in messages.
        case task(what: String, start: @Sendable (@escaping @Sendable (Outcome) -> Void) -> @Sendable () -> Void)
    }

    public enum Outcome: Sendable {
        case slept
        case fetched(OutboundResponse, milliseconds: Double)
        case failed(String)
        /// A `mock.state` operation's result from the shared store.
        case stored(StateResult)
    }

    /// What a resume gave: the next response (the answer, or another suspended one), the
    /// handler's error, and — when the engine routed the request again and recorded it
    /// already — the delay it sampled (the driver then records nothing more).
    public struct Resumed: Sendable {
        public var response: MockResponse
        public var error: String?
        public var journaledDelay: Double?
        public init(_ response: MockResponse, error: String? = nil, journaledDelay: Double? = nil) {
            self.response = response
            self.error = error
            self.journaledDelay = journaledDelay
        }
    }

    public let wait: Wait
    /// The request's context: its logs grow as the handler goes on.
    public let context: RequestContext
    private let resumeBody: (Outcome) -> Resumed
    private let dropBody: () -> Void
    /// What the handler needs alive while it waits (its rule, its script generation).
    private let keep: [AnyObject]

    /// `resume` runs the handler on with the outcome and gives its next response (the answer,
    /// or another suspended one) and the handler's error when it failed. `drop` lets the handler go without resuming it.
    public init(wait: Wait, context: RequestContext, keep: [AnyObject], resume: @escaping (Outcome) -> Resumed,
                drop: @escaping () -> Void) {
        self.wait = wait
        self.context = context
        self.keep = keep
        resumeBody = resume
        dropBody = drop
    }

    public func resume(_ outcome: Outcome) -> Resumed { resumeBody(outcome) }

    /// The same wait, its final answer changed by `transform` (a rule's defaults).
    public func mapped(_ transform: @escaping (MockResponse) -> MockResponse) -> Suspension {
        Suspension(wait: wait, context: context, keep: [self], resume: { [self] outcome in
            var resumed = resume(outcome)
            if case .suspended(let next)? = resumed.response.fault {
                resumed.response = .fault(.suspended(next.mapped(transform)))
            } else if resumed.journaledDelay == nil {
                resumed.response = transform(resumed.response)
            }
            return resumed
        }, drop: { [self] in drop() })
    }
    public func drop() { dropBody() }

    public var description: String {
        switch wait {
        case .sleep(let ms): return "mock.sleep(\(Self.format(ms)) ms)"
        case .fetch(let request, let kind): return "\(kind == "proxy" ? "mock.proxy" : "mock.fetch") \(request.summary)"
        case .task(let what, _): return what
        }
    }

    public static func == (a: Suspension, b: Suspension) -> Bool { a === b }

    static func format(_ ms: Double) -> String { ms == ms.rounded() ? String(Int(ms)) : String(ms) }
}

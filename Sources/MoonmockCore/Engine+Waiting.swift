import Foundation

/// Cancels a handler's wait (the client left): the handler is let go and never answers.
public final class WaitHandle: Sendable {
    private let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    public func cancel() { body() }
}

extension Engine {
    /// Drives a handler that waits (``Fault/suspended(_:)``) to its answer: performs each wait
    /// (a timer on ``Scheduler/shared``, an outbound call on `client`), resumes the handler on
    /// the thread `hop` runs its closure on (a door's loop), and calls `done` once with the
    /// answer and its delay — or with a `504` when the handler waited past
    /// ``handlerTimeoutMilliseconds`` in all. The journal entry is completed either way.
    ///
    /// ```swift
    /// if case .suspended? = exchange.response.fault {
    ///     handle = engine.drive(exchange, client: client, hop: { loop.run($0) }) { response, delay in loop.send(response) }
    /// }
    /// ```
    public func drive(_ exchange: Exchange, client: any OutboundClient, hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                      done: @escaping @Sendable (MockResponse, Double) -> Void) -> WaitHandle {
        guard case .suspended(let first)? = exchange.response.fault else {
            done(exchange.response, exchange.delayMilliseconds)
            return WaitHandle {}
        }
        return drive(first, client: client, hop: hop, done: done)
    }

    /// ``drive(_:client:hop:done:)-(Exchange,_,_,_)`` from the suspension a response carries
    /// (its context names the request and the rule).
    public func drive(_ first: Suspension, client: any OutboundClient, hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                      done: @escaping @Sendable (MockResponse, Double) -> Void) -> WaitHandle {
        let exchange = Exchange(request: first.context.request, response: .fault(.suspended(first)), delayMilliseconds: 0,
                                ruleID: first.context.rule?.id, nearMisses: [])
        let run = WaitRun(engine: self, exchange: exchange, client: client, hop: hop, done: done)
        run.begin(first)
        return WaitHandle { run.cancel() }
    }

    /// The id of the request this thread's last ``handle(_:)`` gave (a door that answered it
    /// releases its held webhooks by it: ``Outbox/release(_:)``).
    public var lastRequestIDOnThisThread: Int { EngineLanes.lane(serial).nextID - 1 }

    /// Drives work that answers nobody (a `mock.after` function that waits) to its end; `done`
    /// then. Waits without a client end at once.
    public func driveDetached(_ first: Suspension, client: (any OutboundClient)?, done: @escaping @Sendable () -> Void) {
        guard let client else {
            first.drop()
            return done()
        }
        let exchange = Exchange(request: first.context.request, response: .fault(.suspended(first)), delayMilliseconds: 0, ruleID: nil, nearMisses: [])
        let run = WaitRun(engine: self, exchange: exchange, client: client, detached: true, hop: { DispatchQueue.global().async(execute: $0) },
                          done: { _, _ in done() })
        run.begin(first)
    }

    /// The answer of a handler that waited: its delay sampled, the request recorded in the
    /// journal with it (a request the engine did not see, id 0 — the admin API's — is not).
    func finishWaiting(_ exchange: Exchange, _ response: MockResponse, logs: [String], error: String?, started: UInt64,
                       rule: Rule? = nil) -> (MockResponse, Double) {
        var response = response
        if case .stream(let plan)? = response.fault { response.fault = .stream(plan.serving(exchange.request)) }
        let delay = response.delay?.sample(environment.random) ?? 0
        guard exchange.request.id != 0 else { return (response, delay) }
        let lane = EngineLanes.lane(serial)
        let now = DispatchTime.now().uptimeNanoseconds
        journal.record(at: now, exchange.request, timestamp: environment.usesSystemClock ? lane.wallClock(at: now) : environment.now(),
                       status: response.fault == nil ? response.status : 0, ruleID: exchange.ruleID, durationMicros: Int((now - started) / 1000),
                       delayMilliseconds: delay, fault: response.fault, logs: logs, error: error, nearMisses: [], stripe: lane.stripe,
                       response: response, spare: &lane.spareRecord)
        countRequest(exchange.request, status: response.fault == nil ? response.status : 0, ruleID: exchange.ruleID,
                     micros: Int((now - started) / 1000), error: error != nil, lane)
        if let tracer {
            endServerSpan(tracer, exchange.request, response, ruleID: exchange.ruleID, rule: rule, error: error, chaos: nil, delay: delay,
                          door: lane.metrics?.door)
        }
        if feed.isWatched { feed.publish(.request(id: exchange.request.id)) }
        return (response, delay)
    }
}

/// One driven handler: its current wait, and who finishes first (the handler, its deadline, or
/// its client leaving).
private final class WaitRun: @unchecked Sendable {
    // @unchecked: `state` is the only mutable part, under its lock.
    private struct State {
        var current: Suspension?
        var cancelWait: (@Sendable () -> Void)?
        var finished = false
        var resuming = false
    }
    private let state = Locked(State())
    private let engine: Engine
    private let exchange: Exchange
    private let client: any OutboundClient
    private let hop: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let done: @Sendable (MockResponse, Double) -> Void
    private let started = DispatchTime.now().uptimeNanoseconds
    /// Work that answers nobody: no deadline, no journal answer.
    private let detached: Bool
    // Set and read by whichever thread runs the handler at the time (one at a time).
    private var cancelDeadline: (@Sendable () -> Void)?

    init(engine: Engine, exchange: Exchange, client: any OutboundClient, detached: Bool = false,
         hop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, done: @escaping @Sendable (MockResponse, Double) -> Void) {
        self.engine = engine
        self.detached = detached
        self.exchange = exchange
        self.client = client
        self.hop = hop
        self.done = done
    }

    func begin(_ first: Suspension) {
        wait(first)
    }

    /// The handler's deadline, armed at its first wait for time or another service (a wait
    /// for the shared store is bounded by the store's own timeout).
    private func armDeadline() {
        guard cancelDeadline == nil, !detached else { return }
        let limit = engine.handlerTimeoutMilliseconds.load(ordering: .relaxed)
        guard limit > 0 else { return }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        cancelDeadline = Scheduler.shared.after(max(0, Double(limit) - elapsed) / 1000) { [self] in expire(limit) }
    }

    private func wait(_ s: Suspension) {
        // Current before the wait starts: its outcome may come at once, on this thread.
        let stale = state.withLock { st -> Bool in
            guard !st.finished else { return true }
            st.current = s
            return false
        }
        if stale { return s.drop() }
        let cancel: @Sendable () -> Void
        switch s.wait {
        case .sleep(let ms):
            armDeadline()
            cancel = Scheduler.shared.after(ms / 1000) { [self] in hop { self.resume(s, .slept) } }
        case .task(_, let start):
            cancel = start { [self] outcome in hop { self.resume(s, outcome) } }
        case .fetch(let asked, let kind):
            armDeadline()
            var traced = asked
            if traced.trace == nil, let span = exchange.request.span { traced.trace = OutboundTrace(parent: span.context, kind: kind) }
            let request = traced
            let began = DispatchTime.now().uptimeNanoseconds, at = Date().timeIntervalSince1970
            let id = exchange.request.id, journal = engine.journal
            cancel = client.send(request) { [self] result in
                let ms = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6
                let outcome: Suspension.Outcome
                switch result {
                case .success(let response):
                    journal.recordOutbound(OutboundCall(kind: kind, request: request, status: response.status, error: nil, durationMilliseconds: ms,
                                                        startedAt: at), for: id)
                    outcome = .fetched(response, milliseconds: ms)
                case .failure(let failure):
                    journal.recordOutbound(OutboundCall(kind: kind, request: request, status: nil, error: failure.description,
                                                        durationMilliseconds: ms, startedAt: at), for: id)
                    outcome = .failed(failure.description)
                }
                hop { self.resume(s, outcome) }
            }
        }
        let ended = state.withLock { st -> Bool in
            if st.finished { return true }
            if st.current === s { st.cancelWait = cancel }
            return false
        }
        if ended { cancel() }
    }

    private func resume(_ s: Suspension, _ outcome: Suspension.Outcome) {
        let go = state.withLock { st -> Bool in
            guard !st.finished, st.current === s else { return false }
            st.current = nil
            st.cancelWait = nil
            st.resuming = true
            return true
        }
        guard go else { return }
        let resumed = s.resume(outcome)
        let next = resumed.response, error = resumed.error
        let finishedMeanwhile = state.withLock { st -> Bool in
            st.resuming = false
            if st.finished { return true }
            if case .suspended? = next.fault { return false }
            st.finished = true
            return false
        }
        if case .suspended(let n)? = next.fault {
            if finishedMeanwhile { n.drop() } else { wait(n) }
            return
        }
        if finishedMeanwhile { return }
        cancelDeadline?()
        if detached { return done(next, 0) }
        // Routed again by the engine (a budget or a condition that waited): recorded already.
        if let delay = resumed.journaledDelay { return done(next, delay) }
        let (response, delay) = engine.finishWaiting(exchange, next, logs: s.context.logs, error: error, started: started, rule: s.context.rule)
        done(response, delay)
    }

    /// Past the handler timeout: a 504 naming what the handler was waiting for.
    private func expire(_ limit: Int) {
        guard let (s, cancel) = claimEnd() else { return }
        cancel?()
        let waiting = s.map { "\($0)" } ?? "its code to run"
        let rule = exchange.ruleID.map { "rule '\($0)'" } ?? "the handler"
        let message = "\(rule) did not answer within --handler-timeout (\(limit) ms): it was waiting for \(waiting)"
        s?.drop()
        let answer = MockResponse.json(.object(["error": .string(message), "waiting_for": .string(waiting)]), status: 504)
        let (response, delay) = engine.finishWaiting(exchange, answer, logs: s?.context.logs ?? [], error: message, started: started, rule: s?.context.rule)
        done(response, delay)
    }

    /// The client left: the wait is cancelled and the handler let go.
    func cancel() {
        guard let (s, cancel) = claimEnd() else { return }
        cancelDeadline?()
        cancel?()
        s?.drop()
        let message = "the client left while the handler was waiting for \(s.map { "\($0)" } ?? "its code to run")"
        engine.outbox.release(exchange.request.id)   // webhooks it asked for still go
        _ = engine.finishWaiting(exchange, .text(message + "\n", status: 499), logs: s?.context.logs ?? [], error: message, started: started, rule: s?.context.rule)
    }

    /// Marks the run finished; what it was waiting for and the wait's cancel, or `nil` when it
    /// had finished already. While a resume runs, the resumer lets its next wait go.
    private func claimEnd() -> (Suspension?, (@Sendable () -> Void)?)? {
        state.withLock { st in
            guard !st.finished else { return nil }
            st.finished = true
            defer { st.current = nil; st.cancelWait = nil }
            return (st.current, st.cancelWait)
        }
    }
}

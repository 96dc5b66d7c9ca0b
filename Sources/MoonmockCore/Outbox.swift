import Foundation

/// Webhooks (`mock.webhook`) and later work (`mock.after`) of handlers: held until the answer
/// of their request has been written (``release(_:)``), then run in order of when they are due,
/// one after the other per request, each webhook retried on a connection error or a `5xx`.
/// Their outcomes go to the request's journal entry. ``whenIdle(timeout:_:)`` is what
/// `POST /__moonmock/webhooks/flush` waits with.
///
/// ```swift
/// engine.outbox.client = MyClient()
/// engine.outbox.hold(request.id, .webhook(OutboundRequest(method: "POST", url: hook), delay: 0, retries: 3, backoff: 200))
/// engine.outbox.release(request.id)   // after the answer went out
/// ```
public final class Outbox: Sendable {
    /// One piece of work of a request.
    public enum Job: Sendable {
        case webhook(OutboundRequest, delay: Double, retries: Int, backoff: Double)
        /// `mock.after(ms, fn)`: `run` calls `fn` and calls its argument when `fn` has ended.
        case after(delay: Double, run: @Sendable (@escaping @Sendable () -> Void) -> Void)

        var delay: Double {
            switch self {
            case .webhook(_, let delay, _, _): return delay
            case .after(let delay, _): return delay
            }
        }
    }

    private struct State {
        var held: [Int: [Job]] = [:]
        var pending = 0
        var sent = 0
        var failed = 0
        var idleWaiters: [@Sendable () -> Void] = []
        var client: (any OutboundClient)?
    }
    private let state = Locked(State())
    /// Whether any request holds work: one relaxed load for a door to ask after every answer.
    private let holding = AtomicInt(0)
    /// Where webhook outcomes are written (the engine's journal).
    private let journalRef = Locked<(journal: Journal, feed: EventFeed)?>(nil)

    public init() {}

    /// What webhooks (and the handlers' work after their answer) send with: the door's.
    public var client: (any OutboundClient)? {
        get { state.withLock { $0.client } }
        set { state.withLock { $0.client = newValue } }
    }

    func attach(_ journal: Journal, _ feed: EventFeed) { journalRef.withLock { $0 = (journal, feed) } }

    /// Whether some request holds work (cheap: a door asks after every answer).
    public var isHolding: Bool { holding.load(ordering: .relaxed) > 0 }

    /// Webhooks, later work, and flushes waiting: `pending` counts work not yet done.
    public var counts: (pending: Int, sent: Int, failed: Int) { state.withLock { ($0.pending, $0.sent, $0.failed) } }

    /// Keeps `job` of request `id` until ``release(_:)``.
    public func hold(_ id: Int, _ job: Job) {
        state.withLock { s in
            if s.held[id] == nil { holding.add(1, ordering: .relaxed) }
            s.held[id, default: []].append(job)
            s.pending += 1
        }
    }

    /// The answer of request `id` is out: its work starts (due times count from now).
    public func release(_ id: Int) {
        guard let jobs = state.withLock({ $0.held.removeValue(forKey: id) }) else { return }
        holding.subtract(1, ordering: .relaxed)
        // Sorted by delay (stable: equal delays in call order), each after the one before.
        let ordered = jobs.enumerated().sorted { ($0.element.delay, $0.offset) < ($1.element.delay, $1.offset) }.map(\.element)
        let start = DispatchTime.now().uptimeNanoseconds
        runChain(ordered[...], id: id, start: start)
    }

    /// Runs work now (work done outside a request's answer: inside a `mock.after` function).
    public func start(_ id: Int, _ job: Job) {
        state.withLock { $0.pending += 1 }
        runChain([job][...], id: id, start: DispatchTime.now().uptimeNanoseconds)
    }

    /// Calls `done(pending)` once nothing is pending (then with 0), or after `timeout` seconds.
    public func whenIdle(timeout: Double, _ done: @escaping @Sendable (Int) -> Void) {
        let fired = AtomicBool(false)
        let finish: @Sendable () -> Void = { [self] in
            guard fired.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
            done(state.withLock { $0.pending })
        }
        let idle = state.withLock { s -> Bool in
            if s.pending == 0 { return true }
            s.idleWaiters.append(finish)
            return false
        }
        if idle { return finish() }
        Scheduler.shared.after(timeout, finish)
    }

    private func runChain(_ jobs: ArraySlice<Job>, id: Int, start: UInt64) {
        guard let job = jobs.first else { return }
        let rest = jobs.dropFirst()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        let next: @Sendable () -> Void = { [self] in
            finished()
            runChain(rest, id: id, start: start)
        }
        Scheduler.shared.after(max(0, job.delay - elapsed) / 1000) { [self] in
            switch job {
            case .webhook(let request, _, let retries, let backoff):
                deliver(request, id: id, attempt: 1, retries: retries, backoff: backoff, began: Date().timeIntervalSince1970,
                        clock: DispatchTime.now().uptimeNanoseconds, then: next)
            case .after(_, let run):
                run(next)
            }
        }
    }

    private func finished(ok: Bool? = nil) {
        let waiters = state.withLock { s -> [@Sendable () -> Void] in
            s.pending -= 1
            guard s.pending == 0 else { return [] }
            defer { s.idleWaiters = [] }
            return s.idleWaiters
        }
        waiters.forEach { $0() }
    }

    /// One attempt; a connection error or a 5xx is tried again after `backoff` ms, doubling.
    private func deliver(_ request: OutboundRequest, id: Int, attempt: Int, retries: Int, backoff: Double, began: Double, clock: UInt64,
                         then next: @escaping @Sendable () -> Void) {
        guard let client else {
            record(OutboundCall(kind: "webhook", request: request, status: nil, error: "no outbound client in this door", durationMilliseconds: 0,
                                startedAt: began), id: id, ok: false)
            return next()
        }
        _ = client.send(request) { [self] result in
            let status: Int?, error: String?
            switch result {
            case .success(let response): (status, error) = (response.status, nil)
            case .failure(let failure): (status, error) = (nil, failure.description)
            }
            let retry = status.map { $0 >= 500 } ?? true
            if retry && attempt <= retries {
                Scheduler.shared.after(backoff * Double(1 << min(attempt - 1, 16)) / 1000) { [self] in
                    deliver(request, id: id, attempt: attempt + 1, retries: retries, backoff: backoff, began: began, clock: clock, then: next)
                }
                return
            }
            let ms = Double(DispatchTime.now().uptimeNanoseconds - clock) / 1e6
            record(OutboundCall(kind: "webhook", request: request, status: status, error: error, durationMilliseconds: ms,
                                attempts: attempt, startedAt: began), id: id, ok: !retry)
            next()
        }
    }

    private func record(_ call: OutboundCall, id: Int, ok: Bool) {
        state.withLock { s in if ok { s.sent += 1 } else { s.failed += 1 } }
        guard let (journal, feed) = journalRef.withLock({ $0 }) else { return }
        journal.recordOutbound(call, for: id)
        if feed.isWatched { feed.publish(.request(id: id)) }   // the dashboard shows the entry again, with it
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore

/// Handlers that wait, in-process: the engine drives the handler (its timers on the
/// scheduler, its calls through ``SessionOutbound``), resuming it on a global queue; the answer
/// comes back to where `startLoading` ran, as every later client call does.
extension MoonmockURLProtocol {
    func wait(_ exchange: Exchange, _ current: URLRequest, delayMilliseconds: Double, head: Bool, owner: Moonmock) {
        withPending { $0.requestID = exchange.request.id }
        let me = Unchecked(self)
        let route = later()
        let target = Unchecked(current)
        let handle = owner.engine.drive(exchange, client: owner.engine.outbox.client ?? SessionOutbound(),
                                        hop: { DispatchQueue.global().async(execute: $0) }) { response, extra in
            let total = delayMilliseconds + extra
            let answer = Unchecked(response)
            route.async {
                let this = me.value
                guard !this.withPending({ $0.stopped }) else { return }
                do {
                    let delivery = try Delivery(answer.value, for: target.value.url, head: head,
                                                date: owner.engine.environment.now() + total / 1000)
                    if total > 0 { this.schedule(after: total / 1000) { $0.send(delivery) } } else { this.send(delivery) }
                } catch {
                    this.fail(error)
                }
            }
        }
        let stopped = withPending { p -> Bool in
            if !p.stopped { p.waiting = handle }
            return p.stopped
        }
        if stopped { handle.cancel() }
    }

    /// Webhooks and `mock.after` work of the request answered go now: its answer is delivered
    /// (or the client left).
    func releaseHeldWork() {
        guard let id = withPending({ p in defer { p.requestID = nil }; return p.requestID }) else { return }
        guard let owner = Self.owner, owner.engine.outbox.isHolding else { return }
        owner.engine.outbox.release(id)
    }
}

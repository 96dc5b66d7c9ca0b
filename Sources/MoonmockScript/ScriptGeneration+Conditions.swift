import CLua
import Foundation
import LuaBridge
import MoonmockCore

/// `when(req)` conditions and `mock.sequence` positions that wait: a condition runs as a
/// coroutine like a handler, and one that waits (`mock.fetch`, `mock.sleep`, `mock.state` on a
/// shared store) hands the engine a ``ConditionWait``; the engine routes the request again once
/// it has decided. A sequence's position in the shared store is counted on the loop's channel.
extension ScriptGeneration {
    enum WhenStep {
        case decided(String?)
        case waiting(LuaThread, Suspension.Wait)
    }

    /// Runs a `when(req)` predicate. An error counts as "no match" and is given as the reason;
    /// a wait gives ``Predicate/waitMarker`` with the wait in ``PendingCondition``.
    func callWhen(_ ref: Int32, _ request: MockRequest, _ params: [String: String]) -> String? {
        // `when` runs before a rule is chosen; the probe context serves req.json and logging.
        let probe = RequestContext.probe(request: request, params: params, engine: engine)
        do {
            let step = try withVM(probe) { () throws -> WhenStep in
                let thread = vm.newThread()
                lua_rawgeti(thread.state, mm_registryindex(), lua_Integer(ref))
                pushRequest(probe, thread.stack)
                return try runWhen(thread, arguments: 1)
            }
            switch step {
            case .decided(let reason): return reason
            case .waiting(let thread, let wait):
                PendingCondition.put(conditionWait(thread, wait, probe))
                return Predicate.waitMarker
            }
        } catch {
            return "when(req) failed: \(message(error))"
        }
    }

    /// Under the VM's lock: resumes the condition's thread until it decides or waits.
    private func runWhen(_ thread: LuaThread, arguments: Int32) throws -> WhenStep {
        switch try resumeWaitable(thread, arguments: arguments) {
        case .finished(let count):
            let passed = count > 0 && lua_toboolean(thread.state, 1) != 0
            let wasNil = count == 0 || lua_type(thread.state, 1) <= LUA_TNIL
            vm.recycle(thread)
            return .decided(passed ? nil : "when(req) returned \(wasNil ? "nil" : "false")")
        case .waiting(let wait): return .waiting(thread, wait)
        case .idle: return .decided("when(req) yielded without waiting for anything")
        }
    }

    private func conditionWait(_ thread: LuaThread, _ wait: Suspension.Wait, _ probe: RequestContext) -> ConditionWait {
        let settled = Locked(false)
        return ConditionWait(wait: wait, keep: [self], resume: { [self] outcome in
            settled.withLock { $0 = true }
            do {
                let step = try withVM(probe) { () throws -> WhenStep in
                    try runWhen(thread, arguments: push(outcome, on: thread))
                }
                switch step {
                case .decided(nil): return .passed
                case .decided(let reason?): return .failed(reason)
                case .waiting(let next, let wait): return .waiting(conditionWait(next, wait, probe))
                }
            } catch {
                return .failed("when(req) failed: \(message(error))")
            }
        }, drop: { [self] in
            guard !settled.withLock({ s in defer { s = true }; return s }) else { return }
            release(thread: thread)
        })
    }

    /// With `--store` on a loop with its own store connection: the sequence's next position is
    /// counted there and the request waits for it (`nil`: count it as before).
    func sequenceWait(_ id: Int, _ items: [ResponseSpec], _ context: RequestContext) -> MockResponse? {
        guard let channel = StoreChannels.current, let counter = sequenceHits.sharedCounter(id) else { return nil }
        let bound = LoopBound(channel)
        let wait = Suspension.Wait.store("the position of a mock.sequence in the shared store") { bound.value.submit(.count(counter, by: 1), $0) }
        var keep: [AnyObject] = [self]
        if let rule = context.rule { keep.append(rule) }
        let suspension = Suspension(wait: wait, context: context, keep: keep, resume: { [self] outcome in
            guard case .stored(.value(.integer(let n)?)) = outcome else {
                let reason: String
                if case .failed(let text) = outcome { reason = text } else { reason = "the store did not answer a count" }
                return Suspension.Resumed(StoreUnavailable.response("rule '\(context.rule?.id ?? "?")': \(reason)"), error: reason)
            }
            do {
                return Suspension.Resumed(try items[max(0, min(Int(n) - 1, items.count - 1))].realize(context, self).0)
            } catch {
                let text = String(describing: error)
                return Suspension.Resumed(.text("handler error in rule '\(context.rule?.id ?? "?")': \(text)\n", status: 500), error: text)
            }
        }, drop: {})
        return .fault(.suspended(suspension))
    }
}

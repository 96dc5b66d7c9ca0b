import CLua
import Foundation
import LuaBridge
import MoonmockCore

/// Handlers run as coroutines on their VM: a handler that waits (`mock.fetch`, `mock.sleep`)
/// yields, its VM serves other requests meanwhile, and the door resumes it on the same VM when
/// the wait is over (``Engine/drive(_:client:hop:done:)``). Its thread and its rule are kept
/// alive while it waits; a reload lets it finish on its own generation.
extension ScriptGeneration {
    enum Step {
        case answered(ResponseSpec?)
        case waiting(LuaThread, Suspension.Wait)
    }

    /// Runs a handler function; returns its response (a suspended one when it waits), or `nil`
    /// when it returned nil/false.
    func callHandler(_ ref: Int32, _ context: RequestContext, _ defaults: RuleDefaults) throws -> (MockResponse, explicitStatus: Bool)? {
        let step = try withVM(context) { () throws -> Step in
            let thread = vm.newThread()
            lua_rawgeti(thread.state, mm_registryindex(), lua_Integer(ref))
            pushRequest(context, thread.stack)
            return try run(thread, arguments: 1, context)
        }
        switch consume step {
        case .answered(.some(let spec)): return try spec.realize(context, self)
        case .answered(.none): return nil
        case .waiting(let thread, let wait): return (suspended(thread, wait, context, defaults), true)
        }
    }

    /// How a resume of waitable code (a handler, a condition, a generator, a `mock.after`
    /// function) ended: its function returned `count` results, it waits, or it yielded without
    /// waiting for anything (its thread is released then).
    enum Resumption {
        case finished(Int32)
        case waiting(Suspension.Wait)
        case idle
    }

    /// Under the VM's lock: resumes `thread` as the code that may wait. A thread that fails, or
    /// yields without a wait, is released.
    func resumeWaitable(_ thread: LuaThread, arguments: Int32) throws(LuaError) -> Resumption {
        handlerThread = thread.state
        pendingWait = nil
        defer { handlerThread = nil; relayThread = nil }
        let outcome: LuaResume
        do { outcome = try vm.resume(thread, arguments: arguments) } catch { vm.release(thread); throw error }
        switch outcome {
        case .finished(let count): return .finished(count)
        case .yielded:
            lua_settop(thread.state, 0)
            guard let wait = pendingWait else { vm.release(thread); return .idle }
            return .waiting(wait)
        }
    }

    /// Under the VM's lock: resumes `thread` until it returns (its answer read) or waits.
    private func run(_ thread: LuaThread, arguments: Int32, _ context: RequestContext) throws -> Step {
        let resumption: Resumption
        do { resumption = try resumeWaitable(thread, arguments: arguments) } catch { throw failure(error, context) }
        switch resumption {
        case .finished(let count):
            let stack = vm.stack
            let top = stack.top
            defer { stack.top = top }
            if count == 0 {
                stack.pushNil()
            } else {
                lua_settop(thread.state, 1)
                lua_xmove(thread.state, vm.state, 1)
            }
            vm.recycle(thread)
            do {
                return .answered(try responseSpec(at: -1, stack))
            } catch {
                throw failure(error, context)
            }
        case .waiting(let wait):
            return .waiting(thread, wait)
        case .idle:
            throw HandlerFailure(message: "\(context.rule?.location.map { $0 + ": " } ?? "")the handler yielded without waiting for anything "
                                 + "(coroutine.yield in a handler: wait with mock.sleep or mock.fetch)")
        }
    }

    private func failure(_ error: any Error, _ context: RequestContext) -> HandlerFailure {
        if let error = error as? LuaError, error.traceback != nil { return HandlerFailure(message: error.message, detail: error.traceback) }
        return HandlerFailure(message: "\(context.rule?.location.map { $0 + ": " } ?? "")\(message(error))")
    }

    /// The response that stands for a waiting handler: its fault carries how to go on.
    private func suspended(_ thread: LuaThread, _ wait: Suspension.Wait, _ context: RequestContext, _ defaults: RuleDefaults) -> MockResponse {
        let ruleID = context.rule?.id ?? "?"
        var keep: [AnyObject] = [self]
        if let rule = context.rule { keep.append(rule) }
        let released = Locked(false)
        let suspension = Suspension(wait: wait, context: context, keep: keep, resume: { [self] outcome in
            released.withLock { $0 = true }
            do {
                let step = try withVM(context) { () throws -> Step in
                    let count = push(outcome, on: thread)
                    return try run(thread, arguments: count, context)
                }
                switch step {
                case .answered(.some(let spec)):
                    let (response, explicit) = try spec.realize(context, self)
                    return Suspension.Resumed(defaults.apply(to: response, explicitStatus: explicit))
                case .answered(.none):
                    let message = "handler of rule '\(ruleID)' returned nil after waiting: a handler that waited must answer"
                    return Suspension.Resumed(.text(message + "\n", status: 500), error: message)
                case .waiting(let next, let wait):
                    return Suspension.Resumed(suspended(next, wait, context, defaults))
                }
            } catch {
                let text = String(describing: error)
                // The shared store was away: a 503 that says so, as before a wait.
                if text.contains(StoreUnavailable.marker) {
                    return Suspension.Resumed(StoreUnavailable.response("rule '\(ruleID)': " + text.split(separator: "\n")[0]), error: text)
                }
                return Suspension.Resumed(.text("handler error in rule '\(ruleID)': \(text)\n", status: 500), error: text)
            }
        }, drop: { [self] in
            guard !released.withLock({ r in defer { r = true }; return r }) else { return }
            // Later, on another thread: the caller may hold this VM's lock.
            DispatchQueue.global().async { [self] in withVM(nil) { vm.release(thread) } }
        })
        return .fault(.suspended(suspension))
    }

    /// Pushes what the wait gave onto the thread: nothing for a sleep; for a fetch the
    /// response table, or nil and the reason.
    func push(_ outcome: Suspension.Outcome, on thread: LuaThread) -> Int32 {
        let stack = thread.stack
        _ = stack.ensure(6)
        switch outcome {
        case .slept:
            return 0
        case .stored(let result):
            switch result {
            case .value(let value): pushState(value, stack); return 1
            case .flag(let flag): stack.push(flag); return 1
            case .none: return 0
            }
        case .failed(let reason):
            stack.pushNil()
            stack.push(reason)
            return 2
        case .fetched(let response, let milliseconds):
            stack.newTable(hash: 5)
            let t = stack.top
            stack.push(response.status)
            stack.setField(t, "status")
            stack.newTable()
            var seen: [String: String] = [:]
            for field in response.headers {
                let name = field.name.lowercased()
                seen[name] = seen[name].map { $0 + ", " + field.value } ?? field.value
            }
            for (name, value) in seen {
                stack.push(value)
                stack.setField(-2, name)
            }
            stack.setField(t, "headers")
            stack.push(bytes: response.body)
            stack.setField(t, "body")
            stack.push(milliseconds)
            stack.setField(t, "duration_ms")
            let type = seen["content-type"] ?? ""
            let first = response.body.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
            if type.contains("json") || first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
                if pushDecodedJSON(response.body, stack) { stack.setField(t, "json") }
            }
            return 1
        }
    }
}

import CLua
import Foundation
import LuaBridge
import MoonmockCore

/// The host side of `mock.sleep`, `mock.fetch`, `mock.proxy{transform}`, `mock.webhook` and
/// `mock.after`: a wait is noted for the running handler, whose prelude wrapper then yields.
extension ScriptGeneration {
    /// Whether the Lua code calling now may wait: the running handler's own coroutine, or a
    /// stream generator it resumes (which relays the wait).
    func mayWait(_ stack: LuaStack) -> Bool {
        guard let thread = handlerThread else { return false }
        return stack.L == thread || stack.L == relayThread
    }

    func installOutboundHost(_ H: Int32) {
        vm.setFunction("relay", in: H) { [unowned self] stack in
            relayThread = stack.isNil(at: 1) ? nil : lua_tothread(stack.L, 1)
            return 0
        }
        vm.setFunction("wait_sleep", in: H) { [unowned self] stack in
            try self.noteWait(stack, "mock.sleep") { .sleep(milliseconds: max(0, stack.number(at: 1) ?? 0)) }
        }
        vm.setFunction("wait_fetch", in: H) { [unowned self] stack in
            try self.noteWait(stack, "mock.fetch") { .fetch(try self.outboundRequest(stack, "mock.fetch"), kind: "fetch") }
        }
        vm.setFunction("wait_proxy", in: H) { [unowned self] stack in
            try self.noteWait(stack, "mock.proxy") {
                guard let request = self.current?.request else { throw LuaError.host("no request to forward") }
                let target = try self.proxyTarget(1, stack)
                return .fetch(OutboundRequest(method: request.method, url: target.url(for: request), headers: target.forwardedHeaders(request),
                                              body: request.body, timeoutMilliseconds: target.timeoutMilliseconds, insecure: target.insecure),
                              kind: "proxy")
            }
        }
        vm.setFunction("webhook", in: H) { [unowned self] stack in
            guard let context = self.current, !self.loading else {
                stack.pushNil(); stack.push("webhooks are sent from handlers (and mock.after functions), not while the script loads")
                return 2
            }
            var request = try self.outboundRequest(stack, "mock.webhook")
            request.trace = context.request.span.map { OutboundTrace(parent: $0.context, kind: "webhook") }
            let job = Outbox.Job.webhook(request, delay: max(0, stack.number(at: 8) ?? 0), retries: max(0, Int(stack.integer(at: 9) ?? 3)),
                                         backoff: max(0, stack.number(at: 10) ?? 200))
            // Inside a mock.after function the answer is long gone: it goes now.
            if self.runningAfter { self.engine.outbox.start(context.request.id, job) } else { self.engine.outbox.hold(context.request.id, job) }
            stack.push(true)
            return 1
        }
        vm.setFunction("after", in: H) { [unowned self] stack in
            guard let context = self.current, !self.loading else {
                stack.pushNil(); stack.push("mock.after runs from handlers, not while the script loads")
                return 2
            }
            let delay = max(0, stack.number(at: 1) ?? 0)
            lua_pushvalue(stack.L, 2)
            let ref = luaL_ref(stack.L, mm_registryindex())
            let job = Outbox.Job.after(delay: delay) { [self] done in self.runAfter(ref, context, done) }
            if self.runningAfter { self.engine.outbox.start(context.request.id, job) } else { self.engine.outbox.hold(context.request.id, job) }
            stack.push(true)
            return 1
        }
    }

    /// Notes what the running handler waits for (its prelude wrapper yields next); a wait
    /// outside a handler's own coroutine is an error that says where waiting works.
    private func noteWait(_ stack: LuaStack, _ what: String, _ make: () throws -> Suspension.Wait) throws -> Int32 {
        guard mayWait(stack) else {
            stack.pushNil()
            stack.push(loading ? "\(what) waits only in handlers, not while the script loads"
                       : handlerThread == nil ? "\(what) waits only in handlers, conditions, stream generators and mock.after functions"
                       : "\(what) waits only in the handler's own code (or a stream generator), not inside a coroutine the handler made")
            return 2
        }
        pendingWait = try make()
        stack.push(true)
        return 1
    }

    /// Arguments 1...7 of `H.wait_fetch` / `H.webhook`: url, method, headers, body, timeout
    /// (ms), insecure, ca.
    private func outboundRequest(_ stack: LuaStack, _ what: String) throws -> OutboundRequest {
        let url = try stack.checkString(1, "\(what) url")
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https", parsed.host != nil else {
            throw LuaError.host("\(what): the url must be http:// or https:// and name a host, got '\(url)'")
        }
        var headers = HTTPHeaders()
        if stack.type(at: 3) == LUA_TTABLE {
            for (name, value) in try stringPairs(at: 3, stack, "\(what) headers") { headers.add(name, value) }
        }
        var ca = stack.string(at: 7)
        if let path = ca, !path.hasPrefix("/") { ca = baseDirectory.appendingPathComponent(path).path }
        return OutboundRequest(method: (stack.string(at: 2) ?? "GET").uppercased(), url: url, headers: headers, body: stack.bytes(at: 4) ?? [],
                               timeoutMilliseconds: Int((stack.number(at: 5) ?? 10_000).rounded(.up)), insecure: stack.bool(at: 6), caFile: ca)
    }

    /// Runs a `mock.after` function (registry `ref`) as a coroutine of this VM; `done` when it
    /// has ended, after any waits of its own.
    func runAfter(_ ref: Int32, _ context: RequestContext, _ done: @escaping @Sendable () -> Void) {
        let step: Step? = withVM(context) {
            runningAfter = true
            defer { runningAfter = false }
            let thread = vm.newThread()
            lua_rawgeti(thread.state, mm_registryindex(), lua_Integer(ref))
            luaL_unref(vm.state, mm_registryindex(), ref)
            do {
                return try runAfterStep(thread, arguments: 0, context)
            } catch {
                options.log?("mock.after: \(error)")
                context.log("mock.after failed: \(error)")
                return nil
            }
        }
        guard case .waiting(let thread, let wait)? = step else { return done() }
        let suspension = afterSuspension(thread, wait, context)
        engine.driveDetached(suspension, client: engine.outbox.client) { done() }
    }

    private func runAfterStep(_ thread: LuaThread, arguments: Int32, _ context: RequestContext) throws -> Step {
        switch try resumeWaitable(thread, arguments: arguments) {
        case .finished:
            vm.recycle(thread)
            return .answered(nil)
        case .waiting(let wait): return .waiting(thread, wait)
        case .idle: throw LuaError.host("the mock.after function yielded without waiting for anything")
        }
    }

    /// A waiting `mock.after` function, resumed like a handler (its answer is not used).
    private func afterSuspension(_ thread: LuaThread, _ wait: Suspension.Wait, _ context: RequestContext) -> Suspension {
        Suspension(wait: wait, context: context, keep: [self], resume: { [self] outcome in
            do {
                let step = try withVM(context) { () throws -> Step in
                    runningAfter = true
                    defer { runningAfter = false }
                    return try runAfterStep(thread, arguments: push(outcome, on: thread), context)
                }
                if case .waiting(let next, let wait) = step { return Suspension.Resumed(.fault(.suspended(afterSuspension(next, wait, context)))) }
                return Suspension.Resumed(MockResponse())
            } catch {
                options.log?("mock.after: \(error)")
                return Suspension.Resumed(MockResponse(status: 500), error: String(describing: error))
            }
        }, drop: { [self] in DispatchQueue.global().async { [self] in withVM(nil) { vm.release(thread) } } })
    }
}

import CLua
import CWatchdog

/// A Lua thread (a coroutine's state) of one VM, anchored in its registry.
public struct LuaThread: @unchecked Sendable {
    // @unchecked: a raw `lua_State *`, used only under its VM's lock.
    public let state: OpaquePointer
    let ref: Int32
    /// The stack view of the thread.
    public var stack: LuaStack { LuaStack(state) }
}

/// How a ``LuaVM/resume(_:arguments:)`` ended.
public enum LuaResume: Equatable {
    /// The function returned: its `results` values are on the thread's stack.
    case finished(results: Int32)
    /// The function yielded `values` values (on the thread's stack); resume it again later.
    case yielded(values: Int32)
}

/// Functions run as coroutines, so that they can wait: a resume runs until the function
/// returns or yields, with the instruction budget and memory ceiling of a call, counted per
/// resume. A thread that ended cleanly is reused; one that failed is let go.
///
/// ```swift
/// let t = vm.newThread()
/// lua_getglobal(t.state, "handler"); t.stack.push(1)
/// if case .yielded = try vm.resume(t, arguments: 1) { /* later: push values, resume again */ }
/// ```
extension LuaVM {
    /// A thread with an empty stack.
    public func newThread() -> LuaThread {
        if let kept = idleThreads.popLast() { return kept }
        let co = lua_newthread(state)!
        let ref = luaL_ref(state, mm_registryindex())
        return LuaThread(state: co, ref: ref)
    }

    /// Gives back a thread whose function finished (its stack is emptied); a few are kept.
    public func recycle(_ thread: LuaThread) {
        lua_settop(thread.state, 0)
        if idleThreads.count < 64 { idleThreads.append(thread) } else { release(thread) }
    }

    /// Lets a thread go (it failed, or its coroutine is abandoned while suspended).
    public func release(_ thread: LuaThread) {
        luaL_unref(state, mm_registryindex(), thread.ref)
    }

    /// Runs or resumes `thread` with the `arguments` values on top of its stack (for a start,
    /// the function below them). Throws like ``call(arguments:results:)``; the thread is then
    /// dead and should be released.
    public func resume(_ thread: LuaThread, arguments: Int32) throws(LuaError) -> LuaResume {
        precondition(!calling, "LuaVM.resume is not reentrant")
        let co = thread.state
        calling = true
        allocState.pointee.over_limit = 0
        allocState.pointee.enforcing = limits.memoryBytes > 0 ? 1 : 0
        let budget = Int32(clamping: limits.instructions)
        mm_budget_start(allocState, budget)
        var count: Int32 = 0
        let rc: Int32
        if budget > 0, let watchSlot {
            // As for a call: uncounted until the watchdog sees the resume still running, then
            // armed on the coroutine (the state that runs).
            mm_watch_target(watchSlot, UnsafeMutableRawPointer(co))
            mm_watch_begin(watchSlot, budget)
            rc = mm_resume(co, state, arguments, &count)
            mm_watch_end(watchSlot)
            mm_watch_target(watchSlot, UnsafeMutableRawPointer(state))
            if lua_gethookmask(co) != 0 { mm_set_budget(co, 0) }
        } else {
            mm_set_budget(co, budget)
            rc = mm_resume(co, state, arguments, &count)
            mm_set_budget(co, 0)
        }
        if lua_gethookmask(state) != 0 { mm_set_budget(state, 0) }
        allocState.pointee.budget = 0
        allocState.pointee.enforcing = 0
        calling = false
        if rc == LUA_OK { return .finished(results: count) }
        if rc == LUA_YIELD { return .yielded(values: count) }

        let raw: String
        if mm_coroutine_traceback(state, co) == LUA_OK {
            raw = stack.string(at: -1) ?? "(error)"
        } else {
            raw = LuaStack(co).string(at: -1) ?? "(error object is not a string)"
        }
        mm_pop(state, 1)
        let (message, traceback) = Self.split(raw)
        if rc == LUA_ERRMEM || allocState.pointee.over_limit != 0 {
            _ = mm_gc_collect(state)
            throw LuaError.memory("memory limit exceeded (\(limits.memoryBytes >> 20) MiB): \(message)")
        }
        if allocState.pointee.budget_hit != 0 { throw LuaError.budget(message) }
        throw LuaError.runtime(message, traceback: traceback)
    }
}

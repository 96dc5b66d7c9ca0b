import CLua
import CWatchdog

/// Owns one Lua 5.4 state: its allocator with a memory ceiling, an instruction budget per
/// call, a sandboxed global table and the Swift functions exposed to it.
///
/// A `LuaVM` must be used by one thread at a time; callers that share one across threads
/// guard it with a lock. It is closed when the object is released.
///
/// ```swift
/// let vm = try LuaVM()
/// vm.setGlobal("twice") { stack in
///     stack.push(try stack.checkInteger(1) * 2); return 1
/// }
/// let result = try vm.evaluate("return twice(21)")   // [.integer(42)]
/// ```
public final class LuaVM {
    /// The raw `lua_State *`, for code that talks to the C API directly.
    public let state: OpaquePointer
    /// The stack view of ``state``, with typed helpers.
    public var stack: LuaStack { LuaStack(state) }
    /// Limits applied to every ``call(arguments:results:)``.
    public var limits: LuaLimits {
        didSet { allocState.pointee.limit = limits.memoryBytes > 0 ? size_t(limits.memoryBytes) : 0 }
    }
    /// Whether the VM runs with the sandbox of ``LuaVM/init(limits:sandboxed:)``.
    public let sandboxed: Bool

    let allocState: UnsafeMutablePointer<mm_alloc_state>
    var hostFunctions: [HostFunction] = []
    var calling = false
    /// Threads whose coroutine ended cleanly, kept for the next ``newThread()``.
    var idleThreads: [LuaThread] = []
    /// The watchdog's slot for this VM; `nil` when every call counts its instructions from the
    /// start (the watchdog cannot run in this process, or a test asked for it).
    var watchSlot: OpaquePointer?

    /// Creates a VM with the standard libraries; when `sandboxed`, the dangerous parts are
    /// removed: `io`, `debug`, `package`, `dofile`, `loadfile`, `os.execute` and the other
    /// process-level `os` calls, `string.dump`, binary chunks in `load`; the string
    /// metatable is locked.
    public init(limits: LuaLimits = LuaLimits(), sandboxed: Bool = true) throws {
        guard let created = mm_alloc_state_create() else { throw LuaError.memory("cannot create a Lua state") }
        allocState = created
        guard let L = mm_newstate(allocState) else {
            mm_alloc_state_destroy(allocState)
            throw LuaError.memory("cannot create a Lua state")
        }
        state = L
        self.limits = limits
        self.sandboxed = sandboxed
        allocState.pointee.limit = limits.memoryBytes > 0 ? size_t(limits.memoryBytes) : 0
        mm_extraspace(L).pointee = Unmanaged.passUnretained(self).toOpaque()
        mm_openlibs(L)
        mm_count_coroutines(L)
        mm_gc_generational(L)
        watchSlot = mm_watch_register(UnsafeMutableRawPointer(L), mm_budget_arm)
        try installSandbox()
    }

    deinit {
        if let watchSlot { mm_watch_unregister(watchSlot) }
        lua_close(state)
        mm_alloc_state_destroy(allocState)
    }

    /// Leaves the watchdog: from now on every call counts its instructions from the start.
    /// For tests of that path, which is what runs when the watchdog cannot.
    func countEveryInstruction() {
        if let watchSlot { mm_watch_unregister(watchSlot) }
        watchSlot = nil
    }

    /// The Lua release this VM runs, e.g. `"Lua 5.4.4"`.
    public static var luaRelease: String { String(cString: mm_release()) }

    /// Bytes the VM's heap uses now.
    public var memoryInUse: Int { Int(allocState.pointee.used) }

    /// Compiles `code` (text only; binary chunks are refused) and leaves the function on the stack.
    ///
    /// `chunkName` follows Lua's convention: `"@mocks.lua"` makes errors read `mocks.lua:LINE:`.
    public func load(_ code: [UInt8], chunkName: String) throws(LuaError) {
        let rc = code.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buf.count, 1)) {
                mm_loadtext(state, $0, buf.count, chunkName)
            }
        }
        if rc != LUA_OK {
            let message = stack.string(at: -1) ?? "cannot load \(chunkName)"
            mm_pop(state, 1)
            throw rc == LUA_ERRMEM ? LuaError.memory(message) : LuaError.syntax(message)
        }
    }

    /// Compiles a Swift string; see ``load(_:chunkName:)-([UInt8],_)``.
    public func load(_ code: String, chunkName: String) throws(LuaError) {
        try load(Array(code.utf8), chunkName: chunkName)
    }

    /// Calls the function below `arguments` values on the stack in protected mode, with a
    /// traceback handler, the instruction budget and the memory ceiling. Leaves `results`
    /// values (or all of them with `LUA_MULTRET`) on the stack.
    public func call(arguments: Int32, results: Int32) throws(LuaError) {
        precondition(!calling, "LuaVM.call is not reentrant")
        let L = state
        let base = lua_gettop(L) - arguments
        lua_pushcclosure(L, mm_traceback, 0)
        mm_insert(L, base)
        calling = true
        allocState.pointee.over_limit = 0
        allocState.pointee.enforcing = limits.memoryBytes > 0 ? 1 : 0
        let budget = Int32(clamping: limits.instructions)
        mm_budget_start(allocState, budget)
        let rc: Int32
        if budget > 0, let watchSlot {
            // Uncounted until the watchdog sees the call still running a tick later; it then
            // arms the count hook from a signal handler on this thread. Disarmed afterwards,
            // also when the signal came just as the call ended.
            mm_watch_begin(watchSlot, budget)
            rc = mm_pcall(L, arguments, results, base)
            mm_watch_end(watchSlot)
            if lua_gethookmask(L) != 0 { mm_set_budget(L, 0) }
        } else {
            mm_set_budget(L, budget)
            rc = mm_pcall(L, arguments, results, base)
            mm_set_budget(L, 0)
        }
        allocState.pointee.budget = 0
        allocState.pointee.enforcing = 0
        calling = false
        mm_remove(L, base)
        guard rc != LUA_OK else { return }

        let raw = stack.string(at: -1) ?? "(error object is not a string)"
        mm_pop(L, 1)
        let (message, traceback) = Self.split(raw)
        if rc == LUA_ERRMEM || allocState.pointee.over_limit != 0 {
            _ = mm_gc_collect(L)
            throw LuaError.memory("memory limit exceeded (\(limits.memoryBytes >> 20) MiB): \(message)")
        }
        if allocState.pointee.budget_hit != 0 {
            throw LuaError.budget(message)
        }
        throw LuaError.runtime(message, traceback: traceback)
    }

    /// Loads and runs `code`, returning what it returns as Swift values.
    ///
    /// ```swift
    /// try vm.evaluate("return 1 + 1")   // [.integer(2)]
    /// ```
    @discardableResult
    public func evaluate(_ code: String, chunkName: String = "=eval") throws(LuaError) -> [LuaValue] {
        let top = lua_gettop(state)
        try load(code, chunkName: chunkName)
        try call(arguments: 0, results: LUA_MULTRET)
        let count = lua_gettop(state) - top
        var values: [LuaValue] = []
        for i in 0..<count { values.append(stack.value(at: top + 1 + i)) }
        lua_settop(state, top)
        return values
    }

    /// Runs a full garbage collection.
    public func collectGarbage() { _ = mm_gc_collect(state) }

    static func split(_ raw: String) -> (String, String?) {
        let marker = Array("\nstack traceback:".utf8)
        let bytes = Array(raw.utf8)
        guard bytes.count >= marker.count else { return (raw, nil) }
        for start in 0...(bytes.count - marker.count) where bytes[start..<start + marker.count].elementsEqual(marker) {
            return (String(decoding: bytes[..<start], as: UTF8.self), String(decoding: bytes[(start + 1)...], as: UTF8.self))
        }
        return (raw, nil)
    }
}

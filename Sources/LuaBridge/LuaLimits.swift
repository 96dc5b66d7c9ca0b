/// Resource limits applied to one ``LuaVM``.
///
/// ```swift
/// let vm = try LuaVM(limits: LuaLimits(instructions: 1_000_000, memoryBytes: 32 << 20))
/// ```
public struct LuaLimits: Sendable, Equatable {
    /// Lua VM instructions one protected call may execute; `0` means unlimited.
    ///
    /// The budget is shared by the call and the coroutines it resumes. A call is not counted
    /// while it is short: a watchdog thread arms the count once the call has run for 10–20 ms
    /// (see `mm_watch_grace_ms`), because counting makes Lua stop at every instruction and run
    /// about 2.5 times slower. So a runaway call stops after its grace plus `instructions`
    /// counted instructions; a call that finishes sooner is never stopped. Coroutines made
    /// during a call are counted from their first instruction. Where the watchdog cannot run
    /// (its signal, `SIGURG`, has a handler of the host's), every call is counted from the start.
    public var instructions: Int
    /// Ceiling for the VM's heap in bytes; `0` means unlimited.
    public var memoryBytes: Int

    public init(instructions: Int = 20_000_000, memoryBytes: Int = 64 << 20) {
        self.instructions = instructions
        self.memoryBytes = memoryBytes
    }

    /// No budget and no ceiling: for trusted code only.
    public static let unlimited = LuaLimits(instructions: 0, memoryBytes: 0)
}

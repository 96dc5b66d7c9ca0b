/// Resource limits applied to one ``LuaVM``.
///
/// ```swift
/// let vm = try LuaVM(limits: LuaLimits(instructions: 1_000_000, memoryBytes: 32 << 20))
/// ```
public struct LuaLimits: Sendable, Equatable {
    /// Lua VM instructions one protected call may execute; `0` means unlimited.
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

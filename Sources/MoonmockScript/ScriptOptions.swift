#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LuaBridge

/// How a script is loaded.
///
/// ```swift
/// var options = ScriptOptions()
/// options.libraryPaths = ["shared/mocks"]
/// options.limits = LuaLimits(instructions: 5_000_000, memoryBytes: 32 << 20)
/// ```
public struct ScriptOptions: Sendable {
    /// Folders searched by `require` after the script's own folder (`--lib`, `MOONMOCK_PATH`).
    public var libraryPaths: [String]
    /// Lifts the sandbox and folder confinement: for trusted local scripts only (`--unsafe`).
    public var unsafe: Bool
    /// Instruction budget per handler call and memory ceiling per VM.
    public var limits: LuaLimits
    /// The host log: receives every `print` / `mock.log` line, while the script loads and while
    /// it handles requests (those lines also go to the request's journal entry).
    public var log: (@Sendable (String) -> Void)?

    public init(libraryPaths: [String] = ScriptOptions.environmentLibraryPaths(), unsafe: Bool = false,
                limits: LuaLimits = LuaLimits(), log: (@Sendable (String) -> Void)? = nil) {
        self.libraryPaths = libraryPaths
        self.unsafe = unsafe
        self.limits = limits
        self.log = log
    }

    /// The folders of `MOONMOCK_PATH` (colon-separated).
    public static func environmentLibraryPaths() -> [String] {
        guard let raw = getenv("MOONMOCK_PATH") else { return [] }
        return String(cString: raw).split(separator: ":").map(String.init)
    }
}

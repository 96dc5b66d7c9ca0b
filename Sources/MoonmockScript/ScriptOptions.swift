#if canImport(Glibc)
import Glibc
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
    /// Receives `print` / `mock.log` lines written while the script loads (not during requests:
    /// those go to the journal entry).
    public var loadLog: (@Sendable (String) -> Void)?

    public init(libraryPaths: [String] = ScriptOptions.environmentLibraryPaths(), unsafe: Bool = false,
                limits: LuaLimits = LuaLimits(), loadLog: (@Sendable (String) -> Void)? = nil) {
        self.libraryPaths = libraryPaths
        self.unsafe = unsafe
        self.limits = limits
        self.loadLog = loadLog
    }

    /// The folders of `MOONMOCK_PATH` (colon-separated).
    public static func environmentLibraryPaths() -> [String] {
        guard let raw = getenv("MOONMOCK_PATH") else { return [] }
        return String(cString: raw).split(separator: ":").map(String.init)
    }
}

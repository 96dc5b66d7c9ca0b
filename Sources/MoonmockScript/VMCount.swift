/// How many Lua VMs run a script (`moonmock serve --vms`).
///
/// ```swift
/// try engine.loadScript(file: "mocks.lua", vms: .automatic(max: 3))   // 3, or 1 with a reason
/// try engine.loadScript(file: "mocks.lua", vms: .exactly(2))          // Lua locals per VM
/// ```
public enum VMCount: Sendable, Equatable, CustomStringConvertible {
    /// This many. With more than one, Lua locals and globals are per VM.
    case exactly(Int)
    /// Up to `max`, when the script's per-request code cannot tell its VMs apart
    /// (``ScriptGeneration/checkSharing()``); one otherwise.
    case automatic(max: Int)

    /// The most VMs this allows.
    public var most: Int {
        switch self {
        case .exactly(let n), .automatic(max: let n): max(1, n)
        }
    }

    public var description: String {
        switch self {
        case .exactly(let n): "\(n)"
        case .automatic(let n): "auto (up to \(n))"
        }
    }
}

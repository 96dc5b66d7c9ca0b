/// An error raised by Lua code or by the bridge itself.
///
/// Like Hummingbird's errors, a public struct over a private enum, so new cases can be added
/// without breaking callers, and a `description` that is precise enough to print as is.
///
/// ```swift
/// do { try vm.run("error('boom')", name: "@mocks.lua") }
/// catch let error as LuaError { print(error) }   // mocks.lua:1: boom
/// ```
public struct LuaError: Error, CustomStringConvertible, Sendable, Equatable {
    private enum Kind: Equatable, Sendable {
        case syntax
        case runtime
        case memory
        case budget
        case host
    }

    private let kind: Kind
    /// The message, usually `chunk:line: text`.
    public let message: String
    /// The Lua traceback when one was captured (runtime errors), else `nil`.
    public let traceback: String?

    private init(_ kind: Kind, _ message: String, traceback: String? = nil) {
        self.kind = kind
        self.message = message
        self.traceback = traceback
    }

    /// A chunk failed to compile.
    public static func syntax(_ message: String) -> LuaError { LuaError(.syntax, message) }
    /// Lua code raised an error.
    public static func runtime(_ message: String, traceback: String? = nil) -> LuaError {
        LuaError(.runtime, message, traceback: traceback)
    }
    /// The VM hit its memory ceiling.
    public static func memory(_ message: String) -> LuaError { LuaError(.memory, message) }
    /// The call ran out of its instruction budget.
    public static func budget(_ message: String) -> LuaError { LuaError(.budget, message) }
    /// A Swift function called from Lua failed; the message becomes the Lua error.
    public static func host(_ message: String) -> LuaError { LuaError(.host, message) }

    public var isSyntaxError: Bool { kind == .syntax }
    public var isMemoryError: Bool { kind == .memory }
    public var isBudgetError: Bool { kind == .budget }

    public var description: String { message }

    /// Message followed by the traceback, as shown in a 500 body.
    public var fullDescription: String {
        guard let traceback, !traceback.isEmpty else { return message }
        return message + "\n" + traceback
    }
}

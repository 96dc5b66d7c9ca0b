/// A script that could not be loaded, or a file it needs that could not be read.
///
/// `description` is what a script author acts on: `mocks.lua:12: message`.
///
/// ```swift
/// do { _ = try ScriptGeneration.load(file: "mocks.lua", engine: engine) }
/// catch { print(error) }   // mocks.lua:3: unexpected symbol near 'end'
/// ```
public struct ScriptError: Error, CustomStringConvertible, Sendable {
    private enum Kind: Sendable {
        case syntax
        case load
        case io
    }

    private let kind: Kind
    /// `file:line: text` (or `file: text` when no line applies).
    public let message: String
    /// The Lua traceback of a runtime error during loading.
    public let traceback: String?

    private init(_ kind: Kind, _ message: String, _ traceback: String? = nil) {
        self.kind = kind
        self.message = message
        self.traceback = traceback
    }

    static func syntax(_ message: String) -> ScriptError { ScriptError(.syntax, message) }
    static func load(_ message: String, traceback: String? = nil) -> ScriptError { ScriptError(.load, message, traceback) }
    static func io(_ message: String) -> ScriptError { ScriptError(.io, message) }

    public var isSyntaxError: Bool { kind == .syntax }

    /// The `file:line` the message starts with, when it has one.
    public var location: (file: String, line: Int)? {
        let parts = message.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let line = Int(parts[1]) else { return nil }
        return (String(parts[0]), line)
    }

    public var description: String { message }
}

/// A command's arguments read left to right, for the commands with many options (`serve`,
/// `record`): one way to take an option's value and to check a port, with the usage errors.
///
/// ```swift
/// let args = ArgumentReader(["--port", "0", "mocks.lua"])
/// while let arg = args.next() { if arg == "--port" { port = try args.port(arg) } }
/// ```
final class ArgumentReader {
    let arguments: [String]
    /// The next argument's position.
    private(set) var index = 0

    init(_ arguments: [String]) { self.arguments = arguments }

    /// The next argument, taken; `nil` at the end.
    func next() -> String? {
        guard index < arguments.count else { return nil }
        defer { index += 1 }
        return arguments[index]
    }

    /// The value of option `name` (the next argument); a usage error when there is none.
    func value(_ name: String) throws -> String {
        guard let v = next() else { throw UsageError("\(name) needs a value") }
        return v
    }

    /// A port (0 picks a free one).
    func port(_ name: String) throws -> Int {
        let v = try value(name)
        guard let p = Int(v), (0...65535).contains(p) else { throw UsageError("\(name) must be 0...65535, got '\(v)'") }
        return p
    }

    /// Takes `count` more arguments (read by someone else, e.g. the script flags).
    func skip(_ count: Int) { index = min(arguments.count, index + count) }
}

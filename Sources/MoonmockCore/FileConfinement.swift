import Foundation

/// The folder a script's files must come from, and the rule that keeps them there: no absolute
/// path, no `..`, and no symlink that leads out. Fixtures, `mock.read`, Mock-Bundle folders and
/// their `file` entries, and stub folders are all resolved through one of these.
///
/// ```swift
/// let sandbox = FileConfinement(root: URL(fileURLWithPath: "/work/mocks"))
/// try sandbox.resolve("fixtures/user.json")   // "/work/mocks/fixtures/user.json"
/// try sandbox.resolve("../secrets")           // throws: '..' is refused
/// ```
public struct FileConfinement: Sendable {
    /// The folder, standardized.
    public let root: URL
    /// The folder with its symlinks resolved: what every file's real path must lie in.
    private let realRoot: String

    public init(root: URL) {
        self.root = root.standardizedFileURL
        realRoot = self.root.resolvingSymlinksInPath().path
    }

    /// A path that may not be read, and why.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The absolute path of `path`, written relative to `base` (a folder inside the root; the root
    /// itself by default), once it is known to stay inside the root.
    public func resolve(_ path: String, from base: URL? = nil, what: String = "") throws -> String {
        let label = what.isEmpty ? "'\(path)'" : "\(what) '\(path)'"
        if path.hasPrefix("/") || path.hasPrefix("~") {
            throw Refusal(description: "\(label) is outside the script folder (absolute paths are refused; use --unsafe for trusted scripts)")
        }
        if path.split(separator: "/").contains("..") {
            throw Refusal(description: "\(label) is outside the script folder ('..' is refused)")
        }
        let candidate = (base ?? root).appendingPathComponent(path).standardizedFileURL.path
        try check(candidate, label: label)
        return candidate
    }

    /// Throws unless the real path of `absolute` (its symlinks resolved) lies inside the root.
    public func check(_ absolute: String, label: String? = nil) throws {
        let real = URL(fileURLWithPath: absolute).resolvingSymlinksInPath().path
        if real != realRoot && !real.hasPrefix(realRoot.hasSuffix("/") ? realRoot : realRoot + "/") {
            throw Refusal(description: "\(label ?? "'\(absolute)'") is outside the script folder (a symlink leads out)")
        }
    }
}

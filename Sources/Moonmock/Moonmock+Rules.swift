import Foundation
import MoonmockCore
import MoonmockScript

extension Moonmock {
    /// Adds runtime rules given as JSON — the rule JSON of `POST /__moonmock/rules` and
    /// `moonmock serve --rules`, one object or an array — ahead of the script's rules, and
    /// returns their ids. A rule named like an earlier runtime rule replaces it. Throws
    /// ``RuleJSONError`` naming the field at fault, or ``RuntimeRuleError`` for a `lua` handler
    /// that does not compile.
    ///
    /// ```swift
    /// try moonmock.addRule(json: #"""
    ///     {"method": "GET", "path": "/users/7", "respond": {"status": 404, "json": {"error": "gone"}}}
    ///     """#)
    /// ```
    @discardableResult
    public func addRule(json: String) throws -> [String] { try runtimeRules().add(jsonText: Array(json.utf8)) }

    /// ``addRule(json:)-(String)`` for JSON bytes (a file's contents).
    @discardableResult
    public func addRule(json: Data) throws -> [String] { try runtimeRules().add(jsonText: Array(json)) }

    /// Removes the runtime rule `id` added from JSON; `false` when there is none.
    @discardableResult
    public func removeRule(id: String) -> Bool { (try? runtimeRules().remove(id: id)) ?? false }

    /// The rules added from JSON, in the order they are tried.
    public var jsonRules: [Rule] { engine.runtimeRules.filter { $0.definition != nil } }

    /// The instance's ``RuntimeRules``, in the script's folder with its options.
    private func runtimeRules() throws -> RuntimeRules {
        try withSettings { s in
            if let made = s.runtimeRules { return made }
            let folder = s.host.map { URL(fileURLWithPath: $0.file).deletingLastPathComponent().path }
                ?? s.generation?.baseDirectory.path ?? FileManager.default.currentDirectoryPath
            let made = try RuntimeRules(engine: engine, options: s.scriptOptions, baseDirectory: folder, origin: "addRule(json:)")
            s.runtimeRules = made
            return made
        }
    }
}

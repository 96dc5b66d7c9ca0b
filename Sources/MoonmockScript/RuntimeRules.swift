import Foundation
import MoonmockCore

/// Adds rules given as JSON (``RuleJSON``) to an engine's runtime rules, ahead of the script's
/// and surviving its reloads. Each rule becomes a `mock.route{...}` run in a VM of its own
/// (one per `RuntimeRules`), loaded with the script's options and folder: a `"lua"` handler
/// runs in the sandbox, can `require` the script's modules and shares `mock.state`.
///
/// ```swift
/// let rules = try RuntimeRules(engine: engine, baseDirectory: "mocks")
/// let ids = try rules.add(JSONValue(parsing: Array(#"{"method": "GET", "path": "/ping", "respond": {"text": "pong"}}"#.utf8)))
/// rules.remove(id: ids[0])
/// ```
public final class RuntimeRules: Sendable {
    public let engine: Engine
    /// Where the rules say they come from in listings and near-miss reports (`admin API`).
    public let origin: String
    private let options: ScriptOptions
    private let baseDirectory: String
    /// The VM the rules' `mock.route` calls run in; made again when it holds many rules and
    /// none of them is in use (a test suite that adds and resets rules all day).
    /// Locked: a rule's id is chosen, compiled and installed as one step.
    private let generation: Locked<ScriptGeneration>
    private let counter = Locked(0)

    /// A home for runtime rules of `engine`; `baseDirectory` is where `file` bodies and
    /// `require` resolve (the script's folder).
    public init(engine: Engine, options: ScriptOptions = ScriptOptions(),
                baseDirectory: String = FileManager.default.currentDirectoryPath, origin: String = "runtime") throws {
        self.engine = engine
        self.origin = origin
        self.options = options
        self.baseDirectory = baseDirectory
        generation = Locked(try Self.freshGeneration(engine, options, baseDirectory))
    }

    private static func freshGeneration(_ engine: Engine, _ options: ScriptOptions, _ baseDirectory: String) throws -> ScriptGeneration {
        try ScriptGeneration.load(source: "", name: "runtime rules", baseDirectory: baseDirectory, engine: engine, options: options)
    }

    /// Checks and adds one rule (a JSON object) or several (an array, tried in its order), all or
    /// none; returns their ids. A rule whose `name` is that of a runtime rule replaces it.
    @discardableResult
    public func add(_ json: JSONValue, origin: String? = nil) throws -> [String] {
        let origin = origin ?? self.origin
        let batch: [(RuleJSON, String)]
        switch json {
        case .array(let items):
            batch = try items.enumerated().map { i, item in (try RuleJSON(item, at: "rules[\(i)]"), "rules[\(i)]") }
        default:
            batch = [(try RuleJSON(json, at: "rule"), "rule")]
        }
        return try generation.withLock { generation in
            if generation.rules.count > 256 && self.rules.isEmpty {
                generation = try Self.freshGeneration(engine, options, baseDirectory)
            }
            var rules: [Rule] = []
            for (rule, field) in batch {
                let id = rule.name ?? counter.withLock { n in n += 1; return "runtime-\(n)" }
                var definition = rule.json
                if case .object(var o) = definition { o["id"] = .string(id); definition = .object(o) }
                let compiled: [Rule]
                // A `lua` handler is the chunk's first line: its errors read `rule.lua:LINE: …`.
                let chunk = rule.hasLua ? "\(field).lua" : field
                do {
                    compiled = try generation.append(Array(rule.luaSource(id: id).utf8), chunkName: "=\(chunk)")
                } catch let error as ScriptError {
                    throw RuntimeRuleError(field: chunk, message: error.message)
                }
                rules += compiled.map { inner in
                    Rule(id: id, method: inner.method, pattern: inner.pattern, predicates: inner.predicates, times: inner.times,
                         priority: inner.priority, location: origin, graphQLOperation: inner.graphQLOperation,
                         definition: definition, mayUseStore: inner.mayUseStore, storeWaits: inner.storeWaits, chaos: inner.chaos) { [generation] context in
                        // The VM stays while the rule does, even once a fresh one takes new rules.
                        try withExtendedLifetime(generation) { try inner.respond(context) }
                    }
                }
            }
            let ids = Set(rules.map(\.id))
            engine.add(rules) { $0.definition != nil && ids.contains($0.id) }
            return rules.map(\.id)
        }
    }

    /// Parses `text` as JSON and adds it (see ``add(_:)-(JSONValue)``).
    @discardableResult
    public func add(jsonText text: some Collection<UInt8>, origin: String? = nil) throws -> [String] {
        let json: JSONValue
        do { json = try JSONValue(parsing: text) } catch { throw RuntimeRuleError(field: "rule", message: "rule: \(error)") }
        return try add(json, origin: origin)
    }

    /// The runtime rules made from JSON, in evaluation order.
    public var rules: [Rule] { engine.runtimeRules.filter { $0.definition != nil } }

    /// Removes the runtime rule `id`; `false` when there is none.
    @discardableResult
    public func remove(id: String) -> Bool { engine.removeRuntimeRules { $0.definition != nil && $0.id == id } > 0 }

    /// Removes every runtime rule made from JSON; returns how many there were.
    @discardableResult
    public func removeAll() -> Int { engine.removeRuntimeRules { $0.definition != nil } }
}

/// A rule that could not be added: a ``RuleJSONError`` (wrong JSON), or a Lua error while its
/// `mock.route` ran (a `lua` handler that does not compile, an invalid Lua pattern), named by
/// the rule's place: `rules[1]:1: unexpected symbol near 'end'`.
public struct RuntimeRuleError: Error, CustomStringConvertible, Sendable {
    /// `rule`, or `rules[N]` in an array.
    public let field: String
    public let message: String
    public var description: String { message }
}

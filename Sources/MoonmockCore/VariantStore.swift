import Synchronization

/// Which named alternative ("variant") each rule answers with: the list the current script
/// declares and the choice made at runtime (from Swift, the admin API or the dashboard).
/// Host-owned like ``StateStore``: a choice survives a script reload while its name still exists.
///
/// ```swift
/// try engine.variants.activate("server_error", for: "GET /users/:id")
/// engine.variants.list()   // [Variants(rule: "GET /users/:id", names: ["not_found", "ok", "server_error"], active: "server_error")]
/// ```
public final class VariantStore: Sendable {
    /// One rule's variants.
    public struct Variants: Sendable, Equatable {
        public let rule: String
        /// Sorted names.
        public let names: [String]
        public let active: String

        public init(rule: String, names: [String], active: String) {
            self.rule = rule
            self.names = names
            self.active = active
        }
    }

    /// A rule or variant that does not exist.
    public struct UnknownVariant: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private struct Declared {
        var names: [String]
        var defaultName: String
    }

    private struct Store {
        var declared: [String: Declared] = [:]
        var order: [String] = []
        var chosen: [String: String] = [:]
    }

    private let store = Mutex(Store())

    public init() {}

    /// Declares the variants of a newly loaded script, replacing the previous declarations.
    /// Choices whose rule and name still exist are kept; others fall back to the default.
    public func declare(_ declarations: [(rule: String, names: [String], defaultName: String)]) {
        store.withLock { s in
            s.declared = [:]
            s.order = []
            for d in declarations where s.declared[d.rule] == nil {
                s.declared[d.rule] = Declared(names: d.names.sorted(), defaultName: d.defaultName)
                s.order.append(d.rule)
            }
            s.chosen = s.chosen.filter { rule, name in s.declared[rule]?.names.contains(name) ?? false }
        }
    }

    /// The variant `rule` answers with now, or `nil` when the rule declares none.
    public func active(for rule: String) -> String? {
        store.withLock { s in
            guard let d = s.declared[rule] else { return nil }
            return s.chosen[rule] ?? d.defaultName
        }
    }

    /// Switches `rule` to the variant `name`. Throws when either is unknown.
    public func activate(_ name: String, for rule: String) throws {
        try store.withLock { s in
            guard let d = s.declared[rule] else {
                throw UnknownVariant(description: "no rule '\(rule)' with variants (rules with variants: \(s.order.joined(separator: ", ")))")
            }
            guard d.names.contains(name) else {
                throw UnknownVariant(description: "rule '\(rule)' has no variant '\(name)' (variants: \(d.names.joined(separator: ", ")))")
            }
            s.chosen[rule] = name
        }
    }

    /// Every rule back to its default variant.
    public func reset() { store.withLock { $0.chosen = [:] } }

    /// Rules with variants, in script order.
    public func list() -> [Variants] {
        store.withLock { s in
            s.order.compactMap { rule in
                s.declared[rule].map { Variants(rule: rule, names: $0.names, active: s.chosen[rule] ?? $0.defaultName) }
            }
        }
    }
}

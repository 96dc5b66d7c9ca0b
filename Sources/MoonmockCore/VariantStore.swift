
/// Which named alternative ("variant") each rule answers with: the list the current script
/// declares and the choice made at runtime (from Swift, the admin API or the dashboard).
/// Host-owned like ``StateStore``: a choice survives a script reload while its name still exists.
/// Stub-folder endpoints are variant sets that may also have none active (they then fall
/// through to later rules).
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
        /// `nil` for a stub endpoint with no stub active.
        public let active: String?

        public init(rule: String, names: [String], active: String?) {
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
        var defaultName: String?
        /// Accepts a short form of a name (a stub's `ok` for `ok.200.json`).
        var aliases: [String: String]
    }

    private struct Store {
        var declared: [String: Declared] = [:]
        var order: [String] = []
        /// `.some(nil)` records a deactivated endpoint.
        var chosen: [String: String?] = [:]
    }

    private let store = Locked(Store())
    private let stubDelay = Locked<Double>(0)

    public init() {}

    /// Milliseconds added to every stub-folder response (the stubs' one global delay).
    public var stubDelayMilliseconds: Double {
        get { stubDelay.withLock { $0 } }
        set { stubDelay.withLock { $0 = max(0, newValue) } }
    }

    /// Declares the variants of a newly loaded script, replacing the previous declarations.
    /// Choices whose rule and name still exist are kept; others fall back to the default.
    /// One rule's declaration: its variant names, the starting one (`nil`: none active), and
    /// short forms accepted for names.
    public struct Declaration: Sendable {
        public let rule: String
        public let names: [String]
        public let defaultName: String?
        public let aliases: [String: String]
        public init(rule: String, names: [String], defaultName: String?, aliases: [String: String] = [:]) {
            self.rule = rule
            self.names = names
            self.defaultName = defaultName
            self.aliases = aliases
        }
    }

    public func declare(_ declarations: [Declaration]) {
        store.withLock { s in
            s.declared = [:]
            s.order = []
            for d in declarations where s.declared[d.rule] == nil {
                s.declared[d.rule] = Declared(names: d.names.sorted(), defaultName: d.defaultName, aliases: d.aliases)
                s.order.append(d.rule)
            }
            s.chosen = s.chosen.filter { rule, name in
                guard let d = s.declared[rule] else { return false }
                return name.map { d.names.contains($0) } ?? (d.defaultName == nil)
            }
        }
    }

    /// The variant `rule` answers with now; `nil` when the rule declares none or none is active.
    public func active(for rule: String) -> String? {
        store.withLock { s in
            guard let d = s.declared[rule] else { return nil }
            if let chosen = s.chosen[rule] { return chosen }
            return d.defaultName
        }
    }

    /// Switches `rule` to the variant `name` (or a short form of it). Throws when either is unknown.
    public func activate(_ name: String, for rule: String) throws {
        try store.withLock { s in
            guard let d = s.declared[rule] else {
                throw UnknownVariant(description: "no rule '\(rule)' with variants (rules with variants: \(s.order.joined(separator: ", ")))")
            }
            guard let full = d.names.contains(name) ? name : d.aliases[name] else {
                throw UnknownVariant(description: "rule '\(rule)' has no variant '\(name)' (variants: \(d.names.joined(separator: ", ")))")
            }
            s.chosen[rule] = .some(full)
        }
    }

    /// Leaves `rule` (a stub endpoint) with no variant active: requests fall through.
    public func deactivate(_ rule: String) throws {
        try store.withLock { s in
            guard let d = s.declared[rule] else {
                throw UnknownVariant(description: "no rule '\(rule)' with variants (rules with variants: \(s.order.joined(separator: ", ")))")
            }
            guard d.defaultName == nil else {
                throw UnknownVariant(description: "rule '\(rule)' always has a variant active; choose one of: \(d.names.joined(separator: ", "))")
            }
            s.chosen[rule] = .some(nil)
        }
    }

    /// Every rule back to its default variant, every stub endpoint to none, and the stubs'
    /// global delay back to 0 (as moya-stubber's reset).
    public func reset() {
        store.withLock { $0.chosen = [:] }
        stubDelay.withLock { $0 = 0 }
    }

    /// The variant `rule` starts on (and returns to on a reset); `nil` for a stub endpoint (none).
    public func defaultVariant(for rule: String) -> String? {
        store.withLock { $0.declared[rule]?.defaultName }
    }

    /// Whether `rule` may have no variant active (a stub endpoint: it then falls through).
    public func allowsNone(_ rule: String) -> Bool {
        store.withLock { $0.declared[rule].map { $0.defaultName == nil } ?? false }
    }

    /// Rules with variants, in script order.
    public func list() -> [Variants] {
        store.withLock { s in
            s.order.compactMap { rule in
                s.declared[rule].map { d in Variants(rule: rule, names: d.names, active: s.chosen[rule].map { $0 } ?? d.defaultName) }
            }
        }
    }
}

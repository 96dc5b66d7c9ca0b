import MoonmockCore
import MoonmockScript

/// Switches and runtime rules shared by replicas (`moonmock serve --store`): what one replica's
/// admin API changes goes to the store, which tells the others; each applies the group that
/// changed as a whole, so a replica that missed a message (an outage) catches up on the next.
extension AdminAPI {
    /// Applies what the store holds now, and every change the other replicas make from here on.
    func startSharing() {
        guard let store = engine.store else { return }
        let api = self
        store.onSettingsChanged { group in api.applyShared(group) }
        for group in SharedSettings.allCases { applyShared(group) }
    }

    /// A switch made here, for the other replicas.
    func shareVariant(_ rule: String) throws {
        guard let store = engine.store else { return }
        try store.putSetting(.variants, rule, engine.variants.active(for: rule) ?? "")
    }

    func shareBundle(_ rule: String, _ path: String) throws {
        try engine.store?.putSetting(.bundles, rule, path)
    }

    /// The runtime rules made from JSON, in evaluation order, for the other replicas.
    func shareRules() throws {
        guard let store = engine.store else { return }
        let mine = engine.runtimeRules.compactMap { rule in Self.shareable(rule).map { (rule.id, $0) } }
        let shared = try store.settings(.rules)
        for key in shared.keys where !mine.contains(where: { $0.0 == key }) { try store.putSetting(.rules, key, nil) }
        for (i, (id, definition)) in mine.enumerated() {
            try store.putSetting(.rules, id, "\(i)\t" + String(decoding: definition.encoded(), as: UTF8.self))
        }
    }

    /// Makes this replica's `group` what the store holds (a store that is away: kept as is,
    /// and applied again once it is back).
    func applyShared(_ group: SharedSettings) {
        guard let store = engine.store, let shared = try? store.settings(group) else { return }
        switch group {
        case .variants:
            for v in engine.variants.list() {
                let wanted = shared[v.rule].map { $0.isEmpty ? nil : $0 } ?? defaultVariant(v.rule)
                guard wanted != v.active else { continue }
                if let wanted { try? engine.variants.activate(wanted, for: v.rule) } else { try? engine.variants.deactivate(v.rule) }
                engine.feed.publish(.switched(.object(["rule": .string(v.rule), "active": wanted.map(JSONValue.string) ?? .null])))
            }
        case .bundles:
            for (rule, path) in shared where !rule.isEmpty && !engine.bundles.list().contains(where: { $0.rule == rule && $0.path == path }) {
                if (try? engine.bundles.switchTo(path, rule: rule)) != nil {
                    engine.feed.publish(.switched(.object(["rule": .string(rule), "bundle": .string(path)])))
                }
            }
        case .chaos:
            applySharedChaos(shared)
        case .rules:
            guard let rules = try? runtimeRules() else { return }
            let ordered = shared.compactMap { _, value -> (Int, JSONValue)? in
                guard let tab = value.firstIndex(of: "\t"), let i = Int(value[..<tab]),
                      let json = try? JSONValue(parsing: Array(value[value.index(after: tab)...].utf8)) else { return nil }
                return (i, json)
            }.sorted { $0.0 < $1.0 }.map(\.1)
            guard engine.runtimeRules.compactMap(Self.shareable) != ordered else { return }
            rules.removeAll()
            if !ordered.isEmpty { _ = try? rules.add(.array(ordered)) }
        }
    }

    /// A runtime rule as rule JSON again, named by its id: the same rule, with the same id, on
    /// every replica (`nil`: a rule from Swift, not JSON).
    static func shareable(_ rule: Rule) -> JSONValue? {
        guard case .object(var o)? = rule.definition else { return nil }
        o["id"] = nil
        o["name"] = .string(rule.id)
        return .object(o)
    }

    /// The variant a rule starts on: what it answers with after a reset (`nil`: a stub endpoint, none).
    private func defaultVariant(_ rule: String) -> String? {
        engine.variants.defaultVariant(for: rule)
    }
}

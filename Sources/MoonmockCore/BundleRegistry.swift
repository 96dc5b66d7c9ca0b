
/// The Mock-Bundles a script declared and which folder each one serves now. Switching to
/// another folder swaps the whole set at once, like a server moving to another state; the
/// switch survives a script reload while the bundle's rule still exists.
///
/// ```swift
/// try engine.bundles.switchTo("Mocks/empty-cart")   // relative to the script's folder
/// ```
public final class BundleRegistry: Sendable {
    /// One declared bundle: its rule id, the folder it serves and how to load another folder.
    public struct Declaration: Sendable {
        public let rule: String
        public let path: String
        public let bundle: MockBundle
        /// Loads a folder given relative to the script (with the script's confinement rules).
        public let load: @Sendable (String) throws -> MockBundle
        public init(rule: String, path: String, bundle: MockBundle, load: @escaping @Sendable (String) throws -> MockBundle) {
            self.rule = rule
            self.path = path
            self.bundle = bundle
            self.load = load
        }
    }

    /// No such bundle rule.
    public struct UnknownBundle: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private struct Slot {
        var declaration: Declaration
        var path: String
        /// `nil`: no bundle (set from Swift); the rule answers nothing, or 501 with `handle_all`.
        var bundle: MockBundle?
    }

    private struct Store {
        var slots: [String: Slot] = [:]
        var order: [String] = []
        var switched: [String: String] = [:]
    }

    private let store = Locked(Store())

    public init() {}

    /// Declares the bundles of a newly loaded script. A bundle switched at runtime keeps its
    /// folder when its rule still exists and the folder still loads.
    public func declare(_ declarations: [Declaration]) {
        let previous = store.withLock { $0.switched }
        var slots: [String: Slot] = [:]
        var order: [String] = []
        for d in declarations where slots[d.rule] == nil {
            var slot = Slot(declaration: d, path: d.path, bundle: d.bundle)
            if let path = previous[d.rule], path != d.path, let bundle = try? d.load(path) {
                slot.path = path
                slot.bundle = bundle
            }
            slots[d.rule] = slot
            order.append(d.rule)
        }
        store.withLock { s in
            s.slots = slots
            s.order = order
            s.switched = previous.filter { slots[$0.key] != nil }
        }
    }

    /// The bundle the rule serves now.
    public func bundle(for rule: String) -> MockBundle? { store.withLock { $0.slots[rule]?.bundle } }

    /// Serves another folder (relative to the script) for `rule`, or for the first bundle.
    /// The folder is loaded first; on error nothing changes.
    @discardableResult
    public func switchTo(_ path: String, rule: String? = nil) throws -> String {
        guard let slot = store.withLock({ s in (rule ?? s.order.first).flatMap { s.slots[$0] } }) else {
            let known = store.withLock { $0.order }
            throw UnknownBundle(description: rule.map { "no bundle rule '\($0)'" } ?? "the script declares no Mock-Bundle"
                                + (known.isEmpty ? "" : " (bundles: \(known.joined(separator: ", ")))"))
        }
        let bundle = try slot.declaration.load(path)
        let id = slot.declaration.rule
        store.withLock { s in
            s.slots[id]?.path = path
            s.slots[id]?.bundle = bundle
            s.switched[id] = path
        }
        return id
    }

    /// Serves `bundle` (loaded by the caller, from any folder: Swift's own choice) for `rule`,
    /// or for the first bundle; `nil` serves none until the next switch.
    @discardableResult
    public func serve(_ bundle: MockBundle?, rule: String? = nil) throws -> String {
        try store.withLock { s in
            guard let id = rule ?? s.order.first, s.slots[id] != nil else {
                throw UnknownBundle(description: rule.map { "no bundle rule '\($0)'" } ?? "the script declares no Mock-Bundle")
            }
            s.slots[id]?.bundle = bundle
            s.slots[id]?.path = bundle?.directory.path ?? ""
            s.switched[id] = nil
            return id
        }
    }

    /// Bundle rules with the folder each serves, in script order.
    public func list() -> [(rule: String, path: String)] {
        store.withLock { s in s.order.compactMap { id in s.slots[id].map { (id, $0.path) } } }
    }
}

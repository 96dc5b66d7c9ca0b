/// The CRUD collections a script declared with `mock.resource(path, opts)`, and where their
/// items live in `mock.state` (so replicas sharing a store share them). One place says how
/// the keys are spelled: the script's prelude asks ``keys(for:)``, the admin API reads them.
///
/// ```swift
/// engine.resources.collections(in: engine.state)   // [{"path": "/pets", "count": 3, "items": [...]}]
/// ```
public final class ResourceRegistry: Sendable {
    /// One collection: its path (`/pets`) and the item member that holds the id.
    public struct Declaration: Sendable, Equatable {
        public let path: String
        public let idField: String
        public init(path: String, idField: String) {
            self.path = path
            self.idField = idField
        }
    }

    /// The state keys of a collection: one per item (`prefix` + id, the value `SEQ JSON`), its
    /// version (bumped by every write), the counter of ids and order, and the seeded mark.
    public struct Keys: Sendable {
        public let itemPrefix: String
        public let version: String
        public let sequence: String
        public let seeded: String
    }

    private let declared = Locked<[Declaration]>([])
    /// Seeds a collection again (runs the script's seed in a Lua VM); set with the declarations.
    private let seeder = Locked<(@Sendable (String) throws -> Void)?>(nil)

    public init() {}

    public static func keys(for path: String) -> Keys {
        let base = "resource:" + path
        return Keys(itemPrefix: base + "/", version: base + "#version", sequence: base + "#seq", seeded: base + "#seeded")
    }

    /// The collections of a newly loaded script, and how to seed one of them again.
    public func declare(_ declarations: [Declaration], seed: (@Sendable (String) throws -> Void)? = nil) {
        declared.withLock { $0 = declarations }
        seeder.withLock { $0 = seed }
    }

    public var declarations: [Declaration] { declared.withLock { $0 } }

    /// Each collection with its items in the order they were made.
    public func collections(in state: StateStore) throws -> [JSONValue] {
        let keys = try state.keys()
        return try declarations.map { d in
            let prefix = Self.keys(for: d.path).itemPrefix
            var items: [(Int64, JSONValue)] = []
            for key in keys where key.hasPrefix(prefix) {
                guard case .string(let text)? = try state.get(key), let (seq, item) = Self.parse(text) else { continue }
                items.append((seq, item))
            }
            items.sort { $0.0 < $1.0 }
            return .object(["path": .string(d.path), "id_field": .string(d.idField), "count": .integer(Int64(items.count)),
                            "items": .array(items.map(\.1))])
        }
    }

    /// Forgets a collection's items and seeds it again (when the script can; else its next
    /// request does). `false` when no such collection.
    public func reset(_ path: String, in state: StateStore) throws -> Bool {
        guard declarations.contains(where: { $0.path == path }) else { return false }
        let k = Self.keys(for: path)
        for key in try state.keys() where key.hasPrefix(k.itemPrefix) { _ = try state.delete(key) }
        for key in [k.version, k.sequence, k.seeded] { _ = try state.delete(key) }
        try seeder.withLock { $0 }?(path)
        return true
    }

    /// An item's stored text: its order number, a space, its JSON.
    static func parse(_ text: String) -> (Int64, JSONValue)? {
        guard let space = text.firstIndex(of: " "), let seq = Int64(text[..<space]),
              let item = try? JSONValue(parsing: Array(text[text.index(after: space)...].utf8)) else { return nil }
        return (seq, item)
    }
}

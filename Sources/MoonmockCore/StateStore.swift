
/// A value in ``StateStore``.
public enum StateValue: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)

    public var description: String {
        switch self {
        case .bool(let b): return String(b)
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return s
        }
    }

    public var json: JSONValue {
        switch self {
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        }
    }
}

/// The host-owned key-value store behind `mock.state`: thread-safe, atomic per operation,
/// with optional expiry, and independent of any script generation (it survives reloads).
///
/// ```swift
/// let state = StateStore()
/// try state.incr("hits", by: 1, initial: 0)   // 1
/// state.set("token", .string("abc"), ttl: 60)
/// ```
public final class StateStore: Sendable {
    private struct Entry {
        var value: StateValue
        var expires: Double?
    }

    /// `incr` on a value that is not a number.
    public struct NotANumber: Error, CustomStringConvertible {
        public let key: String
        public init(key: String) { self.key = key }
        public var description: String { "state key '\(key)' does not hold a number" }
    }

    /// A write that would take the store past ``limitBytes``.
    public struct LimitExceeded: Error, CustomStringConvertible {
        public let key: String
        public let limitBytes: Int
        public var description: String {
            "mock.state is full: storing '\(key)' would pass its limit of \(limitBytes) bytes (moonmock serve --state-limit); delete keys, give them a ttl, or flush"
        }
    }

    private struct Store {
        var entries: [String: Entry] = [:]
        /// What the entries take, as ``StateStore/size(_:_:)`` counts it.
        var bytes = 0

        mutating func put(_ key: String, _ entry: Entry?, limit: Int, now: Double) throws {
            let old = entries[key].map { StateStore.size(key, $0.value) } ?? 0
            let new = entry.map { StateStore.size(key, $0.value) } ?? 0
            if new > old && bytes - old + new > limit {
                purgeExpired(now)
                let old = entries[key].map { StateStore.size(key, $0.value) } ?? 0
                if bytes - old + new > limit { throw LimitExceeded(key: key, limitBytes: limit) }
            }
            bytes += new - (entries[key].map { StateStore.size(key, $0.value) } ?? 0)
            entries[key] = entry
        }

        mutating func purgeExpired(_ now: Double) {
            for (key, entry) in entries where entry.expires.map({ $0 <= now }) ?? false {
                bytes -= StateStore.size(key, entry.value)
                entries[key] = nil
            }
        }
    }

    private let store = Locked(Store())
    private let clock: @Sendable () -> Double
    /// The most the keys and values may take, in bytes (each entry counts its key's and string
    /// value's UTF-8 bytes plus 48).
    public let limitBytes: Int

    /// `limitBytes` bounds the store (64 MiB by default): a script that stores without end
    /// gets a clear error instead of taking the process's memory.
    /// Told of every change (the dashboard follows it), when given.
    let feed: EventFeed?
    /// Where the values live when replicas share them (`--store`): every operation is then one
    /// of the store's, and throws ``StoreUnavailable`` when it cannot answer.
    public let backend: (any SharedStore)?

    public init(clock: @escaping @Sendable () -> Double = MockEnvironment.system.now, limitBytes: Int = 64 << 20, feed: EventFeed? = nil,
                backend: (any SharedStore)? = nil) {
        self.clock = clock
        self.limitBytes = limitBytes
        self.feed = feed
        self.backend = backend
    }

    @inline(__always)
    func changed(_ key: String?) {
        if let feed, feed.isWatched { feed.publish(.state(key: key)) }
    }

    static func size(_ key: String, _ value: StateValue) -> Int {
        if case .string(let s) = value { return key.utf8.count + s.utf8.count + 48 }
        return key.utf8.count + 48
    }

    /// What the live entries take now, in bytes.
    public var bytesUsed: Int {
        let now = clock()
        return store.withLock { s in
            s.purgeExpired(now)
            return s.bytes
        }
    }

    public func get(_ key: String) throws -> StateValue? {
        if let backend { return try backend.stateGet(key) }
        let now = clock()
        return store.withLock { s in
            guard let entry = s.entries[key] else { return nil }
            if let exp = entry.expires, exp <= now { try? s.put(key, nil, limit: limitBytes, now: now); return nil }
            return entry.value
        }
    }

    /// Sets or (with `nil`) deletes; `ttl` in seconds. Throws ``LimitExceeded`` when the store is full.
    public func set(_ key: String, _ value: StateValue?, ttl: Double? = nil) throws {
        if let backend {
            // Shared: the total is Redis's to bound (maxmemory); one entry past the limit is refused here.
            if let value, Self.size(key, value) > limitBytes { throw LimitExceeded(key: key, limitBytes: limitBytes) }
            try backend.stateSet(key, value, ttl: ttl)
            changed(key)
            return
        }
        let now = clock()
        try store.withLock { try $0.put(key, value.map { Entry(value: $0, expires: ttl.map { now + $0 }) }, limit: limitBytes, now: now) }
        changed(key)
    }

    /// Sets only when absent; returns whether it did.
    @discardableResult
    public func add(_ key: String, _ value: StateValue, ttl: Double? = nil) throws -> Bool {
        let now = clock()
        if backend != nil, Self.size(key, value) > limitBytes { throw LimitExceeded(key: key, limitBytes: limitBytes) }
        let added = try backend?.stateAdd(key, value, ttl: ttl) ?? store.withLock { s in
            if let entry = s.entries[key], entry.expires.map({ $0 > now }) ?? true { return false }
            try s.put(key, Entry(value: value, expires: ttl.map { now + $0 }), limit: limitBytes, now: now)
            return true
        }
        if added { changed(key) }
        return added
    }

    /// Adds `by` to a number; an absent key starts at `initial`. Returns the new value.
    @discardableResult
    public func incr(_ key: String, by: StateValue = .integer(1), initial: StateValue = .integer(0)) throws -> StateValue {
        if let backend {
            let value = try backend.stateIncr(key, by: by, initial: initial)
            changed(key)
            return value
        }
        let now = clock()
        let value = try store.withLock { s in
            var current = initial
            var expires: Double?
            if let entry = s.entries[key], entry.expires.map({ $0 > now }) ?? true {
                current = entry.value
                expires = entry.expires
            }
            let next: StateValue
            switch (current, by) {
            case (.integer(let a), .integer(let b)): next = .integer(a &+ b)
            case (.integer(let a), .double(let b)): next = .double(Double(a) + b)
            case (.double(let a), .integer(let b)): next = .double(a + Double(b))
            case (.double(let a), .double(let b)): next = .double(a + b)
            default: throw NotANumber(key: key)
            }
            try s.put(key, Entry(value: next, expires: expires), limit: limitBytes, now: now)
            return next
        }
        changed(key)
        return value
    }

    @discardableResult
    public func delete(_ key: String) throws -> Bool {
        let now = clock()
        let deleted = try backend?.stateDelete(key) ?? store.withLock { s in
            guard s.entries[key] != nil else { return false }
            try? s.put(key, nil, limit: limitBytes, now: now)
            return true
        }
        if deleted { changed(key) }
        return deleted
    }

    /// Live keys, sorted.
    public func keys() throws -> [String] { try snapshot().keys.sorted() }

    /// Every live key and value.
    public func snapshot() throws -> [String: StateValue] {
        if let backend { return try backend.stateSnapshot() }
        let now = clock()
        return store.withLock { s in
            s.purgeExpired(now)
            return s.entries.mapValues(\.value)
        }
    }

    public func flush() throws {
        try backend?.stateFlush()
        store.withLock { $0 = Store() }
        changed(nil)
    }
}

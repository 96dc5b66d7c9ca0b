import Synchronization

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
        public var description: String { "state key '\(key)' does not hold a number" }
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let clock: @Sendable () -> Double

    public init(clock: @escaping @Sendable () -> Double = MockEnvironment.system.now) {
        self.clock = clock
    }

    public func get(_ key: String) -> StateValue? {
        let now = clock()
        return entries.withLock { e in
            guard let entry = e[key] else { return nil }
            if let exp = entry.expires, exp <= now { e[key] = nil; return nil }
            return entry.value
        }
    }

    /// Sets or (with `nil`) deletes; `ttl` in seconds.
    public func set(_ key: String, _ value: StateValue?, ttl: Double? = nil) {
        let expires = ttl.map { clock() + $0 }
        entries.withLock { $0[key] = value.map { Entry(value: $0, expires: expires) } }
    }

    /// Sets only when absent; returns whether it did.
    @discardableResult
    public func add(_ key: String, _ value: StateValue, ttl: Double? = nil) -> Bool {
        let now = clock()
        return entries.withLock { e in
            if let entry = e[key], entry.expires.map({ $0 > now }) ?? true { return false }
            e[key] = Entry(value: value, expires: ttl.map { now + $0 })
            return true
        }
    }

    /// Adds `by` to a number; an absent key starts at `initial`. Returns the new value.
    @discardableResult
    public func incr(_ key: String, by: StateValue = .integer(1), initial: StateValue = .integer(0)) throws -> StateValue {
        let now = clock()
        return try entries.withLock { e in
            var current = initial
            var expires: Double?
            if let entry = e[key], entry.expires.map({ $0 > now }) ?? true {
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
            e[key] = Entry(value: next, expires: expires)
            return next
        }
    }

    @discardableResult
    public func delete(_ key: String) -> Bool { entries.withLock { $0.removeValue(forKey: key) != nil } }

    /// Live keys, sorted.
    public func keys() -> [String] { snapshot().keys.sorted() }

    /// Every live key and value.
    public func snapshot() -> [String: StateValue] {
        let now = clock()
        return entries.withLock { e in
            e = e.filter { $0.value.expires.map { $0 > now } ?? true }
            return e.mapValues(\.value)
        }
    }

    public func flush() { entries.withLock { $0.removeAll() } }
}

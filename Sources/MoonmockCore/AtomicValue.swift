#if !canImport(Darwin) && !MOONMOCK_TSAN_LOCKS && !MOONMOCK_PORTABLE_LOCKS
import Synchronization

/// An integer that threads update without a lock: `Synchronization.Atomic` on Linux (stored
/// inline). Apple platforms get a type of the same name and methods over ``Locked``, because
/// `Atomic` needs macOS 15 / iOS 18 (see ``Locked`` for the backends).
///
/// ```swift
/// let served = AtomicInt(0)
/// served.add(1, ordering: .relaxed)
/// let n = served.load(ordering: .relaxed)
/// ```
public typealias AtomicInt = Synchronization.Atomic<Int>
/// A flag that threads set and read without a lock (see ``AtomicInt``).
public typealias AtomicBool = Synchronization.Atomic<Bool>
#else
/// The orderings Moonmock's atomics are used with. Over a lock every operation is sequentially
/// consistent, so they only keep call sites the same as with `Synchronization.Atomic`.
public struct AtomicOrdering: Sendable {
    public static let relaxed = AtomicOrdering()
    public static let acquiring = AtomicOrdering()
    public static let releasing = AtomicOrdering()
    public static let acquiringAndReleasing = AtomicOrdering()
    public static let sequentiallyConsistent = AtomicOrdering()
}

/// `Synchronization.AtomicInt`'s methods that Moonmock uses, over ``Locked`` (Apple platforms
/// below macOS 15 / iOS 18, and Linux's portable build).
public struct AtomicInt: ~Copyable, Sendable {
    @usableFromInline let cell: Locked<Int>
    @inlinable public init(_ value: Int) { cell = Locked(value) }
    @inlinable public func load(ordering: AtomicOrdering) -> Int { cell.withLock { $0 } }
    @inlinable public func store(_ value: Int, ordering: AtomicOrdering) { cell.withLock { $0 = value } }
    @discardableResult @inlinable
    public func add(_ n: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        cell.withLock { v in let old = v; v &+= n; return (old, v) }
    }
    @discardableResult @inlinable
    public func subtract(_ n: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        cell.withLock { v in let old = v; v &-= n; return (old, v) }
    }
    @inlinable
    public func compareExchange(expected: Int, desired: Int, ordering: AtomicOrdering) -> (exchanged: Bool, original: Int) {
        cell.withLock { v in
            guard v == expected else { return (false, v) }
            v = desired
            return (true, expected)
        }
    }
}

/// `Synchronization.AtomicBool`'s methods that Moonmock uses, over ``Locked``.
public struct AtomicBool: ~Copyable, Sendable {
    @usableFromInline let cell: Locked<Bool>
    @inlinable public init(_ value: Bool) { cell = Locked(value) }
    @inlinable public func load(ordering: AtomicOrdering) -> Bool { cell.withLock { $0 } }
    @inlinable public func store(_ value: Bool, ordering: AtomicOrdering) { cell.withLock { $0 = value } }
    @inlinable
    public func compareExchange(expected: Bool, desired: Bool, ordering: AtomicOrdering) -> (exchanged: Bool, original: Bool) {
        cell.withLock { v in
            guard v == expected else { return (false, v) }
            v = desired
            return (true, expected)
        }
    }
}
#endif

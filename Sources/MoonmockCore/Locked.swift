#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif
#if !canImport(Darwin) && !MOONMOCK_TSAN_LOCKS && !MOONMOCK_PORTABLE_LOCKS
import Synchronization
#endif

/// A value that one thread at a time reads or changes: every lock in Moonmock is one of these.
///
/// It has three backends, chosen when the package is built:
/// - Linux: `Synchronization.Mutex`, stored inline (no allocation, futex-based).
/// - Apple platforms: an `os_unfair_lock` in a box of its own. `Mutex` needs macOS 15 / iOS 18,
///   and the package's floor is macOS 12 / iOS 15. (It is the lock `Mutex` uses there anyway.)
/// - Linux built with `-D MOONMOCK_PORTABLE_LOCKS` (scripts/test, once) or `-D MOONMOCK_TSAN_LOCKS`
///   (`scripts/test --sanitize thread`: ThreadSanitizer cannot see the Mutex's bare futex calls):
///   the same box as Apple's with a `pthread_mutex_t`, so the Darwin code path runs here.
///
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// let seen = hits.withLock { $0 }
/// ```
public struct Locked<Value>: ~Copyable, @unchecked Sendable {
    #if canImport(Darwin) || MOONMOCK_TSAN_LOCKS || MOONMOCK_PORTABLE_LOCKS
    @usableFromInline let box: LockBox<Value>
    #else
    @usableFromInline let mutex: Mutex<Value>
    #endif

    /// A lock around `value`.
    @inlinable
    public init(_ value: consuming sending Value) {
        #if canImport(Darwin) || MOONMOCK_TSAN_LOCKS || MOONMOCK_PORTABLE_LOCKS
        box = LockBox(value)
        #else
        mutex = Mutex(value)
        #endif
    }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    @inlinable
    public borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if canImport(Darwin) || MOONMOCK_TSAN_LOCKS || MOONMOCK_PORTABLE_LOCKS
        return try box.withLock(body)
        #else
        return try mutex.withLock(body)
        #endif
    }
}

#if canImport(Darwin) || MOONMOCK_TSAN_LOCKS || MOONMOCK_PORTABLE_LOCKS
#if canImport(Darwin)
/// Apple platforms: the unfair lock (iOS 10 / macOS 10.12), zero-initialised.
@usableFromInline typealias PlatformLock = os_unfair_lock
#else
/// Linux's stand-in for the unfair lock when the portable path is built.
@usableFromInline typealias PlatformLock = pthread_mutex_t
#endif

/// A lock that must not move (its address is what the system knows it by) beside the value.
@usableFromInline
final class LockBox<Value>: @unchecked Sendable {
    @usableFromInline let lock: UnsafeMutablePointer<PlatformLock>
    @usableFromInline var value: Value

    @usableFromInline
    init(_ value: consuming Value) {
        lock = .allocate(capacity: 1)
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #else
        pthread_mutex_init(lock, nil)
        #endif
        self.value = value
    }

    deinit {
        #if !canImport(Darwin)
        pthread_mutex_destroy(lock)
        #endif
        lock.deallocate()
    }

    @inlinable
    func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        #else
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        #endif
        return try body(&value)
    }
}
#endif

#if MOONMOCK_TSAN_LOCKS
#if canImport(Glibc)
import Glibc
#endif
#else
import Synchronization
#endif

/// A value that one thread at a time reads or changes: every lock in Moonmock is one of these.
///
/// It is `Synchronization.Mutex` in every normal build. Built with `-D MOONMOCK_TSAN_LOCKS`
/// (what `scripts/test --sanitize thread` does) it is a `pthread_mutex_t` instead: on Linux the
/// Mutex locks with bare futex calls that ThreadSanitizer cannot see, so it would report every
/// access the lock guards as a race and hide the real ones.
///
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// let seen = hits.withLock { $0 }
/// ```
public struct Locked<Value>: ~Copyable, @unchecked Sendable {
    #if MOONMOCK_TSAN_LOCKS
    @usableFromInline let box: PthreadBox<Value>
    #else
    @usableFromInline let mutex: Mutex<Value>
    #endif

    /// A lock around `value`.
    @inlinable
    public init(_ value: consuming sending Value) {
        #if MOONMOCK_TSAN_LOCKS
        box = PthreadBox(value)
        #else
        mutex = Mutex(value)
        #endif
    }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    @inlinable
    public borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if MOONMOCK_TSAN_LOCKS
        return try box.withLock(body)
        #else
        return try mutex.withLock(body)
        #endif
    }
}

#if MOONMOCK_TSAN_LOCKS
/// The sanitizer build's lock: a heap `pthread_mutex_t` (it must not move) beside the value.
@usableFromInline
final class PthreadBox<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    @usableFromInline
    init(_ value: consuming Value) {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable
    func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
#endif

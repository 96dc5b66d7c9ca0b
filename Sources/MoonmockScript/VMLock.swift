#if canImport(Glibc)
import Glibc
#endif

/// The lock that gives one request at a time a VM. A glibc adaptive mutex: a thread that finds
/// it held spins for a while before sleeping, and a handler usually runs for a few microseconds,
/// so two server workers sharing one VM wait by spinning instead of by a futex sleep and wakeup
/// (which cost more than the handler).
///
/// ```swift
/// let lock = VMLock()
/// lock.withLock { /* use the VM */ }
/// ```
final class VMLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

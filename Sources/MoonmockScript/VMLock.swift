#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock that gives one request at a time a VM. On Linux a glibc adaptive mutex: a thread that
/// finds it held spins for a while before sleeping, and a handler usually runs for a few
/// microseconds, so two server workers sharing one VM wait by spinning instead of by a futex
/// sleep and wakeup (which cost more than the handler). Elsewhere (Darwin has no adaptive type)
/// the default mutex.
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
        #if os(Linux)
        Self.spinBeforeSleeping(&attributes)   // VMLock+Linux.swift
        #endif
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

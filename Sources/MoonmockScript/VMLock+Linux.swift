#if os(Linux)
import Glibc

// Linux backend of VMLock: glibc's adaptive mutex type, which Darwin does not have.
extension VMLock {
    /// Makes the mutex spin for a while before it sleeps (PTHREAD_MUTEX_ADAPTIVE_NP).
    static func spinBeforeSleeping(_ attributes: inout pthread_mutexattr_t) {
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
    }
}
#endif

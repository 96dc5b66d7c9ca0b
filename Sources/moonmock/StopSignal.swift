#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM as a semaphore: the handler is installed once, before anything is
/// printed, and posts; ``wait()`` takes the post whenever it comes. (A `DispatchSource` is
/// registered asynchronously, and the signal ignored until then: a SIGTERM sent right after
/// the port was printed was lost in 4 of 20 tries, and the server ran on.)
///
/// ```swift
/// StopSignal.install()
/// // … start serving, print the port …
/// StopSignal.wait()
/// ```
enum StopSignal {
    /// Allocated before the handler exists, so that the handler only reads an initialised global.
    nonisolated(unsafe) private static let semaphore: UnsafeMutablePointer<sem_t> = {
        let s = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(s, 0, 0)
        return s
    }()

    static func install() {
        _ = semaphore
        var action = sigaction()
        // sem_post is async-signal-safe; nothing else happens in the handler.
        action.__sigaction_handler.sa_handler = { _ in _ = sem_post(StopSignal.semaphore) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A write to a connection the client has reset must fail with EPIPE, not end the server
        // (the HTTP layers pass MSG_NOSIGNAL; this covers every other write).
        signal(SIGPIPE, SIG_IGN)
    }

    /// Blocks until SIGINT or SIGTERM has arrived (at once if one came already).
    static func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM through a self-pipe: the handler is installed once, before anything is
/// printed, and writes a byte; ``wait()`` reads it whenever it comes. (A `DispatchSource` is
/// registered asynchronously, and the signal ignored until then: a SIGTERM sent right after
/// the port was printed was lost in 4 of 20 tries, and the server ran on. An unnamed semaphore
/// would do on Linux, but `sem_init` always fails on macOS; a pipe works on both.)
///
/// ```swift
/// StopSignal.install()
/// // … start serving, print the port …
/// StopSignal.wait()
/// ```
enum StopSignal {
    /// The pipe, made before the handler exists, so that the handler only reads an initialised
    /// global. `write` is async-signal-safe; nothing else happens in the handler.
    private static let ends: (read: Int32, write: Int32) = {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return (-1, -1) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // A burst of signals never blocks the handler: a full pipe already says "stop".
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        return (fds[0], fds[1])
    }()

    static func install() {
        _ = ends
        // signal() has BSD semantics on glibc and Darwin (the handler stays, calls restart),
        // and no struct whose layout differs between the two as sigaction's does.
        signal(SIGINT) { _ in
            var one: UInt8 = 1
            _ = write(StopSignal.ends.write, &one, 1)
        }
        signal(SIGTERM) { _ in
            var one: UInt8 = 1
            _ = write(StopSignal.ends.write, &one, 1)
        }
        // A parent may have blocked them (Foundation's Process started from an XCTest hands its
        // mask on): unblocked here, on the main thread, before any thread of ours inherits it.
        var handled = sigset_t()
        sigemptyset(&handled)
        sigaddset(&handled, SIGINT)
        sigaddset(&handled, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        // A write to a connection the client has reset must fail with EPIPE, not end the server
        // (the HTTP layer's sockets never raise it; this covers every other write).
        signal(SIGPIPE, SIG_IGN)
    }

    /// Blocks until SIGINT or SIGTERM has arrived (at once if one came already).
    static func wait() {
        var byte: UInt8 = 0
        while read(ends.read, &byte, 1) < 0 && errno == EINTR {}
    }
}

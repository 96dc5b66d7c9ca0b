import CLinuxIO
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, in the shape of Foundation's `Process` (the
/// subset the tests use), for tests that start curl, openssl or the `moonmock` binary.
///
/// It exists because Foundation's `Process.run` reads `/proc/self/fd` into a buffer to close
/// the parent's descriptors in the child, and overruns it when other threads open descriptors
/// meanwhile: the test process, with servers and clients on every core, crashed there in 2 of
/// 9 runs on a loaded machine. Here the child closes everything past 2 itself
/// (`posix_spawn_file_actions_addclosefrom_np`), and nothing is read or sized beforehand.
///
/// ```swift
/// let curl = Subprocess()
/// curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
/// curl.arguments = ["-s", "http://127.0.0.1:8080/ping"]
/// let out = Pipe()
/// curl.standardOutput = out
/// try curl.run()
/// let body = out.fileHandleForReading.readDataToEndOfFile()
/// curl.waitUntilExit()
/// ```
public final class Subprocess: @unchecked Sendable {
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's whole environment; `nil`: this process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle`, or `nil` to share this process's.
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    public private(set) var processIdentifier: pid_t = 0
    private let lock = NSLock()
    private var exit: (status: Int32, reason: TerminationReason)?

    public init() {}

    /// Starts the child; throws when it cannot be started (the error names the executable).
    public func run() throws {
        guard let executable = executableURL?.path else { throw SubprocessError("no executableURL") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [FileHandle] = []
        for (stream, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
            let (fd, parentEnd) = Self.descriptor(stream, forChildInput: target == 0)
            if let fd, fd >= 0 {
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            } else if fd != nil {   // FileHandle.nullDevice has no descriptor of its own
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
            }
            if let parentEnd { parentEnds.append(parentEnd) }
        }
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        if let dir = currentDirectoryURL?.path { posix_spawn_file_actions_addchdir_np(&actions, dir) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with the default signal mask and dispositions, not the test process's.
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + env).forEach { free($0) } }
        var pid = pid_t()
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, env)
        // The child has its copies: the parent keeps only its own ends, so that EOF arrives.
        for end in parentEnds { try? end.close() }
        guard rc == 0 else { throw SubprocessError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        processIdentifier = pid
    }

    /// The descriptor the child gets for a stream, and the pipe end that only the child uses.
    private static func descriptor(_ stream: Any?, forChildInput: Bool) -> (Int32?, FileHandle?) {
        switch stream {
        case let pipe as Pipe:
            let childEnd = forChildInput ? pipe.fileHandleForReading : pipe.fileHandleForWriting
            return (childEnd.fileDescriptor, childEnd)
        case let handle as FileHandle:
            return (handle.fileDescriptor, nil)
        default:
            return (nil, nil)
        }
    }

    /// Reaps the child if it has ended; `true` while it runs.
    public var isRunning: Bool { reap(block: false) == nil }

    /// Waits for the child to end.
    public func waitUntilExit() {
        while reap(block: false) == nil { usleep(2_000) }
    }

    /// Waits at most `seconds`; `false` when the child still runs.
    public func wait(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while reap(block: false) == nil {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// The exit code, or the signal that ended the child (as `Process` reports it).
    public var terminationStatus: Int32 { reap(block: false)?.status ?? -1 }
    public var terminationReason: TerminationReason { reap(block: false)?.reason ?? .exit }

    /// Sends `SIGTERM`.
    public func terminate() { signal(SIGTERM) }

    /// Sends `SIGTERM` and waits up to `seconds`, then sends `SIGKILL`: a test never waits
    /// without end for a child that ignores the signal. `true` when `SIGTERM` was enough
    /// (or the child had ended already).
    @discardableResult
    public func stop(within seconds: Double = 10) -> Bool {
        guard processIdentifier > 0 else { return true }
        terminate()
        if wait(seconds: seconds) { return true }
        signal(SIGKILL)
        waitUntilExit()
        return false
    }

    /// Sends `sig` to the child while it runs.
    public func signal(_ sig: Int32) {
        lock.withLock { if exit == nil && processIdentifier > 0 { _ = kill(processIdentifier, sig) } }
    }

    private func reap(block: Bool) -> (status: Int32, reason: TerminationReason)? {
        lock.withLock {
            if let exit { return exit }
            guard processIdentifier > 0 else { return nil }
            var status: Int32 = 0
            let rc = waitpid(processIdentifier, &status, block ? 0 : WNOHANG)
            guard rc == processIdentifier else { return nil }
            let signalled = status & 0x7f
            exit = signalled == 0 ? ((status >> 8) & 0xff, .exit) : (signalled, .uncaughtSignal)
            return exit
        }
    }
}

/// Why a ``Subprocess`` did not start.
public struct SubprocessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

import Foundation

/// What a loop watches a descriptor for, and what a wait reports. The bits are epoll's, so the
/// Linux backend hands masks to the kernel and back unchanged; the kqueue and poll(2) backends
/// translate them.
struct PollMask: OptionSet, Sendable {
    let rawValue: UInt32
    /// Readable (or a connection waiting on a listening socket).
    static let input = PollMask(rawValue: 0x001)
    static let output = PollMask(rawValue: 0x004)
    /// Reported whether asked for or not.
    static let error = PollMask(rawValue: 0x008)
    /// Both directions closed; reported whether asked for or not.
    static let hangup = PollMask(rawValue: 0x010)
    /// The peer shut down its sending side (its FIN has arrived).
    static let peerHangup = PollMask(rawValue: 0x2000)
    /// Report changes, not states: the loop reads until the socket is empty and writes until it
    /// is full, so it needs no reminder. Backends without edges (poll) ignore it: the loop is
    /// correct level-triggered too, since it drains every descriptor and drops `output` when
    /// it has nothing to write.
    static let edge = PollMask(rawValue: 0x8000_0000)
}

/// One descriptor's readiness from a wait (a descriptor appears at most once per wait).
struct PollEvent {
    var fd: Int32
    var mask: PollMask
}

/// The readiness API under an event loop: epoll on Linux (the default), kqueue on Darwin, and
/// poll(2), which runs on both (`MOONMOCK_POLLER=poll`; on Linux it is how the suite proves the
/// code path a Mac's loops share with it). One per loop, used by its thread only, but ``wake()``,
/// which any thread may call.
protocol Poller: AnyObject {
    /// `epoll`, `kqueue` or `poll`, as `GET /__moonmock/health` reports it.
    var name: String { get }
    /// The descriptor ``wake()`` makes readable: it is watched for `input`, and the loop calls
    /// ``drainWake()`` when it is reported.
    var wakeDescriptor: Int32 { get }
    func add(_ fd: Int32, _ mask: PollMask)
    func modify(_ fd: Int32, _ mask: PollMask)
    /// Stops watching `fd`, which stays open.
    func remove(_ fd: Int32)
    /// `fd` is about to be closed (epoll and kqueue forget it by themselves on close).
    func closing(_ fd: Int32)
    /// Waits up to `timeoutMilliseconds` (-1: no limit); fills `events` and returns how many,
    /// or -1 with `errno` set.
    func wait(into events: UnsafeMutableBufferPointer<PollEvent>, timeoutMilliseconds: Int32) -> Int
    /// Wakes a wait in progress, from any thread.
    func wake()
    func drainWake()
    /// Releases the poller's descriptors.
    func close()
}

enum PollerChoice {
    /// The poller `MOONMOCK_POLLER` names (`epoll`, `kqueue`, `poll`), else the platform's own.
    /// Throws for a name this platform does not have.
    static func make() throws -> any Poller {
        let asked = ProcessInfo.processInfo.environment["MOONMOCK_POLLER"] ?? ""
        switch asked {
        case "poll": return try PollPoller()
        case "", nativePollerName: return try makeNativePoller()
        default:
            throw ServerError.configuration("MOONMOCK_POLLER=\(asked) is not a poller of this platform (\(nativePollerName) or poll)")
        }
    }
}

/// A pipe whose read end a poller watches: one byte written wakes the wait. Used by the
/// kqueue and poll(2) backends (epoll has eventfd).
struct WakePipe {
    let readEnd: Int32
    let writeEnd: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ServerError.listen("cannot create an event loop (\(String(cString: strerror(errno))))") }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    func wake() {
        var one: UInt8 = 1
        _ = write(writeEnd, &one, 1)   // a full pipe already wakes the loop
    }

    func drain() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { read(readEnd, $0.baseAddress, $0.count) }) == 32 {}
    }

    func close() {
        _ = Foundation.close(readEnd)
        _ = Foundation.close(writeEnd)
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// poll(2): in POSIX, so the same code runs on Linux and Darwin. Level-triggered (``PollMask/edge``
/// is ignored) and O(descriptors) per wait, which a development server's few hundred
/// connections do not notice. A closed descriptor must be ``closing(_:)``'d first; one that
/// is not (`POLLNVAL`) is dropped rather than reported on every wait.
final class PollPoller: Poller {
    let name = "poll"
    private let pipe: WakePipe
    private var fds: [pollfd] = []
    /// Where each descriptor is in `fds` (indexed by descriptor; -1: not watched).
    private var slots: [Int] = []
    /// Where the next wait starts reporting, so that with more ready descriptors than room in
    /// `events` none waits for ever.
    private var start = 0

    init() throws {
        pipe = try WakePipe()
        add(pipe.readEnd, .input)
    }

    var wakeDescriptor: Int32 { pipe.readEnd }

    func add(_ fd: Int32, _ mask: PollMask) {
        if Int(fd) >= slots.count { slots += Array(repeating: -1, count: Int(fd) + 64 - slots.count) }
        if slots[Int(fd)] >= 0 { return modify(fd, mask) }
        slots[Int(fd)] = fds.count
        fds.append(pollfd(fd: fd, events: Self.events(mask), revents: 0))
    }

    func modify(_ fd: Int32, _ mask: PollMask) {
        guard Int(fd) < slots.count, slots[Int(fd)] >= 0 else { return add(fd, mask) }
        fds[slots[Int(fd)]].events = Self.events(mask)
    }

    func remove(_ fd: Int32) {
        guard Int(fd) < slots.count, case let i = slots[Int(fd)], i >= 0 else { return }
        let last = fds.removeLast()
        if i < fds.count {
            fds[i] = last
            slots[Int(last.fd)] = i
        }
        slots[Int(fd)] = -1
    }

    func closing(_ fd: Int32) { remove(fd) }

    func wait(into events: UnsafeMutableBufferPointer<PollEvent>, timeoutMilliseconds: Int32) -> Int {
        let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        if ready <= 0 { return Int(ready) }
        var count = 0
        var dropped: [Int32] = []
        let n = fds.count
        if start >= n { start = 0 }
        var i = start
        for _ in 0..<n {
            let entry = fds[i]
            if entry.revents != 0 {
                if entry.revents & Int16(POLLNVAL) != 0 {
                    dropped.append(entry.fd)
                } else if count < events.count {
                    events[count] = PollEvent(fd: entry.fd, mask: Self.mask(entry.revents))
                    count += 1
                } else {
                    start = i   // reported first next time
                    break
                }
            }
            i = i + 1 == n ? 0 : i + 1
        }
        dropped.forEach(remove)
        return count
    }

    func wake() { pipe.wake() }
    func drainWake() { pipe.drain() }
    func close() { pipe.close() }

    private static func events(_ mask: PollMask) -> Int16 {
        var events: Int16 = 0
        // Not for peerHangup alone: a connection that paused reading must not be woken by its
        // unread bytes (its peer's FIN is seen once it reads again).
        if mask.contains(.input) { events |= Int16(POLLIN) }
        if mask.contains(.output) { events |= Int16(POLLOUT) }
        return events
    }

    /// A peer's FIN shows as `POLLIN` (a read then returns 0); `POLLHUP` is both directions gone.
    private static func mask(_ revents: Int16) -> PollMask {
        var mask: PollMask = []
        if revents & Int16(POLLIN) != 0 { mask.insert(.input) }
        if revents & Int16(POLLOUT) != 0 { mask.insert(.output) }
        if revents & Int16(POLLERR) != 0 { mask.insert(.error) }
        if revents & Int16(POLLHUP) != 0 { mask.insert(.hangup) }
        return mask
    }
}

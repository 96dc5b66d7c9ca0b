#if os(Linux)
import CLinuxIO
import Glibc

// Linux backend: epoll, edge-triggered for connections, woken through an eventfd.

let nativePollerName = "epoll"

func makeNativePoller() throws -> any Poller { try EpollPoller() }

final class EpollPoller: Poller {
    let name = "epoll"
    private let epoll: Int32
    let wakeDescriptor: Int32
    private let native: UnsafeMutableBufferPointer<epoll_event>

    init() throws {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard epoll >= 0, wakeDescriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            if epoll >= 0 { Glibc.close(epoll) }
            if wakeDescriptor >= 0 { Glibc.close(wakeDescriptor) }
            throw ServerError.listen("cannot create an event loop (\(reason))")
        }
        native = .allocate(capacity: 256)
        add(wakeDescriptor, .input)
    }

    deinit { native.deallocate() }

    func add(_ fd: Int32, _ mask: PollMask) { control(EPOLL_CTL_ADD, fd, mask) }
    func modify(_ fd: Int32, _ mask: PollMask) { control(EPOLL_CTL_MOD, fd, mask) }
    func remove(_ fd: Int32) { epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil) }
    /// Closing the only descriptor of a socket takes it out of the epoll set.
    func closing(_ fd: Int32) {}

    private func control(_ op: Int32, _ fd: Int32, _ mask: PollMask) {
        var event = epoll_event()
        event.events = mask.rawValue   // PollMask's bits are epoll's
        event.data.u64 = UInt64(UInt32(bitPattern: fd))
        epoll_ctl(epoll, op, fd, &event)
    }

    func wait(into events: UnsafeMutableBufferPointer<PollEvent>, timeoutMilliseconds: Int32) -> Int {
        let count = Int(epoll_wait(epoll, native.baseAddress, Int32(min(native.count, events.count)), timeoutMilliseconds))
        for i in 0..<max(0, count) {
            let event = native[i]
            events[i] = PollEvent(fd: Int32(truncatingIfNeeded: event.data.u64), mask: PollMask(rawValue: event.events))
        }
        return count
    }

    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, 8)
    }

    func drainWake() {
        var value: UInt64 = 0
        _ = read(wakeDescriptor, &value, 8)
    }

    func close() {
        Glibc.close(epoll)
        Glibc.close(wakeDescriptor)
    }
}
#endif

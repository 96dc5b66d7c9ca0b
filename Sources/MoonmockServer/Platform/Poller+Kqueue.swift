#if canImport(Darwin)
import Darwin

// Darwin backend: kqueue, with EV_CLEAR for edges, woken through a pipe. Not compiled on Linux
// (docs/apple.md says what is verified where); the loop logic it serves is the one poll(2)
// runs here. It assumes macOS's kqueue: a descriptor's filters go when it is closed.

let nativePollerName = "kqueue"

func makeNativePoller() throws -> any Poller { try KqueuePoller() }

final class KqueuePoller: Poller {
    let name = "kqueue"
    private let queue: Int32
    private let pipe: WakePipe
    private let native: UnsafeMutableBufferPointer<kevent>
    /// Where each descriptor's event went in this wait's output (read and write filters merge).
    private var merged: [Int32: Int] = [:]

    init() throws {
        queue = kqueue()
        guard queue >= 0 else { throw ServerError.listen("cannot create an event loop (\(String(cString: strerror(errno))))") }
        _ = fcntl(queue, F_SETFD, FD_CLOEXEC)
        pipe = try WakePipe()
        native = .allocate(capacity: 256)
        add(pipe.readEnd, .input)
    }

    deinit { native.deallocate() }

    var wakeDescriptor: Int32 { pipe.readEnd }

    func add(_ fd: Int32, _ mask: PollMask) { modify(fd, mask) }

    /// EV_ADD on a filter that exists changes it: both filters are set each time.
    func modify(_ fd: Int32, _ mask: PollMask) {
        let clear = mask.contains(.edge) ? UInt16(EV_CLEAR) : 0
        let read = UInt16(EV_ADD) | clear | UInt16(mask.contains(.input) || mask.contains(.peerHangup) ? EV_ENABLE : EV_DISABLE)
        let write = UInt16(EV_ADD) | clear | UInt16(mask.contains(.output) ? EV_ENABLE : EV_DISABLE)
        var changes = [
            kevent(ident: UInt(fd), filter: Int16(EVFILT_READ), flags: read, fflags: 0, data: 0, udata: nil),
            kevent(ident: UInt(fd), filter: Int16(EVFILT_WRITE), flags: write, fflags: 0, data: 0, udata: nil),
        ]
        _ = kevent(queue, &changes, 2, nil, 0, nil)
    }

    func remove(_ fd: Int32) {
        var changes = [
            kevent(ident: UInt(fd), filter: Int16(EVFILT_READ), flags: UInt16(EV_DELETE), fflags: 0, data: 0, udata: nil),
            kevent(ident: UInt(fd), filter: Int16(EVFILT_WRITE), flags: UInt16(EV_DELETE), fflags: 0, data: 0, udata: nil),
        ]
        _ = kevent(queue, &changes, 2, nil, 0, nil)
    }

    func closing(_ fd: Int32) {}

    func wait(into events: UnsafeMutableBufferPointer<PollEvent>, timeoutMilliseconds: Int32) -> Int {
        var timeout = timespec(tv_sec: Int(timeoutMilliseconds / 1000), tv_nsec: Int(timeoutMilliseconds % 1000) * 1_000_000)
        let n = Int(kevent(queue, nil, 0, native.baseAddress, Int32(min(native.count, events.count)),
                           timeoutMilliseconds < 0 ? nil : &timeout))
        if n <= 0 { return n }
        merged.removeAll(keepingCapacity: true)
        var count = 0
        for i in 0..<n {
            let event = native[i]
            let fd = Int32(event.ident)
            var mask: PollMask = []
            if event.flags & UInt16(EV_ERROR) != 0 { mask.insert(.error) }
            if event.filter == Int16(EVFILT_READ) {
                mask.insert(.input)
                if event.flags & UInt16(EV_EOF) != 0 { mask.insert(.peerHangup) }
            } else if event.filter == Int16(EVFILT_WRITE) {
                mask.insert(.output)
                if event.flags & UInt16(EV_EOF) != 0 { mask.insert(.hangup) }   // the peer is gone
            }
            if let at = merged[fd] {
                events[at].mask.formUnion(mask)
            } else {
                merged[fd] = count
                events[count] = PollEvent(fd: fd, mask: mask)
                count += 1
            }
        }
        return count
    }

    func wake() { pipe.wake() }
    func drainWake() { pipe.drain() }

    func close() {
        _ = Darwin.close(queue)
        pipe.close()
    }
}
#endif

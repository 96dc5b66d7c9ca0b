#if os(Linux)
import CLinuxIO
import Glibc

/// Linux backend of the socket calls the event loops make (Darwin's are in SocketCalls+Darwin.swift,
/// with the same names): accept4, MSG_MORE, SIOCOUTQ, TCP_QUICKACK and TCP_DEFER_ACCEPT.
enum SocketCalls {
    /// Each worker listens on a socket of its own, in one SO_REUSEPORT group: the kernel spreads
    /// new connections over them.
    static let sharedListener = false

    /// A connection taken off `listener`, non-blocking and close-on-exec; -1 with `errno` set.
    @inline(__always)
    static func accept(_ listener: Int32) -> Int32 {
        accept4(listener, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
    }

    /// `send` without SIGPIPE; `closing`: the connection closes right after these bytes
    /// (MSG_MORE holds them for the FIN).
    @inline(__always)
    static func send(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, closing: Bool = false) -> Int {
        mm_io_send(fd, bytes, count, Int32(MSG_NOSIGNAL) | (closing ? Int32(MSG_MORE) : 0))
    }

    @inline(__always)
    static func receive(_ fd: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int, peek: Bool = false) -> Int {
        mm_io_recv(fd, bytes, count, peek ? Int32(MSG_PEEK) : 0)
    }

    /// Bytes the peer has not yet acknowledged (SIOCOUTQ); -1 when unknown.
    static func unsentBytes(_ fd: Int32) -> Int32 { mm_unsent_bytes(fd) }

    /// Gives freed heap memory back to the system: glibc keeps large freed blocks (its mmap
    /// threshold rises past the sizes it has seen), so a burst of big answers would stay in RSS.
    static func returnFreedMemory() { _ = mm_malloc_trim() }

    /// Acknowledges what the peer sent so far now, not after the delayed-ACK timer.
    static func acknowledgeNow(_ fd: Int32) { setTCPOption(fd, TCP_QUICKACK, 1) }

    /// A connection is taken in once its first bytes are there (for at most 1 s): one wakeup
    /// per connection instead of two, and the request is read right after `accept4`. New
    /// connections start in delayed-ACK mode: a request that arrives whole is acknowledged by
    /// its response instead of by a packet of its own (7 packets per `Connection: close`
    /// exchange, not 8). A request that arrives in part is acknowledged at once (`readable`).
    static func prepareListener(_ fd: Int32) {
        setTCPOption(fd, TCP_DEFER_ACCEPT, 1)
        setTCPOption(fd, TCP_QUICKACK, 0)
    }

    /// A listening socket bound to `address` (one of the SO_REUSEPORT group); -1 with `errno`.
    static func listen(_ address: UnsafePointer<sockaddr>, _ length: socklen_t, backlog: Int32) -> Int32 {
        mm_listen(address, length, backlog)
    }

    /// 0 when no one listens on `address`, else -1 with `errno` (see mm_port_free).
    static func portFree(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { mm_port_free(address, length) }

    static func port(of fd: Int32) -> Int { Int(mm_socket_port(fd)) }

    /// The soft limit on open descriptors (glibc's RLIMIT_NOFILE is an enum, Darwin's a macro).
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(min(limit.rlim_cur, 1 << 20)) : 1024
    }

    /// Raises the soft descriptor limit to the hard one.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    private static func setTCPOption(_ fd: Int32, _ option: Int32, _ value: Int32) {
        var value = value
        setsockopt(fd, Int32(IPPROTO_TCP), option, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
#endif

#if canImport(Darwin)
import Darwin

/// Darwin backend of the socket calls the event loops make (the same names as
/// SocketCalls+Linux.swift). Not compiled on Linux: docs/apple.md says what is verified where.
/// Assumes: no accept4 (accept + fcntl), no SOCK_CLOEXEC, SO_NOSIGPIPE per socket instead of
/// MSG_NOSIGNAL, SO_NWRITE for unsent bytes, no TCP_QUICKACK / TCP_DEFER_ACCEPT / MSG_MORE, and
/// SO_REUSEPORT that does not spread connections (so the workers share one listening socket).
enum SocketCalls {
    /// One listening socket, a descriptor of it per worker (dup): every loop accepts from it
    /// until EAGAIN, and a loop that loses the race sees EAGAIN.
    static let sharedListener = true

    static func accept(_ listener: Int32) -> Int32 {
        let fd = Darwin.accept(listener, nil, nil)
        if fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        return fd
    }

    static func send(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, closing: Bool = false) -> Int {
        Darwin.send(fd, bytes, count, 0)
    }

    static func receive(_ fd: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int, peek: Bool = false) -> Int {
        recv(fd, bytes, count, peek ? MSG_PEEK : 0)
    }

    /// SO_NWRITE: bytes in the send buffer not yet sent or acknowledged [to check on a Mac].
    static func unsentBytes(_ fd: Int32) -> Int32 {
        var n: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_NWRITE, &n, &length) == 0 ? n : -1
    }

    static func acknowledgeNow(_ fd: Int32) {}

    /// Darwin's allocator returns large freed blocks by itself (they are mapped one by one).
    static func returnFreedMemory() {}
    static func prepareListener(_ fd: Int32) {}

    static func listen(_ address: UnsafePointer<sockaddr>, _ length: socklen_t, backlog: Int32) -> Int32 {
        let fd = bound(address, length)
        if fd >= 0 && Darwin.listen(fd, backlog) != 0 {
            let saved = errno
            close(fd)
            errno = saved
            return -1
        }
        return fd
    }

    static func portFree(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        let fd = bound(address, length)
        if fd >= 0 { close(fd) }
        return fd >= 0 ? 0 : -1
    }

    static func port(of fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard ok == 0 else { return -1 }
        return withUnsafePointer(to: &storage) { pointer in
            if storage.ss_family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// macOS's soft limit is often 256; `OPEN_MAX` caps what setrlimit accepts.
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        return getrlimit(RLIMIT_NOFILE, &limit) == 0 ? Int(min(limit.rlim_cur, 1 << 20)) : 256
    }

    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, rlim_t(OPEN_MAX))
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = wanted
        _ = setrlimit(RLIMIT_NOFILE, &limit)
    }

    /// A socket bound to `address` (SO_REUSEADDR, IPv6 only for IPv6), close-on-exec.
    private static func bound(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        let fd = socket(Int32(address.pointee.sa_family), SOCK_STREAM, 0)
        guard fd >= 0 else { return -1 }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size) != 0
            || (Int32(address.pointee.sa_family) == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, size) != 0)
            || bind(fd, address, length) != 0 {
            let saved = errno
            close(fd)
            errno = saved
            return -1
        }
        return fd
    }
}
#endif

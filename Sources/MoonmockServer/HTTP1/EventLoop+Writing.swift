import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// Writing: answers into the socket (or its TLS session), the rest kept until it drains.
extension EventLoop {
    // MARK: writing

    /// Sends `bytes` now, or queues what the socket does not take and waits for it to drain.
    /// `more`: the connection closes right after these bytes (MSG_MORE; the close pushes them).
    func write(_ c: Connection, _ bytes: [UInt8], more: Bool = false) {
        if c.closed { return }
        if !c.pending.isEmpty {
            c.pending.append(contentsOf: bytes)
            return account(c)
        }
        let sent = bytes.withUnsafeBytes { sendAll(c, $0, more: more) }
        if sent == bytes.count { return }
        if errno != EAGAIN && errno != EWOULDBLOCK { return closeConnection(c) }
        c.pending = Array(bytes[sent...])
        account(c)
        updateInterest(c)
    }

    /// Keeps the loop's count of unsent output (what ``send(_:_:head:http10:)`` bounds by
    /// `--max-pending-output`) in step with `c`'s; a large buffer let go is given back to the system.
    func account(_ c: Connection) {
        // The buffer's capacity, not its count: what is sent stays allocated until the buffer goes.
        let now = c.closed || c.pending.isEmpty ? 0 : c.pending.capacity
        guard now != c.counted else { return }
        unsentOutput += now - c.counted
        c.counted = now
    }

    /// After a large output buffer is freed: its memory back to the system, at most twice a
    /// second (what is freed meanwhile goes back at the next sweep).
    func released(capacity: Int) {
        guard capacity > Self.largeAnswer * 16 else { return }
        memoryToReturn = true
        returnMemoryIfDue(DispatchTime.now().uptimeNanoseconds)
    }

    func returnMemoryIfDue(_ now: UInt64) {
        guard memoryToReturn, now &- lastMemoryReturn > 500_000_000 else { return }
        memoryToReturn = false
        lastMemoryReturn = now
        SocketCalls.returnFreedMemory()
    }

    /// Sends as much of `bytes` as the socket takes; returns how much that was (`errno` tells why
    /// it stopped short).
    func sendAll(_ c: Connection, _ bytes: UnsafeRawBufferPointer, more: Bool) -> Int {
        // The send timeout counts from an answer's last progress, or from when it began to wait.
        if c.pending.isEmpty { c.lastSent = turnStarted }
        var sent = 0
        defer { if sent > 0 { c.lastSent = turnStarted } }
        if let session = c.tls {
            while sent < bytes.count {
                let n = session.write(bytes.baseAddress! + sent, bytes.count - sent)
                if n > 0 { sent += n; continue }
                switch TLSSession.Outcome(n) {
                case .wantWrite, .wantRead: errno = EAGAIN
                case .closed, .failed:
                    c.tlsFailed = true
                    errno = EPIPE
                }
                break
            }
            return sent
        }
        while sent < bytes.count {
            let n = SocketCalls.send(c.fd, bytes.baseAddress! + sent, bytes.count - sent, closing: more)
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        return sent
    }

    /// Sends the answers this turn has produced. Writing them one after another at the end of the
    /// turn, rather than each as soon as it is ready, means that a client waiting on several
    /// connections (a load generator, a browser, an app's connection pool) is woken once for the
    /// batch instead of once per answer, and that pipelined answers leave in one `send`. The
    /// wakeups are kernel work charged to the sender: with `wrk -c32` on GraphQL keep-alive this
    /// took about 1 µs of kernel time off each request and added ~10% throughput. An answer waits
    /// at most for the rest of its turn; when the loop is quiet, a turn is that one request.
    func flushCorked() {
        guard !corked.isEmpty else { return }
        var i = 0
        while i < corked.count {   // by index: a connection that resumes reading may cork again
            let c = corked[i]
            i += 1
            if c.corked { sendPending(c) }
        }
        corked.removeAll(keepingCapacity: true)
    }

    /// Sends a corked connection's `pending` bytes now; what the socket does not take waits for
    /// `output` readiness as any other unsent output does.
    func sendPending(_ c: Connection) {
        c.corked = false
        if c.closed || c.pending.isEmpty { return }
        let sent = c.pending.withUnsafeBytes { sendAll(c, $0, more: c.closeWhenFlushed) }
        if sent == c.pending.count {
            let capacity = c.pending.capacity
            c.pending.removeAll(keepingCapacity: capacity <= Self.keptOutputCapacity)
            if c.counted != 0 { account(c) }
            if capacity > Self.keptOutputCapacity { released(capacity: capacity) }
            return drained(c)
        }
        if errno != EAGAIN && errno != EWOULDBLOCK { return closeConnection(c) }
        c.pending.removeFirst(sent)
        account(c)
        updateInterest(c)
    }

    func flush(_ c: Connection) {
        let pending = c.pending
        c.pending = []
        account(c)
        write(c, pending)
        if !c.closed && c.pending.isEmpty { drained(c) }
    }

    /// All of a connection's output has left: it closes if that was its last answer, or reads
    /// again if it had stopped for the output to drain.
    func drained(_ c: Connection) {
        if c.closeWhenFlushed { return c.lingerWhenFlushed ? lingerClose(c) : closeConnection(c) }
        if case .http2(let h2) = c.state {
            updateInterest(c)
            return flushHTTP2(c, h2)
        }
        if c.readPaused && c.isReading && !c.peerClosed {
            c.readPaused = false
            updateInterest(c)
            resume(c)
        } else {
            updateInterest(c)
        }
    }

    func updateInterest(_ c: Connection) {
        // Once the client has finished sending, its side stays readable (EOF): not watched.
        var mask: PollMask = c.peerClosed ? Connection.edgeTriggered : [Connection.edgeTriggered, .peerHangup]
        if !c.readPaused && !c.peerClosed { mask.insert(.input) }
        if !c.pending.isEmpty || c.tlsReadWantsWrite { mask.insert(.output) }
        if mask != c.interest {
            c.interest = mask
            if c.registered { watch(c.fd, mask, add: false) }
        }
    }

    func closeConnection(_ c: Connection) {
        guard !c.closed else { return }
        c.closed = true
        if case .streaming(let cursor, _, _) = c.state { endStream(cursor, "client left") }
        if case .websocket(let ws) = c.state { socketEnded(ws, code: 1006, reason: "", how: "connection lost") }
        if case .http2(let h2) = c.state { endHTTP2(c, h2) }
        if let waiting = c.waiting {
            c.waiting = nil
            waiting.cancel()   // the client left: its handler's wait ends, and the handler with it
        }
        if c.active {
            c.active = false
            inFlight.subtract(1, ordering: .relaxed)
        }
        if let session = c.tls {
            session.free(graceful: !c.tlsFailed)
            c.tls = nil
        }
        // Closing the only descriptor of the socket takes it out of epoll's and kqueue's sets; poll(2)'s is ours.
        if c.registered { poller.closing(c.fd) }
        close(c.fd)
        account(c)
        let capacity = c.pending.capacity
        c.pending = []
        released(capacity: capacity)
        connections[Int(c.fd)] = nil
        connectionCount.subtract(1, ordering: .relaxed)
    }
}

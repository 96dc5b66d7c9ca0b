import CLinuxIO
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MoonmockCore
import Synchronization

/// One worker of the server's own HTTP/1.1 layer: a thread with its own epoll instance, its own
/// listening socket (one of a `SO_REUSEPORT` group, so the kernel spreads connections over the
/// workers), its connections and its timers. A connection lives on one loop for its whole life,
/// so nothing here is locked except the few commands other threads send (stop, release).
///
/// A request is read with one `recv`, parsed in place, answered by the engine on this thread
/// and written with one `send` at the end of the loop's turn (see ``flushCorked()``); delays,
/// dribbled bodies and held connections are timers of this loop, never a blocked thread.
final class EventLoop: @unchecked Sendable {
    /// The server outlives its loops (``MoonmockServer/stop(drainSeconds:)`` joins them), and its
    /// reference count is shared by every worker: borrowed, never retained per request.
    private let serverRef: Unmanaged<MoonmockServer>
    private let maxBodyBytes: Int
    private let idleTimeout: Int
    let epoll: Int32
    private let wakeup: Int32
    private var listener: Int32
    /// Open connections, read by the health endpoint from other threads.
    let connectionCount = Atomic<Int>(0)
    /// Requests of this loop in progress (the server sums the loops': no counter shared by
    /// the workers' cores).
    let inFlight = Atomic<Int>(0)

    private struct Commands {
        var stopAccepting = false
        var exit = false
        /// The loop has ended and closed its descriptors.
        var closed = false
    }
    private let commands = Mutex(Commands())
    private let finished = DispatchSemaphore(value: 0)

    // Owned by the loop's thread.
    private var connections: [Connection?] = []
    private var timers = TimerHeap()
    private var nextSerial: UInt64 = 0
    private var stopping = false
    private let clock: HTTPDate
    /// When the current turn of the loop began (monotonic nanoseconds).
    private var turnStarted: UInt64 = 0
    private let statusLines = StatusLines()
    private let fieldBytes = FieldBytes()
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private var output: [UInt8] = []
    /// The last request target and `Host` value made into strings (see ``RecentStrings``).
    private var recent = RecentStrings()
    /// The last authority and its split (a client sends the same `Host` on every request).
    private var lastAuthority: (value: String, split: (host: String, port: Int?)) = ("", ("", nil))
    /// The last request answered: the next one is built in its storage when nothing else holds it.
    private var spareRequest: MockRequest?
    /// Keep-alive connections whose answers wait in `pending` for the end of this turn.
    private var corked: [Connection] = []
    let defaultAuthority: String
    /// Set for HTTPS: every connection reads and writes through a session made from it.
    private let tls: TLSContext?
    /// `https` with ``tls``, else `http`: the scheme of every request this loop builds.
    private let scheme: String

    private static let headLimit = 16 * 1024
    /// Unsent response bytes past which a connection's further requests wait.
    private static let outputLimit = 1 << 20
    /// A connection's emptied output buffer is kept for its next answer up to this size.
    private static let keptOutputCapacity = 16 * 1024
    /// The largest body whose request the loop keeps for the next one to be built in.
    private static let keptBodyBytes = 64 * 1024

    /// Takes ownership of `listener` (a bound, listening socket).
    init(server: MoonmockServer, listener: Int32, authority: String) throws {
        self.serverRef = Unmanaged.passUnretained(server)
        self.maxBodyBytes = server.configuration.maxBodyBytes
        self.idleTimeout = server.configuration.idleTimeout
        self.listener = listener
        self.defaultAuthority = authority
        self.tls = server.tls
        self.scheme = server.tls == nil ? "http" : "https"
        clock = HTTPDate(server.engine.environment)
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard epoll >= 0, wakeup >= 0 else {
            let reason = String(cString: strerror(errno))
            if epoll >= 0 { close(epoll) }
            if wakeup >= 0 { close(wakeup) }
            throw ServerError.listen("cannot create an event loop (\(reason))")
        }
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        // A connection is taken in once its first bytes are there (for at most 1 s): one wakeup
        // per connection instead of two, and the request is read right after `accept4`.
        Self.setTCPOption(listener, TCP_DEFER_ACCEPT, 1)
        // New connections start in delayed-ACK mode: a request that arrives whole is acknowledged
        // by its response instead of by a packet of its own (7 packets per `Connection: close`
        // exchange, not 8). A request that arrives in part is acknowledged at once (`readable`).
        Self.setTCPOption(listener, TCP_QUICKACK, 0)
        watch(listener, EPOLLIN.rawValue, add: true)
        watch(wakeup, EPOLLIN.rawValue, add: true)
        output.reserveCapacity(16 * 1024)
    }

    deinit {
        scratch.deallocate()
    }

    /// Runs the loop on a thread of its own.
    func start(name: String) {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops accepting: closes the listening socket, the idle connections and the held ones;
    /// connections with a request in progress are closed after their response.
    func stopAccepting() {
        commands.withLock { c in
            c.stopAccepting = true
            poke(c)
        }
    }

    /// Ends the loop (closing every connection) and waits for its thread.
    func exitAndJoin() {
        commands.withLock { c in
            c.exit = true
            poke(c)
        }
        finished.wait()
    }

    /// Releases a loop whose thread never started (a later worker failed to start).
    func discard() { shutDown() }

    /// Wakes the loop's `epoll_wait`, unless the loop has ended (called under the command lock).
    private func poke(_ commands: Commands) {
        guard !commands.closed else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wakeup, &one, 8)
    }

    // MARK: the loop

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var lastSweep = DispatchTime.now().uptimeNanoseconds
        var now = lastSweep
        while true {
            var timeout = 1000
            if let next = timers.nextDeadline {
                timeout = next <= now ? 0 : min(timeout, Int((next - now + 999_999) / 1_000_000))
            }
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), Int32(timeout)) }
            if count < 0 && errno != EINTR { break }
            // One clock reading for every connection this turn serves (their idle timeouts).
            turnStarted = DispatchTime.now().uptimeNanoseconds
            for i in 0..<max(0, Int(count)) {
                let event = events[i]
                let fd = Int32(truncatingIfNeeded: event.data.u64)
                if fd == listener { accept(events: Int(count)) } else if fd == wakeup {
                    if handleCommands() { return shutDown() }
                } else {
                    handle(fd, event.events)
                }
            }
            flushCorked()
            let after = DispatchTime.now().uptimeNanoseconds
            now = after
            fireTimers(after)
            flushCorked()
            if after - lastSweep >= 1_000_000_000 {
                lastSweep = after
                sweepIdle(after)
            }
        }
        shutDown()
    }

    /// `true` when the loop should end.
    private func handleCommands() -> Bool {
        var value: UInt64 = 0
        _ = read(wakeup, &value, 8)
        let pending = commands.withLock { c in
            defer { c.stopAccepting = false }
            return c
        }
        if pending.stopAccepting && !stopping {
            stopping = true
            if listener >= 0 {
                epoll_ctl(epoll, EPOLL_CTL_DEL, listener, nil)
                close(listener)
                listener = -1
            }
            for case let connection? in connections {
                switch connection.state {
                case .held: closeConnection(connection)
                case .head where connection.input.isEmpty && connection.pending.isEmpty: closeConnection(connection)
                case .head where connection.input.isEmpty:
                    // Idle but for an answer not yet sent: closes once it has been.
                    connection.keepAlive = false
                    connection.closeWhenFlushed = true
                default: connection.keepAlive = false
                }
            }
        }
        return pending.exit
    }

    private func shutDown() {
        flushCorked()
        if listener >= 0 { close(listener); listener = -1 }
        for case let connection? in connections { closeConnection(connection) }
        // Under the command lock: a stop arriving now must not write to a descriptor number
        // that another file may already reuse.
        commands.withLock { c in
            c.closed = true
            close(epoll)
            close(wakeup)
        }
    }

    /// Takes queued connections and reads each one's request at once (accepted deferred, it is
    /// most likely there). How many per readiness event follows how busy the loop is (`events`
    /// reported by this wait): one while it is quiet, as nginx does, so that no `accept4` is
    /// spent finding the queue empty; up to 64 when a turn of the loop is long, or a burst of
    /// new connections would wait a whole turn each (with 1,000 clients at once, seconds).
    private func accept(events: Int) {
        for _ in 0..<min(64, max(1, events / 4)) {
            let fd = accept4(listener, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
            if fd < 0 {
                let error = errno
                if error == EINTR || error == ECONNABORTED { continue }
                if error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM {
                    // Out of descriptors: the pending connection stays queued and the socket
                    // stays readable. Stop watching it for a moment instead of spinning.
                    epoll_ctl(epoll, EPOLL_CTL_DEL, listener, nil)
                    timers.push(TimerHeap.Entry(deadline: DispatchTime.now().uptimeNanoseconds + 100_000_000,
                                                fd: listener, serial: 0))
                }
                return   // EAGAIN (the queue is empty), or out of descriptors
            }
            nextSerial += 1
            let connection = Connection(fd: fd, serial: nextSerial, now: turnStarted)
            if let tls {
                guard let session = TLSSession(tls, fd: fd) else { close(fd); continue }
                connection.tls = session
            }
            if Int(fd) >= connections.count { connections += Array(repeating: nil, count: Int(fd) + 64 - connections.count) }
            connections[Int(fd)] = connection
            connectionCount.add(1, ordering: .relaxed)
            readable(connection)
            // Watched only when it stays open: a `Connection: close` request answered in that
            // read never costs an `epoll_ctl`. (Adding a socket polls it: anything that arrived
            // since the read is reported at once.)
            if !connection.closed {
                connection.registered = true
                watch(fd, connection.interest, add: true)
            }
            if stopping { return }
        }
    }

    private func watch(_ fd: Int32, _ mask: UInt32, add: Bool) {
        var event = epoll_event()
        event.events = mask
        event.data.u64 = UInt64(UInt32(bitPattern: fd))
        epoll_ctl(epoll, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event)
    }

    private func handle(_ fd: Int32, _ mask: UInt32) {
        guard Int(fd) < connections.count, let connection = connections[Int(fd)] else { return }
        if connection.peerClosed && mask & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            return closeConnection(connection)   // gone in both directions: nobody to answer
        }
        if mask & EPOLLOUT.rawValue != 0 && !connection.pending.isEmpty {
            flush(connection)
            if connection.closed { return }
        }
        // A TLS read (the handshake) that had to write waits for the socket to take more.
        if mask & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
            || (connection.tlsReadWantsWrite && mask & EPOLLOUT.rawValue != 0) {
            readable(connection)
        }
    }

    // MARK: reading

    private func readable(_ c: Connection) {
        if c.tls != nil && !c.tlsChecked && !refusePlainHTTP(c) { return }
        while !c.closed {
            let n: Int
            if let session = c.tls {
                n = session.read(scratch.baseAddress!, scratch.count)
                if n <= 0 {
                    switch TLSSession.Outcome(n) {
                    case .wantRead:
                        if c.tlsReadWantsWrite {
                            c.tlsReadWantsWrite = false
                            updateInterest(c)
                        }
                        return
                    case .wantWrite:
                        c.tlsReadWantsWrite = true
                        updateInterest(c)
                        return
                    case .closed:
                        return peerFinishedSending(c)
                    case .failed:
                        c.tlsFailed = true
                        return closeConnection(c)
                    }
                }
            } else {
                n = mm_io_recv(c.fd, scratch.baseAddress, scratch.count, 0)
                if n == 0 { return peerFinishedSending(c) }
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(c) }
                    return
                }
            }
            c.lastActivity = turnStarted
            let chunk = UnsafeRawBufferPointer(start: scratch.baseAddress, count: n)
            if c.input.isEmpty {
                // The common case: the whole request in one read, parsed where it landed.
                let used = process(c, chunk)
                if !c.closed && used < n { c.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[used...])) }
            } else {
                c.input.append(contentsOf: chunk)
                resume(c)
            }
            if !c.closed && c.awaitsRestOfRequest { acknowledgeNow(c) }
            if !c.closed && c.input.count > Self.headLimit * 4 && !c.isReading {
                // A client sending ahead while its response waits: stop reading until it is due.
                c.readPaused = true
                updateInterest(c)
            }
            // A short read empties a socket; a TLS read returns one record, so it reads on until
            // OpenSSL finds the socket empty (edge-triggered: nothing would report the rest).
            if n < scratch.count && c.tls == nil { return }
        }
    }

    /// The first byte of a TLS connection is a handshake record (22). A client that speaks plain
    /// HTTP to the HTTPS port gets a plain `400` that says so, instead of a failed handshake it
    /// would report as a garbled or empty reply. `false` when the connection is not ready (or closed).
    private func refusePlainHTTP(_ c: Connection) -> Bool {
        var first: UInt8 = 0
        let n = mm_io_recv(c.fd, &first, 1, Int32(MSG_PEEK))
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return false }
        c.tlsChecked = true
        if n == 1 && first == 22 { return true }
        if n == 1 {
            let body = #"{"error":"this port speaks HTTPS: the request was sent as plain HTTP"}"#
            let text = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            _ = Array(text.utf8).withUnsafeBytes { mm_io_send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        c.tlsFailed = true
        closeConnection(c)
        return false
    }

    /// Sets an integer `IPPROTO_TCP` option (a failure only loses the optimisation it is for).
    private static func setTCPOption(_ fd: Int32, _ option: Int32, _ value: Int32) {
        var value = value
        setsockopt(fd, Int32(IPPROTO_TCP), option, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Acknowledges what `c` has sent so far, now. Connections start in delayed-ACK mode (see
    /// `init`), and a client with Nagle's algorithm on holds back the rest of a small request until
    /// its first part is acknowledged: without this, each such request would wait for the
    /// delayed-ACK timer (about 40 ms). Only requests that arrive in parts pay for the call.
    private func acknowledgeNow(_ c: Connection) {
        Self.setTCPOption(c.fd, TCP_QUICKACK, 1)
    }

    /// The client shut down its side (`shutdown(SHUT_WR)` or a close): an answer it may still
    /// be waiting for — a delayed or dribbled response, or one the socket has not taken yet — is
    /// sent before the connection closes; a held request (the `timeout` fault) or an idle
    /// connection closes now.
    private func peerFinishedSending(_ c: Connection) {
        switch c.state {
        case .delayed, .dribbling:
            break
        case .head where !c.pending.isEmpty:
            c.closeWhenFlushed = true
        default:
            return closeConnection(c)
        }
        c.peerClosed = true
        c.keepAlive = false
        updateInterest(c)
    }

    /// Processes what the connection has buffered.
    private func resume(_ c: Connection) {
        guard !c.input.isEmpty, c.isReading else { return }
        let used = c.input.withUnsafeBytes { process(c, $0) }
        if !c.closed { c.input.removeFirst(min(used, c.input.count)) }
    }

    /// Consumes requests from `bytes` while the connection is reading; returns the bytes used.
    private func process(_ c: Connection, _ bytes: UnsafeRawBufferPointer) -> Int {
        var used = 0
        while !c.closed {
            switch c.state {
            case .head:
                guard used < bytes.count else { return used }
                if c.pending.count > Self.outputLimit {
                    // A client sending requests without reading the answers: wait for it to read.
                    c.readPaused = true
                    updateInterest(c)
                    return used
                }
                switch RequestHead.parse(UnsafeRawBufferPointer(rebasing: bytes[used...]), limit: Self.headLimit, recent: &recent) {
                case .incomplete:
                    return used
                case .invalid(let status, let message):
                    inFlight.add(1, ordering: .relaxed)
                    c.active = true
                    c.keepAlive = false
                    send(c, .json(.object(["error": .string(message)]), status: status), head: false, http10: false)
                    return bytes.count
                case .complete(var head, let length):
                    let headBytes = UnsafeRawBufferPointer(rebasing: bytes[used...])
                    used += length
                    inFlight.add(1, ordering: .relaxed)
                    c.requests += 1
                    if c.requests == 2 {
                        // A second request: responses may now follow each other closely (keep-alive,
                        // pipelining), and Nagle's algorithm would hold one back for an ACK.
                        // One-request connections never pay for the call (nginx does the same).
                        Self.setTCPOption(c.fd, TCP_NODELAY, 1)
                    }
                    c.active = true
                    c.keepAlive = head.keepAlive && !stopping
                    let limit = maxBodyBytes
                    if head.chunked {
                        head.keepLines(from: headBytes)
                        c.state = .chunked(head, ChunkedBody(limit: limit), [])
                        if head.expectContinue && used == bytes.count { sendContinue(c) }
                    } else if let length = head.contentLength, length > 0 {
                        if length > limit {
                            c.keepAlive = false
                            send(c, serverRef._withUnsafeGuaranteedRef { $0.tooLarge() }, head: false, http10: head.minorVersion == 0)
                            return bytes.count
                        }
                        if bytes.count - used >= length {
                            let body = UnsafeRawBufferPointer(rebasing: bytes[used..<(used + length)])
                            used += length
                            head.withLines(in: headBytes) { dispatch(c, head, lines: $0, body: body) }
                        } else {
                            head.keepLines(from: headBytes)
                            var body: [UInt8] = []
                            body.reserveCapacity(min(length, 1 << 20))
                            c.state = .body(head, body, length)
                            if head.expectContinue && used == bytes.count { sendContinue(c) }
                        }
                    } else {
                        head.withLines(in: headBytes) { dispatch(c, head, lines: $0, body: UnsafeRawBufferPointer(start: nil, count: 0)) }
                    }
                }
            case .body(let head, var body, let length):
                let take = min(length - body.count, bytes.count - used)
                c.state = .head   // not holding a second reference to the body while appending
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[used..<(used + take)]))
                used += take
                if body.count < length {
                    c.state = .body(head, body, length)
                    return used
                }
                dispatch(c, head, body)
            case .chunked(let head, var decoder, var body):
                c.state = .head
                switch decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[used...]), into: &body) {
                case .needMore:
                    c.state = .chunked(head, decoder, body)
                    return bytes.count
                case .done(let consumed):
                    used += consumed
                    dispatch(c, head, body)
                case .invalid(let message):
                    c.keepAlive = false
                    send(c, .json(.object(["error": .string(message)]), status: 400), head: false, http10: head.minorVersion == 0)
                    return bytes.count
                case .tooLarge:
                    c.keepAlive = false
                    send(c, serverRef._withUnsafeGuaranteedRef { $0.tooLarge() }, head: false, http10: head.minorVersion == 0)
                    return bytes.count
                }
            case .delayed, .held, .dribbling:
                return used
            }
        }
        return bytes.count
    }

    /// A request whose body was read in parts: its head kept its header lines.
    private func dispatch(_ c: Connection, _ head: RequestHead, _ body: [UInt8]) {
        body.withUnsafeBytes { body in
            head.withLines(in: UnsafeRawBufferPointer(start: nil, count: 0)) { dispatch(c, head, lines: $0, body: body) }
        }
    }

    /// Runs a complete request through the server and acts on the answer. The header `lines`
    /// and `body` are copied into the storage of the loop's last request when nothing holds
    /// that any more (``MockRequest/recycling(_:method:scheme:host:port:target:headerLines:body:)``).
    private func dispatch(_ c: Connection, _ head: RequestHead, lines: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        c.state = .head
        let isHead = head.method == "HEAD"
        let http10 = head.minorVersion == 0
        let request: MockRequest
        if head.target == "*" {
            // `OPTIONS *` (the parser lets no other method have it) asks about the server itself.
            var headers = HTTPHeaders()
            headers.add("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
            return deliver(c, MockResponse(status: 200, headers: headers), head: false, http10: http10)
        }
        if head.target.utf8.first != UInt8(ascii: "/") && head.target.contains("://") {
            // Absolute form (`GET http://host/path`, as sent to a proxy): the URL names the host.
            request = MockRequest(method: head.method, url: head.target, headers: HTTPHeaders(validatedLines: Array(lines)), body: Array(body))
        } else {
            // Split once per distinct authority: the parser hands back the very string it made
            // for the last request when the bytes are the same, so the compare is of its bits.
            let authority = head.host ?? defaultAuthority
            if authority != lastAuthority.value {
                lastAuthority = (authority, MockRequest.hostAndPort(of: authority))
            }
            request = MockRequest.recycling(&spareRequest, method: head.method, scheme: scheme, host: lastAuthority.split.host,
                                            port: lastAuthority.split.port, target: head.target, headerLines: lines, body: body)
        }
        serverRef._withUnsafeGuaranteedRef { server in
            server.answer(request) { response, delay in
                if delay > 0 {
                    c.state = .delayed(response, isHead, http10)
                    schedule(c, after: delay / 1000)
                } else {
                    deliver(c, response, head: isHead, http10: http10)
                }
            }
        }
        // Kept for the next request, unless its body is large: then the loop lets that go now.
        spareRequest = body.count <= Self.keptBodyBytes ? consume request : nil
    }

    // MARK: answering

    /// Sends `response`, or acts out its fault on the wire:
    /// - `connection_reset` (and a Swift `failure(error)` stub, which cannot travel): a TCP RST;
    /// - `empty_response`: the connection closes without a byte (over TLS, after close_notify);
    /// - `malformed_chunk`: half the body in a chunk, then the stream breaks off;
    /// - `timeout`: the connection is held, never answered, until the client leaves or the server stops;
    /// - `dribble`: the body at N bytes per second, in slices sent from the loop's timers.
    private func deliver(_ c: Connection, _ response: MockResponse, head: Bool, http10: Bool) {
        if response.fault != nil && c.corked {
            // Answers to earlier pipelined requests leave before the fault is acted out.
            sendPending(c)
            if c.closed { return }
        }
        switch response.fault {
        case nil:
            send(c, response, head: head, http10: http10)
        case .connectionReset?, .error?:
            // SO_LINGER {on, 0}: close sends a RST instead of a FIN.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            c.tlsFailed = true   // no close_notify before the reset
            closeConnection(c)
        case .emptyResponse?:
            closeConnection(c)
        case .timeout?:
            if stopping { return closeConnection(c) }
            c.state = .held
        case .malformedChunk?:
            // Half the body in a proper chunk, then the stream breaks off without its last chunk.
            let body = response.body.isEmpty ? Array("{\"partial\":".utf8) : response.body
            let half = max(1, body.count / 2)
            output.removeAll(keepingCapacity: true)
            ResponseHead.append(status: response.status, headers: response.headers, framing: .chunked, connection: .close,
                                date: clock.now(), lines: statusLines, fields: fieldBytes, into: &output)
            ResponseHead.appendHex(half, into: &output)
            ResponseHead.append("\r\n", into: &output)
            output.append(contentsOf: body[0..<half])
            ResponseHead.append("\r\n", into: &output)
            c.keepAlive = false
            write(c, output)
            finishRequest(c)
        case .dribble(let bytesPerSecond)?:
            Self.setTCPOption(c.fd, TCP_NODELAY, 1)   // each slice leaves at once, not when the previous one is acknowledged
            output.removeAll(keepingCapacity: true)
            let keepAlive = c.keepAlive && !stopping
            ResponseHead.append(status: response.status, headers: response.headers, framing: .length(response.body.count),
                                connection: keepAlive ? (http10 ? .keepAlive10 : .keepAlive11) : .close,
                                date: clock.now(), lines: statusLines, fields: fieldBytes, into: &output)
            write(c, output)
            if c.closed { return }
            c.state = .dribbling(head ? [] : response.body, 0, max(1, bytesPerSecond))
            dribble(c)
        }
    }

    /// `100 Continue`: the client waits for it before sending the body it announced.
    private func sendContinue(_ c: Connection) {
        output.removeAll(keepingCapacity: true)
        ResponseHead.append("HTTP/1.1 100 Continue\r\n\r\n", into: &output)
        write(c, output)
    }

    /// Writes a whole response and finishes the request.
    private func send(_ c: Connection, _ response: MockResponse, head: Bool, http10: Bool) {
        let keepAlive = c.keepAlive && !stopping
        c.keepAlive = keepAlive
        let noBody = HTTPStatus.hasNoContent(response.status)
        let framing: ResponseHead.Framing = noBody ? .none : .length(response.body.count)
        if keepAlive {
            // Written straight into the connection's output, and sent at the end of the turn
            // with the turn's other answers (``flushCorked()``).
            ResponseHead.append(status: response.status, headers: response.headers, framing: framing,
                                connection: http10 ? .keepAlive10 : .keepAlive11,
                                date: clock.now(), lines: statusLines, fields: fieldBytes, into: &c.pending)
            // (Appending from buffers: appending the arrays themselves retains and releases them.)
            if !head && !noBody { response.body.withUnsafeBufferPointer { c.pending.append(contentsOf: $0) } }
            if !c.corked {
                c.corked = true
                corked.append(c)
            }
            return finishRequest(c)
        }
        output.removeAll(keepingCapacity: true)
        ResponseHead.append(status: response.status, headers: response.headers, framing: framing, connection: .close,
                            date: clock.now(), lines: statusLines, fields: fieldBytes, into: &output)
        if !head && !noBody { response.body.withUnsafeBufferPointer { output.append(contentsOf: $0) } }
        // A last response is held back (MSG_MORE) until the close right after it, so the FIN
        // leaves in the same segment as the data: one packet less for each side to handle.
        write(c, output, more: !keepAlive)
        finishRequest(c)
    }

    /// The next slice of a dribbled body, then a timer for the one after.
    private func dribble(_ c: Connection) {
        guard case .dribbling(let body, let offset, let bytesPerSecond) = c.state else { return }
        if offset >= body.count {
            c.state = .head
            finishRequest(c)
            return
        }
        let slice = max(1, min(bytesPerSecond / 10, body.count - offset))
        write(c, Array(body[offset..<(offset + slice)]))
        if c.closed { return }
        c.state = .dribbling(body, offset + slice, bytesPerSecond)
        schedule(c, after: Double(slice) / Double(bytesPerSecond))
    }

    /// The request's answer has been handed over: the connection reads the next one, or closes.
    private func finishRequest(_ c: Connection) {
        if c.active {
            c.active = false
            inFlight.subtract(1, ordering: .relaxed)
        }
        if c.closed { return }
        if !c.keepAlive {
            if c.pending.isEmpty { closeConnection(c) } else { c.closeWhenFlushed = true }
            return
        }
        c.state = .head
        if c.readPaused {
            c.readPaused = false
            updateInterest(c)
        }
    }

    // MARK: writing

    /// Sends `bytes` now, or queues what the socket does not take and waits for it to drain.
    /// `more`: the connection closes right after these bytes (MSG_MORE; the close pushes them).
    private func write(_ c: Connection, _ bytes: [UInt8], more: Bool = false) {
        if c.closed { return }
        if !c.pending.isEmpty {
            c.pending.append(contentsOf: bytes)
            return
        }
        let sent = bytes.withUnsafeBytes { sendAll(c, $0, more: more) }
        if sent == bytes.count { return }
        if errno != EAGAIN && errno != EWOULDBLOCK { return closeConnection(c) }
        c.pending = Array(bytes[sent...])
        updateInterest(c)
    }

    /// Sends as much of `bytes` as the socket takes; returns how much that was (`errno` tells why
    /// it stopped short).
    private func sendAll(_ c: Connection, _ bytes: UnsafeRawBufferPointer, more: Bool) -> Int {
        var sent = 0
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
            let n = mm_io_send(c.fd, bytes.baseAddress! + sent, bytes.count - sent,
                               Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0))
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
    private func flushCorked() {
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
    /// `EPOLLOUT` as any other unsent output does.
    private func sendPending(_ c: Connection) {
        c.corked = false
        if c.closed || c.pending.isEmpty { return }
        let sent = c.pending.withUnsafeBytes { sendAll(c, $0, more: c.closeWhenFlushed) }
        if sent == c.pending.count {
            c.pending.removeAll(keepingCapacity: c.pending.capacity <= Self.keptOutputCapacity)
            return drained(c)
        }
        if errno != EAGAIN && errno != EWOULDBLOCK { return closeConnection(c) }
        c.pending.removeFirst(sent)
        updateInterest(c)
    }

    private func flush(_ c: Connection) {
        let pending = c.pending
        c.pending = []
        write(c, pending)
        if !c.closed && c.pending.isEmpty { drained(c) }
    }

    /// All of a connection's output has left: it closes if that was its last answer, or reads
    /// again if it had stopped for the output to drain.
    private func drained(_ c: Connection) {
        if c.closeWhenFlushed { return closeConnection(c) }
        if c.readPaused && c.isReading && !c.peerClosed {
            c.readPaused = false
            updateInterest(c)
            resume(c)
        } else {
            updateInterest(c)
        }
    }

    private func updateInterest(_ c: Connection) {
        // Once the client has finished sending, its side stays readable (EOF): not watched.
        var mask = Connection.edgeTriggered | (c.peerClosed ? 0 : EPOLLRDHUP.rawValue)
        if !c.readPaused && !c.peerClosed { mask |= EPOLLIN.rawValue }
        if !c.pending.isEmpty || c.tlsReadWantsWrite { mask |= EPOLLOUT.rawValue }
        if mask != c.interest {
            c.interest = mask
            if c.registered { watch(c.fd, mask, add: false) }
        }
    }

    private func closeConnection(_ c: Connection) {
        guard !c.closed else { return }
        c.closed = true
        if c.active {
            c.active = false
            inFlight.subtract(1, ordering: .relaxed)
        }
        if let session = c.tls {
            session.free(graceful: !c.tlsFailed)
            c.tls = nil
        }
        // Closing the only descriptor of the socket also takes it out of the epoll set.
        close(c.fd)
        connections[Int(c.fd)] = nil
        connectionCount.subtract(1, ordering: .relaxed)
    }

    // MARK: timers

    private func schedule(_ c: Connection, after seconds: Double) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        timers.push(TimerHeap.Entry(deadline: deadline, fd: c.fd, serial: c.serial))
    }

    private func fireTimers(_ now: UInt64) {
        while let entry = timers.popDue(now) {
            if entry.serial == 0 {
                // The listener's pause after running out of descriptors (connection serials start at 1).
                if entry.fd == listener && listener >= 0 { watch(listener, EPOLLIN.rawValue, add: true) }
                continue
            }
            guard Int(entry.fd) < connections.count, let c = connections[Int(entry.fd)], c.serial == entry.serial else { continue }
            switch c.state {
            case .delayed(let response, let head, let http10):
                c.state = .head
                deliver(c, response, head: head, http10: http10)
                if !c.closed, c.isReading { resume(c) }
            case .dribbling:
                dribble(c)
                if !c.closed, c.isReading { resume(c) }
            default:
                break
            }
        }
    }

    /// Closes connections that have been idle (or stuck in a request head or body) for longer
    /// than the configured idle timeout.
    private func sweepIdle(_ now: UInt64) {
        let limit = UInt64(max(1, idleTimeout)) * 1_000_000_000
        for case let c? in connections where c.isReading && c.pending.isEmpty && now - c.lastActivity > limit {
            closeConnection(c)
        }
    }
}

/// One client connection of an ``EventLoop``.
final class Connection {
    enum State {
        /// Waiting for (the rest of) a request head.
        case head
        /// Reading a `Content-Length` body.
        case body(RequestHead, [UInt8], Int)
        /// Reading a chunked body.
        case chunked(RequestHead, ChunkedBody, [UInt8])
        /// The answer waits for its delay: (response, HEAD request, HTTP/1.0).
        case delayed(MockResponse, Bool, Bool)
        /// The `timeout` fault: never answered.
        case held
        /// A body sent slice by slice: (body, next offset, bytes per second).
        case dribbling([UInt8], Int, Int)
    }

    let fd: Int32
    let serial: UInt64
    var state = State.head
    /// Received bytes not yet consumed.
    var input: [UInt8] = []
    /// Response bytes the socket has not taken yet.
    var pending: [UInt8] = []
    /// `pending` holds answers for the end of the loop's turn (``EventLoop/flushCorked()``).
    var corked = false
    var keepAlive = true
    var closeWhenFlushed = false
    /// A request is in progress (counted in the server's requests in flight).
    var active = false
    var closed = false
    var readPaused = false
    /// The client has shut down its sending side.
    var peerClosed = false
    /// Requests started on this connection.
    var requests = 0
    var interest: UInt32 = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | Connection.edgeTriggered
    /// Connections are watched edge-triggered: the loop reads each until a read comes back
    /// short (the socket is empty then; anything arriving later is a new edge) and writes until
    /// the socket is full, so it needs no reminder, and epoll then skips polling every socket
    /// it reported again on the next wait, as it does for level-triggered ones to see whether
    /// they are still ready. Changing the interest (`EPOLL_CTL_MOD`) polls once more, so a
    /// connection that stopped reading and starts again hears of what is already there.
    static let edgeTriggered = EPOLLET.rawValue
    /// Whether `interest` is in the loop's epoll set yet (see ``EventLoop/accept(events:)``).
    var registered = false
    var lastActivity: UInt64
    /// HTTPS: the connection's TLS session (reads and writes go through it).
    var tls: TLSSession?
    /// The session's last read needed to write (the handshake) and the socket was full.
    var tlsReadWantsWrite = false
    /// The session failed (or the connection is reset): closed without a close_notify.
    var tlsFailed = false
    /// The first byte has been checked for a TLS handshake (``EventLoop/refusePlainHTTP(_:)``).
    var tlsChecked = false

    init(fd: Int32, serial: UInt64, now: UInt64) {
        self.fd = fd
        self.serial = serial
        self.lastActivity = now
    }

    /// Whether input is being turned into requests (not waiting on an answer).
    var isReading: Bool {
        switch state {
        case .head, .body, .chunked: return true
        case .delayed, .held, .dribbling: return false
        }
    }

    /// Whether part of a request has arrived and the rest has not: a head without its end, or a
    /// head without all of its body.
    var awaitsRestOfRequest: Bool {
        switch state {
        case .head: return !input.isEmpty
        case .body, .chunked: return true
        case .delayed, .held, .dribbling: return false
        }
    }
}

/// Deadlines of one loop, earliest first; entries of closed or reused connections are skipped
/// when they come due (the serial tells a reused descriptor apart).
struct TimerHeap {
    struct Entry {
        let deadline: UInt64
        let fd: Int32
        let serial: UInt64
    }

    private var heap: [Entry] = []

    var nextDeadline: UInt64? { heap.first?.deadline }

    mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].deadline <= heap[child].deadline { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    /// The earliest entry if it is due by `now`.
    mutating func popDue(_ now: UInt64) -> Entry? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        let last = heap.removeLast()
        if heap.isEmpty { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = parent * 2 + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}

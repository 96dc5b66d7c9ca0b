import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// One worker of the server's own HTTP/1.1 layer: a thread with its own ``Poller`` (epoll on
/// Linux, kqueue on Darwin, or poll(2)), its own listening socket (on Linux one of a
/// `SO_REUSEPORT` group, so the kernel spreads connections over the workers; on Darwin a
/// descriptor of the one they share), its connections and its timers. A connection lives on one loop for its whole life,
/// so nothing here is locked except the few commands other threads send (stop, release).
///
/// A request is read with one `recv`, parsed in place, answered by the engine on this thread
/// and written with one `send` at the end of the loop's turn (see ``flushCorked()``); delays,
/// dribbled bodies and held connections are timers of this loop, never a blocked thread.
final class EventLoop: @unchecked Sendable {
    /// The server outlives its loops (``MoonmockServer/stop(drainSeconds:)`` joins them), and its
    /// reference count is shared by every worker: borrowed, never retained per request.
    let serverRef: Unmanaged<MoonmockServer>
    let maxBodyBytes: Int
    /// Unsent output held by this loop's connections, and its share of `--max-pending-output`.
    var unsentOutput = 0
    let pendingOutputBudget: Int
    /// When freed memory was last given back to the system, and whether more has been freed since.
    var lastMemoryReturn: UInt64 = 0
    var memoryToReturn = false
    /// Whether WebSocket handshakes may agree permessage-deflate (`--ws-deflate`).
    let webSocketDeflate: Bool
    /// Whether connections may speak HTTP/2 (`--http2`).
    let http2: Bool
    /// The last `Date` line the HTTP/2 answers used, and its value as a string.
    var h2DateLine: (bytes: [UInt8], value: String) = ([], "")
    let idleTimeout: Int
    /// ``ServerConfiguration/headerTimeout``, ``ServerConfiguration/bodyTimeout`` and
    /// ``ServerConfiguration/sendTimeout`` in nanoseconds.
    let headerTimeout: UInt64, bodyTimeout: UInt64, sendTimeout: UInt64
    /// How often the loop looks for connections past a deadline (at most a second).
    let sweepInterval: UInt64
    /// Connections this loop keeps open at most: its share of the descriptor limit, less a
    /// reserve for everything else the process opens (fixtures, modules, the C libraries'
    /// own files). Past it, the longest-waiting idle connections are shed before a new one is
    /// taken in, so the process itself never runs out of descriptors.
    let maxConnections: Int
    let poller: any Poller
    /// The poller's wake descriptor (read once: checked for every event).
    let wakeup: Int32
    var listener: Int32
    /// Open connections, read by the health endpoint from other threads.
    let connectionCount = AtomicInt(0)
    /// Requests of this loop in progress (the server sums the loops': no counter shared by
    /// the workers' cores).
    let inFlight = AtomicInt(0)
    /// Streamed answers of this loop being sent (the metrics' gauge).
    let openStreams = AtomicInt(0)

    struct Commands {
        var stopAccepting = false
        var exit = false
        /// The loop has ended and closed its descriptors.
        var closed = false
        /// Answers made off the loop (`mock.proxy`'s upstreams, store workers) for it to act on.
        var answers: [ParkedAnswer] = []
        /// WebSockets (and live HTTP/2 calls) with messages to send from other threads: (fd, serial, stream).
        var websockets: [(Int32, UInt64, Int32)] = []
        /// Handlers to resume on this loop (their wait is over).
        var work: [@Sendable () -> Void] = []
    }
    let commands = Locked(Commands())
    let finished = DispatchSemaphore(value: 0)

    // Owned by the loop's thread.
    var connections: [Connection?] = []
    var timers = TimerHeap()
    var nextSerial: UInt64 = 0
    var stopping = false
    /// The shared store's connection of this loop (`--store`), its registered descriptor, and
    /// whether the loop watches it for writing; the loop's thread (waits resumed on it run at once).
    var storeChannel: (any StoreChannel)?
    var storeDescriptor: Int32 = -1
    var storeWatchesOutput = false
    var loopThread: pthread_t?
    /// Requests answered this turn whose handlers left webhooks or `mock.after` work: released
    /// once the turn's answers are written.
    var answeredWithHeldWork: [Int] = []
    let clock: HTTPDate
    /// When the current turn of the loop began (monotonic nanoseconds).
    var turnStarted: UInt64 = 0
    let statusLines = StatusLines()
    let fieldBytes = FieldBytes()
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    var output: [UInt8] = []
    /// The last request target and `Host` value made into strings (see ``RecentStrings``).
    var recent = RecentStrings()
    /// The last authority and its split (a client sends the same `Host` on every request).
    var lastAuthority: (value: String, split: (host: String, port: Int?)) = ("", ("", nil))
    /// The last request answered: the next one is built in its storage when nothing else holds it.
    var spareRequest: MockRequest?
    /// Keep-alive connections whose answers wait in `pending` for the end of this turn.
    var corked: [Connection] = []
    let defaultAuthority: String
    /// Set for HTTPS: every connection reads and writes through a session made from it.
    let tls: TLSContext?
    /// `https` with ``tls``, else `http`: the scheme of every request this loop builds.
    let scheme: String

    static let headLimit = 16 * 1024
    /// Unsent response bytes past which a connection's further requests wait.
    static let outputLimit = 1 << 20
    /// Answers above this size are checked against the unsent-output bound.
    static let largeAnswer = 64 * 1024
    /// A connection's emptied output buffer is kept for its next answer up to this size.
    static let keptOutputCapacity = 16 * 1024
    /// The largest body whose request the loop keeps for the next one to be built in.
    static let keptBodyBytes = 64 * 1024

    /// Takes ownership of `listener` (a bound, listening socket).
    init(server: MoonmockServer, listener: Int32, authority: String) throws {
        self.serverRef = Unmanaged.passUnretained(server)
        self.maxBodyBytes = server.configuration.maxBodyBytes
        self.pendingOutputBudget = max(1, server.configuration.maxPendingOutput / max(1, server.configuration.threads))
        self.webSocketDeflate = server.configuration.webSocketDeflate
        self.http2 = server.configuration.http2
        self.idleTimeout = server.configuration.idleTimeout
        let c = server.configuration
        func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0.001, seconds) * 1e9) }
        headerTimeout = nanoseconds(c.headerTimeout)
        bodyTimeout = nanoseconds(c.bodyTimeout)
        sendTimeout = nanoseconds(c.sendTimeout)
        sweepInterval = min(1_000_000_000, nanoseconds(min(c.headerTimeout, c.bodyTimeout, c.sendTimeout, Double(max(1, c.idleTimeout)))) / 4)
        self.listener = listener
        self.defaultAuthority = authority
        let descriptors = SocketCalls.descriptorLimit()
        let reserve = min(256, max(16, descriptors / 4))
        maxConnections = max(4, (descriptors - reserve) / max(1, server.configuration.threads))
        self.tls = server.tls
        self.scheme = server.tls == nil ? "http" : "https"
        clock = HTTPDate(server.engine.environment)
        poller = try PollerChoice.make()
        wakeup = poller.wakeDescriptor
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        SocketCalls.prepareListener(listener)
        poller.add(listener, .input)
        output.reserveCapacity(16 * 1024)
    }

    deinit {
        scratch.deallocate()
    }

    /// Runs the loop on a thread of its own.
    func start(name: String) {
        let thread = Thread { [self] in
            // Named from inside: that names the system thread too (ps, top, strace, debuggers).
            Thread.current.name = name
            ThreadDoor.mark("socket")   // the metrics count this thread's answers as the socket door's
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

    /// Wakes the loop's wait, unless the loop has ended (called under the command lock).
    func poke(_ commands: Commands) {
        guard !commands.closed else { return }
        poller.wake()
    }

    // MARK: the loop

    func run() {
        let events = UnsafeMutableBufferPointer<PollEvent>.allocate(capacity: 256)
        defer { events.deallocate() }
        attachStore()
        defer { detachStore() }
        var lastSweep = DispatchTime.now().uptimeNanoseconds
        var now = lastSweep
        while true {
            var timeout = Int(sweepInterval / 1_000_000)
            if let next = timers.nextDeadline {
                timeout = next <= now ? 0 : min(timeout, Int((next - now + 999_999) / 1_000_000))
            }
            if let next = storeChannel?.nextDeadline {   // a store reply overdue then fails its requests
                timeout = next <= now ? 0 : min(timeout, Int((next - now + 999_999) / 1_000_000))
            }
            let count = poller.wait(into: events, timeoutMilliseconds: Int32(timeout))
            if count < 0 && errno != EINTR { break }
            // One clock reading for every connection this turn serves (their idle timeouts).
            turnStarted = DispatchTime.now().uptimeNanoseconds
            for i in 0..<max(0, Int(count)) {
                let event = events[i]
                let fd = event.fd
                if fd == listener { accept(events: Int(count)) } else if fd == wakeup {
                    if handleCommands() { return shutDown() }
                } else if fd == storeDescriptor, storeChannel?.descriptor == fd {
                    storeReady(event.mask)
                } else {
                    handle(fd, event.mask)
                }
            }
            flushCorked()
            let after = DispatchTime.now().uptimeNanoseconds
            now = after
            fireTimers(after)
            flushCorked()
            if let storeChannel {
                if let due = storeChannel.nextDeadline, due <= after { storeChannel.expire(now: after) }
                sendToStore(storeChannel)
            }
            if !answeredWithHeldWork.isEmpty { releaseHeldWork() }
            if after - lastSweep >= sweepInterval {
                lastSweep = after
                sweep(after)
            }
        }
        shutDown()
    }

    /// `true` when the loop should end.
    func handleCommands() -> Bool {
        poller.drainWake()
        let pending = commands.withLock { c in
            defer { c.stopAccepting = false; c.answers = []; c.websockets = []; c.work = [] }
            return c
        }
        pending.work.forEach { $0() }
        pending.answers.forEach(completeParked)
        for (fd, serial, stream) in pending.websockets {
            guard Int(fd) < connections.count, let c = connections[Int(fd)], c.serial == serial else { continue }
            if case .websocket(let ws) = c.state { flushSocket(c, ws) }
            if case .http2(let h2) = c.state, let s = h2.streams[stream] { flushLive(c, h2, s) }
        }
        if pending.stopAccepting && !stopping {
            stopping = true
            if listener >= 0 {
                poller.remove(listener)
                close(listener)
                listener = -1
            }
            for case let connection? in connections {
                switch connection.state {
                case .held: closeConnection(connection)
                case .streaming: finishStream(connection, "server stopped")
                case .websocket(let ws): closeSocket(connection, ws, code: 1001, reason: "server stopping")
                case .http2(let h2): stopHTTP2(connection, h2)
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

    func shutDown() {
        flushCorked()
        if listener >= 0 {
            poller.remove(listener)
            close(listener)
            listener = -1
        }
        for case let connection? in connections { closeConnection(connection) }
        // Under the command lock: a stop arriving now must not write to a descriptor number
        // that another file may already reuse.
        commands.withLock { c in
            c.closed = true
            poller.close()
        }
    }

    /// Takes queued connections and reads each one's request at once (accepted deferred, it is
    /// most likely there). How many per readiness event follows how busy the loop is (`events`
    /// reported by this wait): one while it is quiet, as nginx does, so that no `accept4` is
    /// spent finding the queue empty; up to 64 when a turn of the loop is long, or a burst of
    /// new connections would wait a whole turn each (with 1,000 clients at once, seconds).
    func accept(events: Int) {
        for _ in 0..<min(64, max(1, events / 4)) {
            let fd = SocketCalls.accept(listener)
            if fd < 0 {
                let error = errno
                if error == EINTR || error == ECONNABORTED { continue }
                if (error == EMFILE || error == ENFILE) && shedIdleConnections() > 0 { continue }
                if error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM {
                    // Out of descriptors with none to spare: the pending connection stays queued
                    // and the socket stays readable. Stop watching it for a moment instead of spinning.
                    poller.remove(listener)
                    timers.push(TimerHeap.Entry(deadline: DispatchTime.now().uptimeNanoseconds + 100_000_000,
                                                fd: listener, serial: 0))
                }
                return   // EAGAIN (the queue is empty), or out of descriptors
            }
            if connectionCount.load(ordering: .relaxed) >= maxConnections && shedIdleConnections() == 0 {
                close(fd)   // every connection is busy: this one cannot be served now
                continue
            }
            nextSerial += 1
            let connection = Connection(fd: fd, serial: nextSerial, now: turnStarted)
            if let tls {
                guard let session = TLSSession(tls, fd: fd) else { close(fd); continue }
                connection.tls = session
                connection.headStarted = turnStarted   // the handshake counts as part of the first head
            }
            if Int(fd) >= connections.count { connections += Array(repeating: nil, count: Int(fd) + 64 - connections.count) }
            connections[Int(fd)] = connection
            connectionCount.add(1, ordering: .relaxed)
            readable(connection)
            // Watched only when it stays open: a `Connection: close` request answered in that
            // read never costs a poller call. (Adding a socket polls it: anything that arrived
            // since the read is reported at once.)
            if !connection.closed {
                connection.registered = true
                watch(fd, connection.interest, add: true)
            }
            if stopping { return }
        }
    }

    func watch(_ fd: Int32, _ mask: PollMask, add: Bool) {
        if add { poller.add(fd, mask) } else { poller.modify(fd, mask) }
    }

    func handle(_ fd: Int32, _ mask: PollMask) {
        guard Int(fd) < connections.count, let connection = connections[Int(fd)] else { return }
        if connection.peerClosed && !mask.isDisjoint(with: [.hangup, .error]) {
            return closeConnection(connection)   // gone in both directions: nobody to answer
        }
        if mask.contains(.output) && !connection.pending.isEmpty {
            flush(connection)
            if connection.closed { return }
        }
        // A TLS read (the handshake) that had to write waits for the socket to take more.
        if !mask.isDisjoint(with: [.input, .peerHangup, .hangup, .error])
            || (connection.tlsReadWantsWrite && mask.contains(.output)) {
            // A FIN that came with the last data is reported with it, and only then (edge-triggered):
            // the socket is read to its end, not left at the first short read.
            readable(connection, hangup: !mask.isDisjoint(with: [.peerHangup, .hangup]))
        }
    }

}

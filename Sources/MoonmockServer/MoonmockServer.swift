import CMicroHTTPD
import Foundation
import MoonmockCore
import MoonmockScript
import Synchronization

/// The socket transport: an HTTP/1.1 server that runs every request through the same
/// ``Engine`` as the in-process transport. Plain HTTP is served by Moonmock's own HTTP/1.1
/// layer (one epoll loop per worker thread); HTTPS by libmicrohttpd with GnuTLS (see
/// ``ServerConfiguration/httpLayer``).
///
/// ```swift
/// let engine = Engine()
/// try engine.loadScript(file: "mocks.lua")
/// var configuration = ServerConfiguration()
/// configuration.port = 0
/// let server = MoonmockServer(engine: engine, configuration: configuration)
/// try server.start()
/// print("listening on", server.port)
/// server.stop()
/// ```
public final class MoonmockServer: @unchecked Sendable {
    public let engine: Engine
    public let configuration: ServerConfiguration
    /// Rebuilds the script for `POST /__moonmock/reload`; `nil` when there is no script.
    let reloader: (@Sendable () throws -> ReloadResult)?
    /// What `GET /__moonmock/health` says about the script (generation, load time, last error).
    let scriptStatus: (@Sendable () -> JSONValue)?
    let admin: AdminAPI

    /// One daemon per worker thread, each with its own socket of a SO_REUSEPORT group. Set by
    /// start and stop; read by the health endpoint from worker threads.
    private var daemons: [OpaquePointer] {
        get { state.withLock { $0.daemons.map(\.pointer) } }
        set { state.withLock { $0.daemons = newValue.map(UncheckedConnection.init) } }
    }
    private let state = Mutex(State())
    private struct State {
        var port = 0
        var stopping = false
        var daemons: [UncheckedConnection] = []
        /// The native layer's workers (plain HTTP).
        var loops: [EventLoop] = []
    }
    private var loops: [EventLoop] { state.withLock { $0.loops } }
    /// Whether the server is running (on either HTTP layer).
    private var isRunning: Bool { state.withLock { !$0.daemons.isEmpty || !$0.loops.isEmpty } }
    /// Requests being handled; counted on every request, so an atomic rather than the lock.
    private let inFlight = Atomic<Int>(0)
    /// Connections held open by the `timeout` fault, resumed (and closed) when the server stops.
    let held = Mutex<[ObjectIdentifier: HeldConnection]>([:])

    /// What a reload reports.
    public struct ReloadResult: Sendable {
        public let ok: Bool
        public let message: String
        public let rules: Int
        public init(ok: Bool, message: String, rules: Int) {
            self.ok = ok
            self.message = message
            self.rules = rules
        }
    }

    /// - Parameters:
    ///   - engine: the engine to serve (its script rules, stubs, journal and state).
    ///   - configuration: address, threads, TLS, limits, admin token, logging.
    ///   - reload: rebuilds the script for `POST /__moonmock/reload` (hot reload's manual form).
    ///   - scriptStatus: what the health endpoint reports about the script.
    public init(engine: Engine, configuration: ServerConfiguration = ServerConfiguration(),
                reload: (@Sendable () throws -> ReloadResult)? = nil, scriptStatus: (@Sendable () -> JSONValue)? = nil) {
        self.engine = engine
        self.configuration = configuration
        self.reloader = reload
        self.scriptStatus = scriptStatus
        self.admin = AdminAPI(engine: engine, token: configuration.adminToken)
    }

    deinit { stop(drainSeconds: 0) }

    /// The bound port (useful with port 0), or 0 before ``start()``.
    public var port: Int { state.withLock { $0.port } }

    /// `http://127.0.0.1:PORT` (or `https://…`).
    public var baseURL: String {
        let scheme = configuration.tlsCertificatePEM == nil ? "http" : "https"
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(scheme)://\(host):\(port)"
    }

    /// Open connections of each worker thread (the kernel spreads new connections over them).
    ///
    /// ```swift
    /// server.connectionsPerWorker   // [16, 17] with wrk's 32 connections and --threads 2
    /// ```
    public var connectionsPerWorker: [Int] {
        state.withLock { s in
            s.loops.isEmpty ? s.daemons.map { Int(mm_daemon_connections($0.pointer)) } : s.loops.map { $0.connectionCount.load(ordering: .relaxed) }
        }
    }

    /// Requests being handled (including delayed and held ones).
    public var requestsInFlight: Int {
        inFlight.load(ordering: .relaxed) + loops.reduce(0) { $0 + $1.inFlight.load(ordering: .relaxed) }
    }

    /// Binds and starts serving. Throws ``ServerError`` when the address cannot be used.
    ///
    /// Each worker thread runs a daemon of its own on its own listening socket (one
    /// `SO_REUSEPORT` group), so that the kernel spreads connections over the workers: with one
    /// shared socket, the worker that wakes first accepts a whole burst of connections and the
    /// others may stay idle for as long as those connections live.
    public func start() throws {
        guard !isRunning else { return }
        if (configuration.tlsCertificatePEM == nil) != (configuration.tlsKeyPEM == nil) {
            throw ServerError.configuration("TLS needs both a certificate and a key")
        }
        if !configuration.isLoopback && configuration.adminToken == nil {
            throw ServerError.configuration(
                "refusing to expose the admin API on \(configuration.host) without --admin-token (bind 127.0.0.1, or set a token)")
        }
        var storage = sockaddr_storage()
        let length = try Self.address(configuration.host, configuration.port, into: &storage)
        if configuration.port != 0 {
            let free = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { mm_port_free($0, socklen_t(length)) }
            }
            if free != 0 {
                throw ServerError.listen("cannot listen on \(configuration.host):\(configuration.port) (\(String(cString: strerror(errno))))")
            }
        }
        let (sockets, port) = try openListeners(&storage, length)
        if configuration.usesNativeLayer { return try startLoops(sockets, port) }
        var started: [OpaquePointer] = []
        for (i, fd) in sockets.enumerated() {
            guard let daemon = startDaemon(listening: fd, &storage) else {
                sockets[i...].forEach { close($0) }
                started.forEach { MHD_stop_daemon($0) }
                throw ServerError.listen("cannot listen on \(configuration.host):\(configuration.port) (the HTTP daemon did not start)")
            }
            started.append(daemon)
        }
        daemons = started
        state.withLock { $0.port = port }
    }

    /// One listening socket per worker, all of one `SO_REUSEPORT` group, and the port they share
    /// (with port 0, the first socket picks it and `storage` is rewritten for the others).
    private func openListeners(_ storage: inout sockaddr_storage, _ length: Int) throws -> ([Int32], Int) {
        var sockets: [Int32] = []
        var port = configuration.port
        for _ in 0..<max(1, configuration.threads) {
            let fd = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { mm_listen($0, socklen_t(length), 1024) }
            }
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                sockets.forEach { close($0) }
                throw ServerError.listen("cannot listen on \(configuration.host):\(configuration.port) (\(reason))")
            }
            sockets.append(fd)
            if port == 0 {
                port = Int(mm_socket_port(fd))
                _ = try Self.address(configuration.host, port, into: &storage)
            }
        }
        return (sockets, port)
    }

    /// One ``EventLoop`` per listening socket, each on a thread of its own.
    private func startLoops(_ sockets: [Int32], _ port: Int) throws {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        var started: [EventLoop] = []
        for (i, fd) in sockets.enumerated() {
            do {
                started.append(try EventLoop(server: self, listener: fd, authority: "\(host):\(port)"))
            } catch {
                sockets[i...].forEach { close($0) }
                started.forEach { $0.discard() }
                throw error
            }
        }
        state.withLock { s in
            s.loops = started
            s.port = port
        }
        for (index, loop) in started.enumerated() { loop.start(name: "moonmock-http-\(index)") }
    }

    /// A daemon with one internal thread serving the connections of the socket `fd`.
    private func startDaemon(listening fd: Int32, _ storage: inout sockaddr_storage) -> OpaquePointer? {
        // No `Date` of the library's own: it would read the real clock, and `addHeaders` dates
        // each answer by the engine's, as the native layer and the in-process door do.
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_SUPPRESS_DATE_NO_CLOCK.rawValue
            | (storage.ss_family == sa_family_t(AF_INET6) ? MHD_USE_IPv6.rawValue : 0)
        let me = Unmanaged.passUnretained(self).toOpaque()
        return withUnsafePointer(to: &storage) { sa in
            sa.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                configuration.tlsKeyPEM.withOptionalCString { key in
                    configuration.tlsCertificatePEM.withOptionalCString { cert in
                        var config = mm_daemon_config(
                            flags: flags, address: address, thread_pool_size: 1,
                            connection_timeout: UInt32(max(1, configuration.idleTimeout)), connection_memory_limit: 16 * 1024,
                            tls_key_pem: key, tls_cert_pem: cert,
                            handler: serverAccessHandler, handler_cls: me,
                            completed: serverRequestCompleted, completed_cls: me,
                            uri_logger: serverURILogger, uri_logger_cls: me, listen_fd: fd)
                        return mm_start_daemon(&config)
                    }
                }
            }
        }
    }

    /// Stops accepting, lets requests in flight finish (up to `drainSeconds`), releases held
    /// connections and closes everything. Safe to call twice.
    public func stop(drainSeconds: Double = 5) {
        guard isRunning else { return }
        state.withLock { $0.stopping = true }
        let deadline = Date().addingTimeInterval(drainSeconds)
        let running = loops
        if !running.isEmpty {
            // Each loop closes its socket, its idle and held connections, and closes the others
            // after their response.
            running.forEach { $0.stopAccepting() }
            while requestsInFlight > 0 && Date() < deadline { usleep(5_000) }
            running.forEach { $0.exitAndJoin() }
            state.withLock { $0.loops = [] }
            return
        }
        // Held (timeout fault) connections never finish by themselves: release them first.
        releaseHeldConnections()
        while requestsInFlight > 0 && Date() < deadline { usleep(5_000) }
        // Out of the state first, so that the health endpoint stops asking them; each daemon
        // closes its listening socket.
        let stopped = daemons
        daemons = []
        stopped.forEach { MHD_stop_daemon($0) }
    }

    func releaseHeldConnections() {
        let connections = held.withLock { h in
            defer { h.removeAll() }
            return Array(h.values)
        }
        for c in connections {
            c.request.closeOnResume = true
            MHD_resume_connection(c.connection)
        }
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    func requestStarted() { inFlight.add(1, ordering: .relaxed) }
    func requestFinished() { inFlight.subtract(1, ordering: .relaxed) }

    /// Fills `storage` with the address for `host:port`.
    static func address(_ host: String, _ port: Int, into storage: inout sockaddr_storage) throws -> Int {
        let name = host == "localhost" ? "127.0.0.1" : host
        if name.contains(":") {
            var a6 = sockaddr_in6()
            a6.sin6_family = sa_family_t(AF_INET6)
            a6.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, name, &a6.sin6_addr) == 1 else { throw ServerError.configuration("invalid address '\(host)'") }
            withUnsafeBytes(of: a6) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            return MemoryLayout<sockaddr_in6>.size
        }
        var a4 = sockaddr_in()
        a4.sin_family = sa_family_t(AF_INET)
        a4.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, name, &a4.sin_addr) == 1 else { throw ServerError.configuration("invalid address '\(host)'") }
        withUnsafeBytes(of: a4) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
        return MemoryLayout<sockaddr_in>.size
    }
}

/// A connection parked by the `timeout` fault.
struct HeldConnection: @unchecked Sendable {
    let connection: OpaquePointer
    let request: ServerRequest
}

extension Optional where Wrapped == String {
    /// Runs `body` with a C string, or `nil`.
    func withOptionalCString<T>(_ body: (UnsafePointer<CChar>?) -> T) -> T {
        switch self {
        case .some(let s): return s.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}

import Foundation
import MoonmockCore
import MoonmockProxy
import MoonmockScript

/// The socket transport: an HTTP/1.1 server that runs every request through the same
/// ``Engine`` as the in-process transport. Both schemes are served by Moonmock's own strict
/// HTTP/1.1 layer (one epoll loop per worker thread); HTTPS runs OpenSSL's sessions inside the
/// same loops (``ServerConfiguration/tlsCertificatePEM``).
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
    /// What handlers' calls go through: libcurl's multi interface, traced when the engine traces.
    let outbound: any OutboundClient
    public let configuration: ServerConfiguration
    /// Rebuilds the script for `POST /__moonmock/reload`; `nil` when there is no script.
    let reloader: (@Sendable () throws -> ReloadResult)?
    /// What `GET /__moonmock/health` says about the script (generation, load time, last error).
    let scriptStatus: (@Sendable () -> JSONValue)?
    let admin: AdminAPI
    /// Recording a real API (`moonmock record`, `/__moonmock/recordings/*`).
    public let recorder = Recorder()
    /// `configuration.cors`, kept apart: reading it through `configuration` on every request
    /// would copy the configuration's strings and arrays (retains and releases per request).
    let corsFlagPolicy: CORSPolicy?
    let corsFlag: Bool
    /// With a shared store: where requests that may wait for it are answered (not on a loop).
    let storeWorkers: StoreWorkers?

    private let state = Locked(State())
    private struct State {
        var port = 0
        var stopping = false
        /// The workers, one event loop each.
        var loops: [EventLoop] = []
    }
    private var loops: [EventLoop] { state.withLock { $0.loops } }
    private var isRunning: Bool { state.withLock { !$0.loops.isEmpty } }
    /// The TLS context every loop makes its sessions from; `nil` for plain HTTP.
    private(set) var tls: TLSContext?

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
    ///   - runtimeRules: where `POST /__moonmock/rules` adds rules (``RuntimeRules`` made with the
    ///     script's options and folder); by default one in the current folder, made on first use.
    public init(engine: Engine, configuration: ServerConfiguration = ServerConfiguration(),
                reload: (@Sendable () throws -> ReloadResult)? = nil, scriptStatus: (@Sendable () -> JSONValue)? = nil,
                runtimeRules: RuntimeRules? = nil) {
        self.engine = engine
        self.configuration = configuration
        self.reloader = reload
        self.scriptStatus = scriptStatus
        self.corsFlagPolicy = configuration.cors
        self.corsFlag = configuration.cors != nil
        self.storeWorkers = engine.store == nil ? nil : StoreWorkers(threads: configuration.storeWorkers)
        // Webhooks and mock.after work go through libcurl's multi interface, as mock.fetch does.
        // Traced, each call is a client span of its request's (TracedOutbound).
        self.outbound = engine.tracer.map { TracedOutbound(CurlOutbound.shared, tracer: $0) } ?? CurlOutbound.shared
        if engine.outbox.client == nil { engine.outbox.client = outbound }
        self.admin = AdminAPI(engine: engine, token: configuration.adminToken,
                              hosts: Set((["localhost", "127.0.0.1", "::1", configuration.host] + configuration.adminHosts).map { $0.lowercased() }),
                              rulesSlot: RuntimeRulesSlot(runtimeRules) { try RuntimeRules(engine: engine, origin: "admin API") })
    }

    deinit {
        stop(drainSeconds: 0)
        storeWorkers?.stop()
    }

    /// With a shared store, whether `request` goes to a store worker: the admin API (its reads
    /// and health ask the store) and requests a rule may answer with the store's help.
    func mayWaitForStore(_ request: MockRequest, onLoopWithStore: Bool = false) -> Bool {
        if recorder.isRecording { return false }   // everything goes upstream, none to the store
        // A loop with its own store connection runs handlers whose store use waits (mock.state).
        return AdminAPI.owns(request.path) || engine.mayUseStore(request, waitsAllowed: onLoopWithStore)
    }

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
        state.withLock { s in s.loops.map { $0.connectionCount.load(ordering: .relaxed) } }
    }

    /// The readiness API the workers wait on: `epoll` (Linux), `kqueue` (Darwin) or `poll`
    /// (`MOONMOCK_POLLER=poll`), or `nil` before ``start()``.
    public var poller: String? { state.withLock { $0.loops.first?.poller.name } }

    /// Raises the process's soft limit on open descriptors as far as the system lets it (every
    /// connection is one; Linux's default soft limit is 1,024, macOS's 256).
    public static func raiseDescriptorLimit() { SocketCalls.raiseDescriptorLimit() }

    /// Streamed answers (SSE, `mock.stream`, `mock.llm`, gRPC streams) being sent.
    public var openStreams: Int {
        loops.reduce(0) { $0 + $1.openStreams.load(ordering: .relaxed) }
    }

    /// Requests being handled (including delayed and held ones).
    public var requestsInFlight: Int {
        loops.reduce(0) { $0 + $1.inFlight.load(ordering: .relaxed) }
    }

    /// Binds and starts serving. Throws ``ServerError`` when the address cannot be used.
    ///
    /// Each worker thread runs an event loop of its own. On Linux each has its own listening
    /// socket (one `SO_REUSEPORT` group), so that the kernel spreads connections over the
    /// workers: with one shared socket, the worker that wakes first accepts a whole burst of
    /// connections and the others may stay idle for as long as those connections live. Darwin's
    /// `SO_REUSEPORT` does not spread them, so there the workers share one socket.
    public func start() throws {
        guard !isRunning else { return }
        // Replicas sharing a store: take on its switches and rules, and follow their changes.
        admin.startSharing()
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
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketCalls.portFree($0, socklen_t(length)) }
            }
            if free != 0 {
                throw ServerError.listen("cannot listen on \(configuration.host):\(configuration.port) (\(String(cString: strerror(errno))))")
            }
        }
        if let certificate = configuration.tlsCertificatePEM, let key = configuration.tlsKeyPEM {
            tls = try TLSContext(certificatePEM: certificate, keyPEM: key, http2: configuration.http2)
        }
        let (sockets, port) = try openListeners(&storage, length)
        try startLoops(sockets, port)
    }

    /// One listening socket per worker, all of one `SO_REUSEPORT` group (Darwin: descriptors of
    /// one socket), and the port they share (with port 0, the first socket picks it and
    /// `storage` is rewritten for the others).
    private func openListeners(_ storage: inout sockaddr_storage, _ length: Int) throws -> ([Int32], Int) {
        var sockets: [Int32] = []
        var port = configuration.port
        for _ in 0..<max(1, configuration.threads) {
            let fd = SocketCalls.sharedListener && !sockets.isEmpty ? fcntl(sockets[0], F_DUPFD_CLOEXEC, 0) : withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketCalls.listen($0, socklen_t(length), backlog: 1024) }
            }
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                sockets.forEach { close($0) }
                throw ServerError.listen("cannot listen on \(configuration.host):\(configuration.port) (\(reason))")
            }
            sockets.append(fd)
            if port == 0 {
                port = SocketCalls.port(of: fd)
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

    /// Stops accepting, lets requests in flight finish (up to `drainSeconds`), releases held
    /// connections and closes everything. Safe to call twice.
    public func stop(drainSeconds: Double = 5) {
        guard isRunning else { return }
        state.withLock { $0.stopping = true }
        let deadline = Date().addingTimeInterval(drainSeconds)
        let running = loops
        // Each loop closes its socket, its idle and held connections, and closes the others
        // after their response.
        running.forEach { $0.stopAccepting() }
        while requestsInFlight > 0 && Date() < deadline { usleep(5_000) }
        running.forEach { $0.exitAndJoin() }
        state.withLock { $0.loops = [] }
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

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

extension Optional where Wrapped == String {
    /// Runs `body` with a C string, or `nil`.
    func withOptionalCString<T>(_ body: (UnsafePointer<CChar>?) -> T) -> T {
        switch self {
        case .some(let s): return s.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Moonmock
import MoonmockCore
import MoonmockServer

/// Moonmock's two front doors: the in-process `URLProtocol` and the socket server. A test
/// parameterised over both runs the same requests and the same expectations through each.
enum Door: String, CaseIterable, CustomStringConvertible, Sendable {
    case inProcess = "in-process"
    case socket
    var description: String { rawValue }
}

/// One `mocks.lua` served through one door: a ``Moonmock`` whose engine answers, reached either
/// through its own `URLSession` (in-process) or over HTTP on 127.0.0.1 from a plain
/// `URLSession`, with a ``MoonmockServer`` on port 0 serving that same engine.
///
/// ```swift
/// let served = try Served(script, door: .socket)
/// defer { served.stop() }
/// let reply = try await served.fetch("/users/7")
/// ```
final class Served: Sendable {
    let door: Door
    let moonmock: Moonmock
    let server: MoonmockServer?
    let session: URLSession
    /// Where requests go: any host in-process (no request leaves the process), the server's
    /// address over the socket.
    let baseURL: String

    /// Serves `script` through `door`. The environment is pinned (clock, uuid, random) as in
    /// the other suites, so a script's answers do not depend on when the test runs.
    init(_ script: String, door: Door, unmatched: UnmatchedPolicy = .notImplemented, seed: UInt64 = 1) throws {
        self.door = door
        moonmock = Moonmock(environment: .fixed(now: 1_700_000_000, seed: seed))
        try moonmock.load(lua: script)
        moonmock.unmatchedPolicy = unmatched
        switch door {
        case .inProcess:
            server = nil
            session = moonmock.makeSession()
            baseURL = "http://api.example.test"
        case .socket:
            let server = try Self.serve(moonmock.engine)
            self.server = server
            session = plainSession
            baseURL = server.baseURL
        }
    }

    /// A socket server on 127.0.0.1, port 0, for `engine` (the same engine in-process requests reach).
    static func serve(_ engine: Engine) throws -> MoonmockServer {
        _ = ignoreSIGPIPE
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        let server = MoonmockServer(engine: engine, configuration: configuration)
        try server.start()
        return server
    }

    /// A session of its own through this door (the instance's protocol in-process, plain over
    /// the socket), its configuration changed by `configure` first.
    ///
    /// ```swift
    /// let session = served.makeSession { $0.timeoutIntervalForRequest = 1 }
    /// ```
    func makeSession(_ configure: (URLSessionConfiguration) -> Void) -> URLSession {
        let configuration = door == .inProcess ? moonmock.makeConfiguration() : URLSessionConfiguration.ephemeral
        configure(configuration)
        return URLSession(configuration: configuration)
    }

    /// Serves `script` through `door`, runs `body` with it, then stops it.
    ///
    /// ```swift
    /// try await Served.serving(script, door: .socket) { served in … }
    /// ```
    static func serving(_ script: String, door: Door, _ body: (Served) async throws -> Void) async throws {
        let served = try Served(script, door: door)
        defer { served.stop() }
        try await body(served)
    }

    /// Serves `script` through `door`, runs `body` with a session of its own (configured by
    /// `configure`, as for ``makeSession(_:)``), then lets go of both.
    ///
    /// ```swift
    /// try await Served.with(script, door: .socket, { $0.httpShouldSetCookies = false }) { served, session in … }
    /// ```
    static func with(_ script: String, door: Door, _ configure: (URLSessionConfiguration) -> Void,
                     _ body: (Served, URLSession) async throws -> Void) async throws {
        try await serving(script, door: door) { served in
            let session = served.makeSession(configure)
            defer { session.finishTasksAndInvalidate() }
            try await body(served, session)
        }
    }

    /// Stops the server without waiting for requests a test left held or delayed.
    func stop() { server?.stop(drainSeconds: 0) }

    struct Reply: Sendable {
        let status: Int
        let body: String
        let contentType: String?
        let headers: [String: String]
        /// The response's URL: where the last redirect led, if any.
        let url: String
        /// Seconds from sending to the whole body.
        let elapsed: Double
    }

    /// One request through this door.
    func fetch(_ path: String, method: String = "GET", body: String? = nil, headers: [String: String] = [:]) async throws -> Reply {
        try await Self.fetch(session, baseURL + path, method: method, body: body, headers: headers)
    }

    static func fetch(_ session: URLSession, _ url: String, method: String = "GET", body: String? = nil,
                      headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 10)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let started = Date()
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for case let (name as String, value as String) in http.allHeaderFields { fields[name.lowercased()] = value }
        return Reply(status: http.statusCode, body: String(decoding: data, as: UTF8.self),
                     contentType: http.value(forHTTPHeaderField: "Content-Type"), headers: fields, url: http.url?.absoluteString ?? "",
                     elapsed: Date().timeIntervalSince(started))
    }
}

let plainSession: URLSession = {
    let c = URLSessionConfiguration.ephemeral
    c.timeoutIntervalForRequest = 10
    return URLSession(configuration: c)
}()

/// A fault closes the connection under a client that may still be writing: an EPIPE, not a
/// signal that ends the test process.
private let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

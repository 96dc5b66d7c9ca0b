import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
import MoonmockScript
import MoonmockServer

/// How much longer a bounded wait may take: sanitizer runs are several times slower
/// (`scripts/test --sanitize` sets MOONMOCK_TEST_TIME_SCALE).
let timeScale = Double(ProcessInfo.processInfo.environment["MOONMOCK_TEST_TIME_SCALE"] ?? "") ?? 1

/// A server on 127.0.0.1, port 0, serving `script`; stopped by the caller (or on deinit).
func startServer(_ script: String, scheme: Scheme = .http, options: ScriptOptions = ScriptOptions(),
                 configure: (inout ServerConfiguration) -> Void = { _ in },
                 reload: (@Sendable () throws -> MoonmockServer.ReloadResult)? = nil) throws -> MoonmockServer {
    // The raw-socket clients write to connections the server may already have closed (fuzzing,
    // faults): that must be an EPIPE for the test, not a signal that ends the test process.
    _ = ignoreSIGPIPE
    let engine = Engine(environment: .fixed(now: 1_700_000_000, seed: 1))
    try engine.loadScript(source: script, options: options)
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.threads = 2
    if scheme == .https {
        configuration.tlsCertificatePEM = testCertificate.certificatePEM
        configuration.tlsKeyPEM = testCertificate.keyPEM
    }
    configure(&configuration)
    let server = MoonmockServer(engine: engine, configuration: configuration, reload: reload)
    try server.start()
    return server
}

// (Children are started with Subprocess, never Foundation's Process: see MoonmockProcessSupport.)
private let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

/// Runs blocking `work` on a thread of its own: blocking reads on the cooperative pool (two
/// threads on a two-core machine) would hold up every other test's tasks, this one's included.
func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

let plainSession: URLSession = {
    let c = URLSessionConfiguration.ephemeral
    c.timeoutIntervalForRequest = 10
    return URLSession(configuration: c)
}()

extension MoonmockServer {
    /// A request through a real URLSession to this server (curl for HTTPS: URLSession on Linux
    /// cannot be told to trust a private authority).
    func fetch(_ path: String, method: String = "GET", body: String? = nil,
               headers: [String: String] = [:]) async throws -> (status: Int, body: String, response: HTTPURLResponse) {
        if endpointTLS { return try await curlFetch(path, method: method, body: body, headers: headers) }
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let (data, response) = try await plainSession.data(for: request)
        let http = response as! HTTPURLResponse
        return (http.statusCode, String(decoding: data, as: UTF8.self), http)
    }
}

extension MoonmockServer {
    /// `fetch` through curl, trusting the test authority.
    func curlFetch(_ path: String, method: String, body: String?,
                   headers: [String: String]) async throws -> (status: Int, body: String, response: HTTPURLResponse) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let head = dir.appendingPathComponent("head").path, out = dir.appendingPathComponent("body").path
        var arguments = ["-s", "--cacert", testCertificate.authorityFile.path, "-X", method, "-D", head, "-o", out]
        if let body { arguments += ["--data-binary", body] }
        for (k, v) in headers { arguments += ["-H", "\(k): \(v)"] }
        let status = await curlExit(arguments + [baseURL + path])
        guard status == 0 else { throw URLError(.badServerResponse) }
        let lines = try String(contentsOfFile: head, encoding: .utf8).components(separatedBy: "\r\n")
        let code = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let response = HTTPURLResponse(url: URL(string: baseURL + path)!, statusCode: code, httpVersion: "HTTP/1.1", headerFields: fields)!
        return (code, String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data(), as: UTF8.self), response)
    }
}

/// A blocking TCP client on loopback for what URLSession hides: resets, empty replies,
/// broken chunking, held connections.
enum RawHTTP {
    struct Result {
        var bytes: [UInt8] = []
        /// `errno` of the read that failed (ECONNRESET for a reset), 0 when the peer closed.
        var error: Int32 = 0
        var timedOut = false
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    static func connect(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if rc != 0 { close(fd); return -1 }
        return fd
    }

    /// Sends `request` and reads until the peer closes, fails, or `timeout` passes (over TLS when
    /// the endpoint is an HTTPS server).
    static func exchange(_ endpoint: Endpoint, _ request: String, timeout: Double = 5) -> Result {
        guard let connection = RawConnection(endpoint, timeout: timeout) else { return Result(error: ECONNREFUSED) }
        connection.send(request)
        return connection.readToEnd()
    }

    /// Sends `count` copies of `request` on separate connections at once and waits for every
    /// full response (the peer closes each: send `Connection: close`). Returns the bodies' statuses.
    static func parallel(_ endpoint: Endpoint, _ request: String, count: Int, timeout: Double = 10) -> [Int] {
        var connections: [Int32: RawConnection] = [:]
        var order: [Int32] = []
        for _ in 0..<count {
            if let c = RawConnection(endpoint, timeout: 5) {
                connections[c.fd] = c
                order.append(c.fd)
            }
        }
        for fd in order { connections[fd]!.send(request) }
        var responses = [Int32: [UInt8]]()
        var open = Set(order)
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !open.isEmpty && Date() < deadline {
            var polls = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&polls, nfds_t(polls.count), 100)
            for p in polls where p.revents != 0 {
                let n = connections[p.fd]!.read(&buffer)
                if n > 0 { responses[p.fd, default: []] += buffer[0..<n] } else { open.remove(p.fd) }
            }
        }
        return order.map { fd in
            let text = String(decoding: responses[fd] ?? [], as: UTF8.self)
            return Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
    }
}

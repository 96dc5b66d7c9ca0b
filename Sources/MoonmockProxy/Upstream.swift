import CCurl
import Foundation
import MoonmockCore

/// Sends the requests `mock.proxy` forwards, through libcurl, on a few threads of its own:
/// an event loop hands a request over and goes on serving; the answer comes back to the
/// completion. Each thread keeps one curl handle, so connections to an upstream stay open
/// from request to request. Redirects are not followed and content codings not undone: the
/// client gets the upstream's answer as it was sent.
///
/// ```swift
/// Upstream.shared.forward(request, to: ProxyTarget(base: "https://api.example.com")) { response in … }
/// ```
public final class Upstream: Sendable {
    /// The process's pool (threads start on first use).
    public static let shared = Upstream(threads: 8)

    private struct Job: @unchecked Sendable {
        let request: MockRequest
        let target: ProxyTarget
        let completion: @Sendable (MockResponse) -> Void
    }

    private struct State: @unchecked Sendable {
        var jobs: [Job] = []
        /// Idle workers, the one idle the shortest last: a request goes to the thread that
        /// worked last, whose connection to the upstream is the warmest.
        var idle: [DispatchSemaphore] = []
        var started = 0
    }
    private let state = Locked(State())
    private let threads: Int

    public init(threads: Int) {
        self.threads = max(1, threads)
        Self.globalInit
    }

    private static let globalInit: Void = { mm_upstream_global_init() }()

    /// Forwards `request` to `target`; `completion` runs on a pool thread with the upstream's
    /// answer, or a `502` saying which upstream failed and why.
    public func forward(_ request: MockRequest, to target: ProxyTarget, completion: @escaping @Sendable (MockResponse) -> Void) {
        enum Next { case wake(DispatchSemaphore), start, none }
        let next = state.withLock { s -> Next in
            s.jobs.append(Job(request: request, target: target, completion: completion))
            if let worker = s.idle.popLast() { return .wake(worker) }
            if s.started < threads { s.started += 1; return .start }
            return .none   // every thread is busy: the first to finish takes it
        }
        switch next {
        case .wake(let worker): worker.signal()
        case .start:
            let thread = Thread { [self] in work() }
            thread.name = "moonmock.upstream"
            thread.start()
        case .none: break
        }
    }

    /// ``forward(_:to:completion:)``, waiting for the answer (tests, tools).
    public func fetch(_ request: MockRequest, to target: ProxyTarget) -> MockResponse {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<MockResponse?>(nil)
        forward(request, to: target) { response in
            result.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    private func work() {
        let handle = mm_upstream_handle_new()
        defer { mm_upstream_handle_free(handle) }
        let wake = DispatchSemaphore(value: 0)
        /// The next job, or `nil` with this thread on the idle list.
        func next() -> Job? {
            state.withLock { s -> Job? in
                if !s.jobs.isEmpty { return s.jobs.removeFirst() }
                s.idle.append(wake)
                return nil
            }
        }
        var job = next()
        while true {
            guard let current = job else {
                wake.wait()
                job = next()
                continue
            }
            let response = perform(handle, current.request, current.target)
            // Idle (or on to the next job) before the answer is handed on: a caller that sends
            // again at once finds this thread, and its open connection, waiting.
            job = next()
            current.completion(response)
        }
    }

    private func perform(_ handle: UnsafeMutableRawPointer?, _ request: MockRequest, _ target: ProxyTarget) -> MockResponse {
        let url = target.url(for: request)
        var lines = target.forwardedHeaders(request).fields.map { "\($0.name): \($0.value)" }
        // Fields curl would add that the client did not send.
        if request.headers["accept"] == nil { lines.append("Accept:") }
        if request.headers["content-type"] == nil { lines.append("Content-Type:") }
        var result = mm_upstream_result()
        defer { mm_upstream_result_free(&result) }
        let code = withCStrings(lines) { pointers in
            request.body.withUnsafeBufferPointer { body in
                mm_upstream_perform(handle, request.method, url, pointers, lines.count, body.baseAddress, body.count,
                                    target.timeoutMilliseconds, target.insecure ? 1 : 0, &result)
            }
        }
        guard code == 0, result.status >= 100 else {
            let reason = withUnsafeBytes(of: result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return Self.failure(target, url, reason.isEmpty ? "no answer" : reason)
        }
        var response = MockResponse(status: Int(result.status))
        let head = result.head.data.map { String(decoding: UnsafeBufferPointer(start: $0, count: result.head.len), as: UTF8.self) } ?? ""
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            // The server frames the answer itself.
            if ["transfer-encoding", "content-length", "connection", "keep-alive"].contains(name.lowercased()) { continue }
            response.headers.add(name, value)
        }
        if let data = result.body.data { response.body = Array(UnsafeBufferPointer(start: data, count: result.body.len)) }
        return response
    }

    /// The field of a `502` of Upstream's own, saying why the upstream did not answer.
    public static let failureHeader = "X-Moonmock-Proxy-Error"

    /// `502` naming the upstream and what went wrong.
    static func failure(_ target: ProxyTarget, _ url: String, _ reason: String) -> MockResponse {
        var r = MockResponse.json(.object([
            "error": .string("mock.proxy: upstream \(target.base) did not answer \(url): \(reason)"),
            "upstream": .string(target.base),
        ]), status: 502)
        r.headers.add(failureHeader, reason)
        return r
    }
}

/// `body` with the strings as a C array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer<CChar>($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

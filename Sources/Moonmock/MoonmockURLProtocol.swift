import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore

/// The in-process transport: turns a `URLRequest` into a ``MockRequest``, runs it through the
/// owning instance's ``Engine`` and delivers the result through the protocol client.
///
/// You rarely name this class: use ``Moonmock/install(into:)``, ``Moonmock/makeConfiguration(_:)``
/// or ``Moonmock/installGlobally()``. Registered directly, it answers for the global instance.
public class MoonmockURLProtocol: URLProtocol {
    /// The instance this class answers for.
    class var owner: Moonmock? { InstanceRegistry.global }
    /// Whether requests are claimed even when the owner is gone (then they fail with a clear
    /// error instead of reaching the real network).
    class var claimsWithoutOwner: Bool { false }

    static let passThroughKey = "moonmock.passThrough"

    /// `@unchecked`: only touched under the lock below.
    struct Pending: @unchecked Sendable {
        var stopped = false
        var timers: [DispatchWorkItem] = []
        var upstream: URLSessionDataTask?
        /// The stream being sent, ended as "client left" if loading stops first.
        var stream: StreamCursor?
        /// A handler that waits, cancelled if loading stops first.
        var waiting: WaitHandle?
        /// The request answered (its webhooks go when loading ends).
        var requestID: Int?
    }
    /// Inline, not an `NSLock` object: one protocol object is made and freed per request, on
    /// the session's serial work queue.
    private let pending = Locked(Pending())
    /// A dribbled body goes out in one piece at the end: the task hands its data to a completion
    /// handler (or `async data(for:)`), and swift-corelibs-foundation gives those only the data
    /// of the last `didLoad` call. Delegates still get the slices as they come.
    private var dribbleWhole = false
    /// Where later client calls go (delays, dribble, timeouts, pass-through): see ``CallbackRoute``.
    private var route: CallbackRoute?

    /// The route back to `startLoading`'s queue or run loop, found on first use; first used
    /// in `startLoading`.
    func later() -> CallbackRoute {
        if let route { return route }
        let found = CallbackRoute.here(workQueue: Self.workQueue(of: task))
        route = found
        return found
    }

    /// What the task's session adds to its requests: the session's own configuration where the
    /// task shows it (corelibs Foundation), else the configuration this class was installed into.
    var sessionFacts: SessionFacts? { SessionFacts.of(task) ?? Self.installedFacts }

    /// The facts of the configuration this class was made for; the global class answers for
    /// `URLSession.shared`.
    class var installedFacts: SessionFacts? { SessionFacts.sharedSession }

    /// Timers and the upstream task are shared by the loading thread and timer threads.
    func withPending<T>(_ body: (inout Pending) -> T) -> T {
        pending.withLock { body(&$0) }
    }

    override public class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme,
              scheme.equalsIgnoringASCIICase("http") || scheme.equalsIgnoringASCIICase("https") else { return false }
        if URLProtocol.property(forKey: passThroughKey, in: request) != nil { return false }
        guard let owner else { return claimsWithoutOwner }
        // Left to the next protocol when no rule would answer it.
        if owner.unmatchedPolicy == .leaveUnclaimed {
            var probe = request
            // A stream is read once, by whoever loads the request. (Setting it to nil would
            // also drop an `httpBody`: URLRequest keeps one body, data or stream.)
            if probe.httpBody == nil && probe.httpBodyStream != nil { probe.httpBodyStream = nil }
            return owner.engine.wouldAnswer(MockRequest(probe))
        }
        return true
    }

    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// The engine's answer to this request when it was worked out before `startLoading`
    /// (see ``init(task:cachedResponse:client:)``).
    private var answer: Answer?

    #if canImport(FoundationNetworking)
    /// swift-corelibs-foundation makes the protocol object of a resumed task on a global queue
    /// (after asking the session's URL cache), then runs `startLoading` on the session's serial
    /// work queue, which every task of the session shares. A task that is running by then has
    /// been sent: the engine answers it here, off that queue, so that the requests of a session
    /// are routed and run in parallel with the session's own bookkeeping. A task made for a
    /// cancellation or a suspension (not running) is left alone; it is answered in
    /// `startLoading`, if that ever comes.
    public required convenience init(task: URLSessionTask, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        self.init(request: task.originalRequest ?? URLRequest(url: URL(string: "http://localhost/")!), cachedResponse: cachedResponse, client: client)
        self.task = task
        if task.state == .running, let owner = Self.owner {
            answer = Answer(request, owner, session: sessionFacts)
        }
    }
    #endif

    override public func startLoading() {
        _ = later()   // where later client calls go: decided here, on the caller's thread
        let answer: Answer
        if let early = self.answer {
            answer = early
            self.answer = nil
        } else if let owner = Self.owner {
            answer = Answer(request, owner, session: sessionFacts)
        } else {
            fail(MoonmockError.released(request.url?.absoluteString ?? "?"))
            return
        }
        switch answer {
        case .wait(let exchange, let current, let milliseconds, let head):
            if let owner = Self.owner { wait(exchange, current, delayMilliseconds: milliseconds, head: head, owner: owner) }
        case .respond(let delivery, let milliseconds):
            if let id = delivery.requestID { withPending { $0.requestID = id } }
            if case .dribble? = delivery.response.fault {
                // Read here, on the session's work queue, which owns the task registry.
                dribbleWhole = Self.completionHandlerTakesLastChunkOnly(task)
            }
            if milliseconds > 0 {
                // Nothing reaches the client while it waits, so a delay past the task's timeout
                // ends as it would over the network: in a timeout, when the timeout is up.
                let timeout = idleTimeout
                if let timeout, milliseconds / 1000 > timeout {
                    schedule(after: timeout) { me in me.fail(URLError(.timedOut)) }
                } else {
                    schedule(after: milliseconds / 1000) { me in me.send(delivery) }
                }
            } else {
                send(delivery)
            }
        case .fail(let error):
            fail(error)
        case .passThrough(let upstream, let journalID, let insecure):
            passThrough(upstream, journalID: journalID, insecure: insecure)
        #if canImport(MoonmockProxy)
        case .forward(let upstream, let proxy, let head):
            forward(upstream, to: proxy, head: head)
        #endif
        }
    }

    override public func stopLoading() {
        let (timers, upstream, waiting) = withPending { p in
            p.stopped = true
            defer { p.timers = []; p.upstream = nil; p.waiting = nil }
            return (p.timers, p.upstream, p.waiting)
        }
        timers.forEach { $0.cancel() }
        upstream?.cancel()
        waiting?.cancel()
        releaseHeldWork()
        if let cursor = withPending({ p in defer { p.stream = nil }; return p.stream }) { endStream(cursor, "client left") }
    }

    // MARK: delivery

    /// Delivers `delivery`, honouring its fault.
    func send(_ delivery: Delivery) {
        switch delivery.response.fault {
        case .connectionReset?: fail(URLError(.networkConnectionLost))
        case .emptyResponse?, .malformedChunk?: fail(URLError(.badServerResponse))
        case .error(let failure)?: fail(failure.error)
        case .forward?, .suspended?: fail(URLError(.unsupportedURL))   // forwarded or driven before delivery (Answer); never delivered
        case .stream(let plan)?:
            guard sendHead(delivery) else { return }
            let cursor = plan.start()
            if delivery.head.map({ _ in request.httpMethod == "HEAD" }) == true {
                endStream(cursor, "completed")
                return finish()
            }
            withPending { $0.stream = cursor }
            // A completion handler (or async data(for:)) gets only the last piece on Linux:
            // the body goes to it whole, at the end; delegates get each piece as it is sent.
            stream(cursor, whole: Self.completionHandlerTakesLastChunkOnly(task), buffer: Data())
        case .timeout?:
            // Hold, never answer: the client gives up after its own timeout.
            schedule(after: idleTimeout ?? 60) { me in me.fail(URLError(.timedOut)) }
        case .dribble(let bytesPerSecond)?:
            guard sendHead(delivery) else { return }
            let body = delivery.body
            if dribbleWhole {
                // As slow as the slices would be, but in one piece (see `dribbleWhole`).
                schedule(after: Double(body.count) / Double(max(1, bytesPerSecond))) { me in
                    if !body.isEmpty { me.client?.urlProtocol(me, didLoad: body) }
                    me.finish()
                }
            } else {
                dribble(body, bytesPerSecond: max(1, bytesPerSecond))
            }
        case nil, .websocket?:
            // A WebSocket route answers a plain request with its 426 (a URLProtocol cannot
            // upgrade a connection: the socket server serves WebSockets).
            guard sendHead(delivery) else { return }
            if !delivery.body.isEmpty { client?.urlProtocol(self, didLoad: delivery.body) }
            finish()
        }
    }

    /// How long the task waits for a response before it fails with `.timedOut`, as URLSession
    /// decides for a request it sends over the network: the request's `timeoutInterval` when
    /// it was given one, else the session's `timeoutIntervalForRequest`. (URLSession records
    /// whether a request's interval was set, out of reach of a `URLProtocol`; an interval other
    /// than the default 60 s counts as set.) `nil`: no timeout (zero, negative or not finite).
    ///
    /// ```swift
    /// configuration.timeoutIntervalForRequest = 2   // a default request then times out after 2 s
    /// ```
    var idleTimeout: TimeInterval? {
        var timeout = request.timeoutInterval
        if timeout == Self.defaultRequestTimeout, let session = sessionFacts {
            timeout = session.timeoutIntervalForRequest
        }
        return timeout.isFinite && timeout > 0 ? timeout : nil
    }

    /// `URLRequest`'s own timeout until one is set.
    private static let defaultRequestTimeout: TimeInterval = URLRequest(url: URL(string: "http://localhost/")!).timeoutInterval

    /// Sends the status line and headers; `false` when loading was stopped or they could not
    /// be sent (then the task has failed).
    private func sendHead(_ delivery: Delivery) -> Bool {
        guard !withPending({ $0.stopped }) else { return false }
        guard let http = delivery.head else {
            fail(URLError(.badServerResponse))
            return false
        }
        storeCookies(delivery.response, url: http.url ?? request.url)
        // A redirect reaches here only when it cannot be followed (see `Answer`): wasRedirectedTo
        // crashes on Linux, so a 3xx is handed over as a plain response.
        client?.urlProtocol(self, didReceive: http, cacheStoragePolicy: .notAllowed)
        return true
    }

    /// Keeps the response's cookies as URLSession keeps those of a response from the network
    /// (see ``SessionFacts/storeCookies(of:for:mainDocumentURL:)``), when the request handles cookies.
    private func storeCookies(_ response: MockResponse, url: URL?) {
        guard let url, request.httpShouldHandleCookies, !response.headers.values("Set-Cookie").isEmpty else { return }
        sessionFacts?.storeCookies(of: response, for: url, mainDocumentURL: request.mainDocumentURL)
    }

    /// Sends `body` in slices so that it arrives at about `bytesPerSecond`.
    private func dribble(_ body: Data, bytesPerSecond: Int) {
        let slice = max(1, bytesPerSecond / 10)
        guard !body.isEmpty else { finish(); return }
        let chunk = Data(body.prefix(slice))
        let rest = Data(body.dropFirst(slice))
        schedule(after: Double(chunk.count) / Double(bytesPerSecond)) { me in
            me.client?.urlProtocol(me, didLoad: chunk)
            me.dribble(rest, bytesPerSecond: bytesPerSecond)
        }
    }

    /// Sends what is due, then waits on a timer for what comes next (no thread waits).
    private func stream(_ cursor: StreamCursor, whole: Bool, buffer: Data) {
        var buffer = buffer
        while true {
            switch cursor.next() {
            case .send(let bytes)?:
                if bytes.isEmpty { continue }
                if whole { buffer.append(contentsOf: bytes) } else { client?.urlProtocol(self, didLoad: Data(bytes)) }
            case .wait(let milliseconds)?:
                recordStream(cursor)
                let kept = buffer
                schedule(after: milliseconds / 1000) { me in me.stream(cursor, whole: whole, buffer: kept) }
                return
            case nil:
                withPending { $0.stream = nil }
                if !buffer.isEmpty { client?.urlProtocol(self, didLoad: buffer) }
                endStream(cursor, "completed")
                return finish()
            }
        }
    }

    private func endStream(_ cursor: StreamCursor, _ reason: String) {
        cursor.end(reason)
        recordStream(cursor)
    }

    private func recordStream(_ cursor: StreamCursor) {
        guard let id = cursor.journalID else { return }
        Self.owner?.engine.journal.recordStream(cursor.transcript, for: id)
    }

    func finish() {
        guard !withPending({ $0.stopped }) else { return }
        client?.urlProtocolDidFinishLoading(self)
        releaseHeldWork()
    }

    func fail(_ error: any Error) {
        guard !withPending({ $0.stopped }) else { return }
        client?.urlProtocol(self, didFailWithError: error)
        releaseHeldWork()
    }

    /// Runs `body` after `seconds` unless loading stops first.
    func schedule(after seconds: Double, _ body: @escaping (MoonmockURLProtocol) -> Void) {
        let me = Unchecked(self)
        let item = DispatchWorkItem {
            guard !me.value.withPending({ $0.stopped }) else { return }
            body(me.value)
        }
        let accepted = withPending { p -> Bool in
            guard !p.stopped else { return false }
            p.timers.removeAll { $0.isCancelled }
            p.timers.append(item)
            return true
        }
        if accepted { later().asyncAfter(seconds, item) }
    }

}

/// The protocol class of one ``Moonmock`` instance (see ``InstanceRegistry``).
final class TaggedURLProtocol<Tag: InstanceTag>: MoonmockURLProtocol {
    override class var owner: Moonmock? { InstanceRegistry.instance(for: self) }
    override class var installedFacts: SessionFacts? { InstanceRegistry.installedFacts(for: self) }
    override class var claimsWithoutOwner: Bool { true }
}

/// Carries a non-Sendable reference into a timer or completion handler. The protocol object
/// is only touched there after checking that loading has not stopped.
struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

extension MockRequest {
    /// The request as the engine sees it, with the header fields URLSession would send with it
    /// over the network: the session's `httpAdditionalHeaders` (the request's own fields win),
    /// the `cookies` stored for its URL (given for a request a redirect led to), `Host`,
    /// `Accept: */*`, and for a body its `Content-Length` (`Transfer-Encoding: chunked` for one
    /// from `httpBodyStream`, which has no length up front) and, on a `POST` without a
    /// `Content-Type`, `application/x-www-form-urlencoded`. The body comes from `httpBody`, else
    /// from `httpBodyStream` (Apple platforms move bodies there).
    ///
    /// ```swift
    /// let request = MockRequest(urlRequest, sessionHeaders: configuration.httpAdditionalHeaders)
    /// request.headers["authorization"]   // from the session when the request has none
    /// ```
    package init(_ request: URLRequest, sessionHeaders: [String: String]? = nil, cookies: HTTPCookieStorage? = nil) {
        var fields: [(String, String)] = []
        var names = Set<String>()
        // Sorted so that the journal shows them in the same order every run.
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            fields.append((name, value))
            names.insert(name.lowercased())
        }
        func add(_ name: String, _ value: String) {
            if names.insert(name.lowercased()).inserted { fields.append((name, value)) }
        }
        if let sessionHeaders {
            for (name, value) in sessionHeaders.sorted(by: { $0.key < $1.key }) { add(name, value) }
        }
        if let cookies, let url = request.url, let value = HTTPCookie.requestHeaderFields(with: cookies.cookies(for: url) ?? [])["Cookie"],
           !value.isEmpty {
            // As URLSession sets it on a request it makes for a redirect: the storage's cookies for the new URL.
            fields.removeAll { $0.0.lowercased() == "cookie" }
            names.insert("cookie")
            fields.append(("Cookie", value))
        }
        // Copied through a raw buffer (one memcpy): the generic Data-to-Array path goes byte by byte.
        var body = request.httpBody.map { data in data.withUnsafeBytes { [UInt8]($0) } } ?? []
        // A body read from a stream has no length up front: URLSession sends it chunked.
        var streamed = false
        if body.isEmpty, let stream = request.httpBodyStream {
            streamed = true
            stream.open()
            defer { stream.close() }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let n = stream.read(&buffer, maxLength: buffer.count)
                if n <= 0 { break }
                body.append(contentsOf: buffer[0..<n])
            }
        }
        let method = request.httpMethod ?? "GET"
        if let host = request.url?.host {
            add("Host", request.url?.port.map { "\(host):\($0)" } ?? host)
        }
        add("Accept", "*/*")
        if streamed || !body.isEmpty {
            if !streamed { add("Content-Length", String(body.count)) }
            else if !names.contains("content-length") { add("Transfer-Encoding", "chunked") }
            if method == "POST" { add("Content-Type", "application/x-www-form-urlencoded") }
        }
        self.init(method: method, url: request.url?.absoluteString ?? "http://localhost/",
                  headers: HTTPHeaders(fields), body: body)
    }
}

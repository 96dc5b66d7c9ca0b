import Foundation
import MoonmockCore

/// Live streaming calls over HTTP/2 (gRPC bidirectional streaming, `mock.grpc` with
/// `on_message`): the stream is routed as soon as its headers arrive, each message the client
/// sends goes to the rule's endpoint as it arrives, and what the endpoint sends leaves as DATA at
/// once. The endpoint is a ``WebSocketEndpoint`` (the same machinery as `mock.websocket`); its
/// close code is the call's gRPC status. The client ending its side ends the call with OK.
extension EventLoop {
    /// Routes the streams just opened whose path a live rule answers.
    func startLiveCalls(_ c: Connection, _ h2: HTTP2Session) {
        let opened = h2.opened
        h2.opened.removeAll(keepingCapacity: true)
        guard !stopping else { return }
        for stream in opened where !stream.isClosed && !stream.complete && stream.refusal == nil {
            guard stream.contentType.hasPrefix("application/grpc"), !stream.contentType.hasPrefix("application/grpc-web"),
                  serverRef._withUnsafeGuaranteedRef({ $0.engine.isLiveStream(stream.path) }) else { continue }
            stream.dispatched = true
            beginStream(stream)
            let request = stream.request(defaultScheme: scheme, defaultAuthority: defaultAuthority)
            serverRef._withUnsafeGuaranteedRef { server in
                LiveDispatch.run { server.answer(request) { response, delay in actStream(c, h2, stream, request, response, delay) } }
            }
        }
    }

    /// The rule answered a live call with its endpoint: HEADERS now, messages as they come.
    func openLiveCall(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream, _ route: WebSocketRoute, _ request: MockRequest) {
        var request = request
        request.id = route.journalID
        let session = WebSocketSession(id: route.journalID, request: request, endpoint: route.endpoint, openedAt: Date().timeIntervalSince1970)
        let fd = c.fd, serial = c.serial, id = stream.id
        session.onOutgoing { [weak self] in
            self?.commands.withLock { state in
                guard !state.closed else { return }
                state.websockets.append((fd, serial, id))
                self?.poke(state)
            }
        }
        stream.liveSession = session
        stream.phase = .sending
        h2.live[stream.id] = stream
        let engine = serverRef._withUnsafeGuaranteedRef { $0.engine }
        engine.websockets.add(session)
        let type = RPCProtocol(contentType: stream.contentType)?.responseContentType ?? "application/grpc"
        h2.respond(stream, status: 200, fields: [("content-type", type)] + fields(of: MockResponse(), length: nil), body: true)
        route.endpoint.opened(session, request)
        feedLive(c, h2, stream)
        flushLive(c, h2, stream)
    }

    /// Hands the whole messages that have arrived to the endpoint.
    func feedLive(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream) {
        guard let session = stream.liveSession else { return }
        var used = 0
        let body = stream.body
        while body.count - used >= 5 {
            let n = Int(body[used + 1]) << 24 | Int(body[used + 2]) << 16 | Int(body[used + 3]) << 8 | Int(body[used + 4])
            guard body.count - used - 5 >= n else { break }
            let message = WebSocketMessage.binary(Array(body[(used + 5)..<(used + 5 + n)]))
            used += 5 + n
            session.record("in", message)
            if session.isOpen { session.endpoint.received(session, message) }
        }
        if used > 0 {
            stream.body.removeFirst(used)
            h2.bodyBytes -= used
        }
    }

    /// Sends what the endpoint queued: messages as DATA, a close as the trailers (its code the status).
    func flushLive(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream) {
        guard let session = stream.liveSession, !stream.finished else { return }
        for item in session.takeOutgoing() {
            switch item {
            case .message(let message):
                if case .binary(let bytes) = message { stream.out += RPCFraming.envelope(bytes) }
                session.record("out", message)
            case .close(let code, let reason):
                // A handler's error closes with 1011 (as a WebSocket would): INTERNAL, with its text.
                finishLive(h2, stream, RPCStatus(code: (0...16).contains(code) ? code : 13, message: reason), how: "closed by the mock")
            }
        }
        h2.resume(stream)
        recordSocket(session)
        flushHTTP2(c, h2)
    }

    /// The client ended its side: the last messages go to the endpoint, then the call ends with OK.
    func endLiveInput(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream) {
        guard stream.liveSession != nil else { return }
        feedLive(c, h2, stream)
        flushLive(c, h2, stream)
        finishLive(h2, stream, .ok, how: "client finished")
        h2.resume(stream)
    }

    func finishLive(_ h2: HTTP2Session, _ stream: HTTP2Stream, _ status: RPCStatus, how: String) {
        guard let session = stream.liveSession, !stream.finished else { return }
        stream.trailers = RPCFraming.trailerFields(status, [])
        stream.finished = true
        closeLive(session, how: how)
        h2.live[stream.id] = nil
    }

    /// The call is over (ended, or its stream reset): the endpoint hears of it once.
    func closeLive(_ session: WebSocketSession, how: String) {
        guard session.markClosed(how) else { return }
        serverRef._withUnsafeGuaranteedRef { $0.engine.websockets.remove(session) }
        session.endpoint.closed(session, code: 1000, reason: how)
        recordSocket(session)
    }
}

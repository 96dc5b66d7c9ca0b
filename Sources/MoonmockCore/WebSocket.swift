import Foundation

/// The script's side of a WebSocket route (`mock.websocket`): called as sockets open, receive
/// messages, fire `ws:after` timers and close. The server's door calls it on its loop thread
/// (timers on a global queue); what a callback sends goes to the socket's outbox.
public protocol WebSocketEndpoint: AnyObject, Sendable {
    func opened(_ socket: WebSocketSession, _ request: MockRequest)
    func received(_ socket: WebSocketSession, _ message: WebSocketMessage)
    func fired(_ socket: WebSocketSession, timer token: Int)
    func closed(_ socket: WebSocketSession, code: Int, reason: String)
}

/// A WebSocket route's answer: the upgrade to its endpoint. Kept in ``MockResponse/fault`` as
/// ``Fault/websocket(_:)``, as `mock.proxy` and streams are.
public final class WebSocketRoute: Sendable, Equatable, CustomStringConvertible {
    public let endpoint: any WebSocketEndpoint
    /// The journal entry of the request it answers (set by the engine): the socket's id.
    public let journalID: Int
    public init(endpoint: any WebSocketEndpoint, journalID: Int = 0) {
        self.endpoint = endpoint
        self.journalID = journalID
    }
    /// The route for one request.
    public func serving(_ request: MockRequest) -> WebSocketRoute { WebSocketRoute(endpoint: endpoint, journalID: request.id) }
    public static func == (a: WebSocketRoute, b: WebSocketRoute) -> Bool { a === b }
    public var description: String { "websocket" }
}

/// One message, either way.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// One open WebSocket: its journal id, the request that opened it, what waits to be sent.
/// Sends and closes may come from any thread (a callback, a timer, the admin API, another
/// socket's broadcast); the door is woken to write them.
public final class WebSocketSession: @unchecked Sendable {
    public enum Outgoing: Sendable, Equatable {
        case message(WebSocketMessage)
        case close(code: Int, reason: String)
    }

    /// The journal id of the request that opened it: the socket's id in the admin API.
    public let id: Int
    public let request: MockRequest
    public let endpoint: any WebSocketEndpoint
    public let openedAt: Double

    private struct State {
        var outbox: [Outgoing] = []
        var closing = false
        var closed = false
        var transcript = StreamTranscript(kind: "websocket", resumedAt: 0)
        var wake: (@Sendable () -> Void)?
    }
    private let state = Locked(State())
    private let started = DispatchTime.now().uptimeNanoseconds

    public init(id: Int, request: MockRequest, endpoint: any WebSocketEndpoint, openedAt: Double) {
        self.id = id
        self.request = request
        self.endpoint = endpoint
        self.openedAt = openedAt
    }

    /// Set by the door: called (on any thread) when something waits to be sent.
    public func onOutgoing(_ wake: @escaping @Sendable () -> Void) { state.withLock { $0.wake = wake } }

    /// Queues a message; `false` once the socket is closing or closed.
    @discardableResult
    public func send(_ message: WebSocketMessage) -> Bool {
        let wake = state.withLock { s -> (@Sendable () -> Void)?? in
            guard !s.closing, !s.closed else { return nil }
            s.outbox.append(.message(message))
            return .some(s.wake)
        }
        guard let wake else { return false }
        wake?()
        return true
    }

    /// Starts the close handshake with `code` and `reason` (once).
    public func close(code: Int = 1000, reason: String = "") {
        let wake = state.withLock { s -> (@Sendable () -> Void)?? in
            guard !s.closing, !s.closed else { return nil }
            s.closing = true
            s.outbox.append(.close(code: code, reason: reason))
            return .some(s.wake)
        }
        if let wake { wake?() }
    }

    /// What waits to be sent, taken by the door.
    public func takeOutgoing() -> [Outgoing] { state.withLock { s in defer { s.outbox.removeAll() }; return s.outbox } }

    /// Runs the endpoint's timer `token` after `milliseconds`, unless the socket has closed by then.
    public func after(_ milliseconds: Double, token: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, milliseconds) / 1000) { [self] in
            if isOpen { endpoint.fired(self, timer: token) }
        }
    }

    public var isOpen: Bool { state.withLock { !$0.closed && !$0.closing } }

    /// Marks the socket closed (the door, once): no more sends, timers or callbacks but `closed`.
    public func markClosed(_ reason: String) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            s.closed = true
            s.transcript.ended = reason
            s.transcript.durationMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            return true
        }
    }

    /// Notes a message in the transcript: `in` from the client, `out` to it.
    public func record(_ direction: String, _ message: WebSocketMessage) {
        let at = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        state.withLock { s in
            s.transcript.chunks += 1
            let text: String
            switch message {
            case .text(let t): s.transcript.bytes += t.utf8.count; text = String(t.prefix(512))
            case .binary(let b): s.transcript.bytes += b.count; text = "(\(b.count) bytes)"
            }
            if s.transcript.sent.count < StreamTranscript.keptChunks {
                s.transcript.sent.append(.init(atMilliseconds: at, text: text, direction: direction))
            }
        }
    }

    public var transcript: StreamTranscript { state.withLock { $0.transcript } }

    /// Notes a handler's error in the transcript.
    public func note(error: String) { state.withLock { $0.transcript.error = error } }

    /// The socket as the admin API lists it.
    public var json: JSONValue {
        let t = transcript
        return .object(["id": .integer(Int64(id)), "url": .string(request.url), "path": .string(request.path),
                        "opened_at": .double(openedAt), "messages": .integer(Int64(t.chunks)),
                        "open": .bool(isOpen)])
    }
}

/// The open WebSockets of an engine, for `mock.websockets(pattern)` and the admin API.
public final class WebSocketRegistry: Sendable {
    private let sockets = Locked<[Int: WebSocketSession]>([:])
    public init() {}
    public func add(_ socket: WebSocketSession) { sockets.withLock { $0[socket.id] = socket } }
    public func remove(_ socket: WebSocketSession) { _ = sockets.withLock { $0.removeValue(forKey: socket.id) } }
    public func socket(_ id: Int) -> WebSocketSession? { sockets.withLock { $0[id] } }
    /// Open sockets, oldest first; with a pattern, those whose path it matches.
    public func list(matching pattern: RoutePattern? = nil) -> [WebSocketSession] {
        sockets.withLock { Array($0.values) }.filter { pattern?.matchPath($0.request.pathSegments) != nil || pattern == nil }
            .sorted { $0.id < $1.id }
    }
}

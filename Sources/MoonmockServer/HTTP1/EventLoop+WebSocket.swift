import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// An upgraded connection: its reader, its session, and where the close handshake stands.
final class WebSocketConnection {
    var reader: WebSocketReader
    let session: WebSocketSession
    /// Our close frame has gone out (the client's is awaited, for a while).
    var closeSent = false

    /// permessage-deflate, when agreed in the handshake.
    let deflate: PerMessageDeflate?

    init(session: WebSocketSession, maxMessage: Int, deflate: PerMessageDeflate? = nil) {
        self.session = session
        self.deflate = deflate
        reader = WebSocketReader(maxMessage: maxMessage, deflate: deflate)
    }

    /// A data frame for `payload`, compressed when permessage-deflate was agreed.
    func frame(_ opcode: WebSocketFrames.Opcode, _ payload: [UInt8]) -> [UInt8] {
        if let deflate, let compressed = deflate.deflate(payload) { return WebSocketFrames.frame(opcode, compressed, compressed: true) }
        return WebSocketFrames.frame(opcode, payload)
    }
}

/// WebSockets (`mock.websocket`, RFC 6455): the upgrade, frames read and written on the loop,
/// ping answered with pong, the close handshake both ways; messages to and from the script's
/// callbacks, and from other threads (timers, broadcasts, the admin API) through the loop's
/// command queue. `wss` is the same over TLS.
extension EventLoop {
    /// Upgrades a valid WebSocket handshake (RFC 6455 §4.2.1) to a socket; anything else gets
    /// the route's `426 Upgrade Required` (or a `400` for a broken handshake).
    func upgrade(_ c: Connection, _ request: MockRequest, _ route: WebSocketRoute, _ response: MockResponse, http10: Bool) {
        let headers = request.headers
        func has(_ name: String, _ token: String) -> Bool {
            headers.values(name).contains { $0.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == token } }
        }
        guard !http10, request.method == "GET", has("upgrade", "websocket"), has("connection", "upgrade") else {
            return send(c, response, head: request.method == "HEAD", http10: http10)
        }
        guard headers["sec-websocket-version"] == "13" else {
            var refusal = response
            refusal.headers["Sec-WebSocket-Version"] = "13"
            return send(c, refusal, head: false, http10: http10)
        }
        guard let key = headers["sec-websocket-key"], WebSocketFrames.isValidKey(key) else {
            c.keepAlive = false
            return send(c, .json(.object(["error": .string("a WebSocket handshake needs a Sec-WebSocket-Key of 16 bytes in base64")]), status: 400),
                        head: false, http10: http10)
        }
        var head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(WebSocketFrames.accept(key: key))\r\n"
        if let offered = headers["sec-websocket-protocol"]?.split(separator: ",").first {
            head += "Sec-WebSocket-Protocol: \(offered.trimmingCharacters(in: .whitespaces))\r\n"
        }
        // permessage-deflate (RFC 7692), unless --ws-deflate off: the first offer we can honour.
        let agreed = webSocketDeflate ? PerMessageDeflate.Parameters.negotiate(headers.values("sec-websocket-extensions")) : nil
        if let agreed { head += "Sec-WebSocket-Extensions: \(agreed.response)\r\n" }
        write(c, Array((head + "\r\n").utf8))
        if c.closed { return }
        Self.setTCPOption(c.fd, TCP_NODELAY, 1)
        c.keepAlive = false
        // The upgrade ends the request: a server draining its requests does not wait for sockets.
        if c.active {
            c.active = false
            inFlight.subtract(1, ordering: .relaxed)
        }
        let engine = serverRef._withUnsafeGuaranteedRef { $0.engine }
        var request = request
        request.id = route.journalID
        let session = WebSocketSession(id: route.journalID, request: request, endpoint: route.endpoint, openedAt: Date().timeIntervalSince1970)
        let fd = c.fd, serial = c.serial
        session.onOutgoing { [weak self] in
            self?.commands.withLock { state in
                guard !state.closed else { return }
                state.websockets.append((fd, serial, 0))
                self?.poke(state)
            }
        }
        let ws = WebSocketConnection(session: session, maxMessage: maxBodyBytes, deflate: agreed.map(PerMessageDeflate.init))
        c.state = .websocket(ws)
        engine.journal.recordUpstreamStatus(101, for: route.journalID)
        engine.websockets.add(session)
        route.endpoint.opened(session, request)
        flushSocket(c, ws)
    }

    /// Reads the whole frames in `bytes`; returns how many bytes they took.
    func readFrames(_ c: Connection, _ ws: WebSocketConnection, _ bytes: UnsafeRawBufferPointer) -> Int {
        let (events, used) = ws.reader.feed(bytes)
        for event in events {
            if c.closed { break }
            switch event {
            case .message(let bytes):
                let message: WebSocketMessage
                switch bytes {
                case .text(let text): message = .text(text)
                case .binary(let data): message = .binary(data)
                }
                ws.session.record("in", message)
                if ws.session.isOpen { ws.session.endpoint.received(ws.session, message) }
            case .ping(let payload):
                write(c, WebSocketFrames.frame(.pong, payload))
            case .pong:
                break
            case .close(let code, let reason):
                // The client's close: the replies to what came before it go first, then our close
                // (unless it answers ours), then the end.
                flushSocket(c, ws)
                if !ws.closeSent { write(c, WebSocketFrames.close(code: code == 1005 ? 1000 : code, reason: "")) }
                ws.closeSent = true
                socketEnded(ws, code: code, reason: reason, how: ws.session.isOpen ? "client closed" : "closed")
                closeWhenSent(c)
                return bytes.count
            case .fail(let code, let reason):
                flushSocket(c, ws)   // replies to the messages before the error, then the close
                if !ws.closeSent { write(c, WebSocketFrames.close(code: code, reason: reason)) }
                ws.closeSent = true
                socketEnded(ws, code: code, reason: reason, how: "protocol error: \(reason)")
                closeWhenSent(c)
                return bytes.count
            }
        }
        if !c.closed { flushSocket(c, ws) }
        return used
    }

    /// Writes what the session's outbox holds: messages, then a close (after which the
    /// client's close is awaited for 5 s).
    func flushSocket(_ c: Connection, _ ws: WebSocketConnection) {
        for item in ws.session.takeOutgoing() {
            if c.closed || ws.closeSent { break }
            switch item {
            case .message(let message):
                switch message {
                case .text(let text): write(c, ws.frame(.text, Array(text.utf8)))
                case .binary(let data): write(c, ws.frame(.binary, data))
                }
                ws.session.record("out", message)
            case .close(let code, let reason):
                write(c, WebSocketFrames.close(code: code, reason: reason))
                ws.closeSent = true
                schedule(c, after: 5)
            }
        }
        recordSocket(ws.session)
    }

    /// Sends our close (a stopping server's `1001`) and ends the socket once it has gone out.
    func closeSocket(_ c: Connection, _ ws: WebSocketConnection, code: Int, reason: String) {
        if !ws.closeSent { write(c, WebSocketFrames.close(code: code, reason: reason)) }
        ws.closeSent = true
        socketEnded(ws, code: code, reason: reason, how: reason)
        closeWhenSent(c)
    }

    /// The socket is over: the script's `on_close` (once), the registry and the journal.
    func socketEnded(_ ws: WebSocketConnection, code: Int, reason: String, how: String) {
        guard ws.session.markClosed(how) else { return }
        let engine = serverRef._withUnsafeGuaranteedRef { $0.engine }
        engine.websockets.remove(ws.session)
        ws.session.endpoint.closed(ws.session, code: code, reason: reason)
        recordSocket(ws.session)
    }

    func recordSocket(_ session: WebSocketSession) {
        serverRef._withUnsafeGuaranteedRef { $0.engine.journal.recordStream(session.transcript, for: session.id) }
    }

    private func closeWhenSent(_ c: Connection) {
        c.keepAlive = false
        if c.pending.isEmpty { closeConnection(c) } else { c.closeWhenFlushed = true }
    }
}

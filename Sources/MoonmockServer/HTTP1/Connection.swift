import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// One client connection of an ``EventLoop``.
final class Connection {
    enum State {
        /// Waiting for (the rest of) a request head.
        case head
        /// Reading a `Content-Length` body.
        case body(RequestHead, [UInt8], Int)
        /// Reading a chunked body.
        case chunked(RequestHead, ChunkedBody, [UInt8])
        /// The answer waits for its delay: (response, HEAD request, HTTP/1.0).
        case delayed(MockResponse, Bool, Bool)
        /// The `timeout` fault: never answered.
        case held
        /// `mock.proxy`: the upstream's answer is on its way (delivered by ``EventLoop/completeProxy(_:)``).
        case proxying
        /// A body sent slice by slice: (body, next offset, bytes per second).
        case dribbling([UInt8], Int, Int)
        /// A streamed body (SSE, `mock.stream`, `mock.llm`), sent from the loop's timers:
        /// (cursor, chunked framing, HEAD request).
        case streaming(StreamCursor, Bool, Bool)
        /// An upgraded WebSocket: frames both ways until the close handshake.
        case websocket(WebSocketConnection)
        /// HTTP/2 (h2 by ALPN, h2c by prior knowledge or `Upgrade`): frames both ways, each
        /// stream a request with an answer of its own (``EventLoop/readHTTP2(_:_:_:)``).
        case http2(HTTP2Session)
    }

    let fd: Int32
    let serial: UInt64
    var state = State.head
    /// Received bytes not yet consumed.
    var input: [UInt8] = []
    /// Response bytes the socket has not taken yet.
    var pending: [UInt8] = []
    /// How much of `pending` the loop's unsent-output count holds (``EventLoop/account(_:)``).
    var counted = 0
    /// `pending` holds answers for the end of the loop's turn (``EventLoop/flushCorked()``).
    var corked = false
    var keepAlive = true
    var closeWhenFlushed = false
    /// A request is in progress (counted in the server's requests in flight).
    var active = false
    /// A handler this connection's request waits for (cancelled if the client leaves).
    var waiting: WaitHandle?
    /// Counts the waits begun on this connection (a wait's handle is kept only if it is the last).
    var waitSerial: UInt64 = 0
    var closed = false
    var readPaused = false
    /// The client has shut down its sending side.
    var peerClosed = false
    /// Requests started on this connection.
    var requests = 0
    var interest: PollMask = [.input, .peerHangup, .edge]
    /// Connections are watched edge-triggered: the loop reads each until a read comes back
    /// short (the socket is empty then; anything arriving later is a new edge) and writes until
    /// the socket is full, so it needs no reminder, and epoll then skips polling every socket
    /// it reported again on the next wait, as it does for level-triggered ones to see whether
    /// they are still ready. Changing the interest (`EPOLL_CTL_MOD`) polls once more, so a
    /// connection that stopped reading and starts again hears of what is already there.
    static let edgeTriggered = PollMask.edge
    /// Whether `interest` is in the loop's poller yet (see ``EventLoop/accept(events:)``).
    var registered = false
    var lastActivity: UInt64
    /// When the head being read began to arrive (0 while none is: the header timeout's start).
    var headStarted: UInt64 = 0
    /// When the client last took bytes of an answer, or the answer began to wait (the send timeout's start).
    var lastSent: UInt64 = 0
    /// The socket's unsent bytes when the send timeout last looked (see ``EventLoop/sweep(_:)``).
    var unsentSeen: Int32 = -1
    /// HTTPS: the connection's TLS session (reads and writes go through it).
    var tls: TLSSession?
    /// The session's last read needed to write (the handshake) and the socket was full.
    var tlsReadWantsWrite = false
    /// The session failed (or the connection is reset): closed without a close_notify.
    var tlsFailed = false
    /// The first byte has been checked for a TLS handshake (``EventLoop/refusePlainHTTP(_:)``).
    var tlsChecked = false
    /// The handshake has finished (the session has read application data).
    var tlsEstablished = false
    /// Closing gracefully: the write side is shut (after a GOAWAY), what the client still sends
    /// is read and dropped until it closes too or two seconds pass, so that closing with its
    /// bytes unread (a TCP RST) does not destroy the GOAWAY before the client reads it.
    var lingering = false
    var lingerSince: UInt64 = 0
    var lingerWhenFlushed = false
    /// The protocol ALPN settled on has been looked at (h2 makes the connection HTTP/2).
    var alpnChecked = false

    init(fd: Int32, serial: UInt64, now: UInt64) {
        self.fd = fd
        self.serial = serial
        self.lastActivity = now
    }

    /// Whether input is being turned into requests (not waiting on an answer).
    var isReading: Bool {
        switch state {
        case .head, .body, .chunked, .websocket, .http2: return true
        case .delayed, .held, .proxying, .dribbling, .streaming: return false
        }
    }

    /// Whether part of a request has arrived and the rest has not: a head without its end, or a
    /// head without all of its body.
    var awaitsRestOfRequest: Bool {
        switch state {
        case .head: return !input.isEmpty
        case .body, .chunked: return true
        case .delayed, .held, .proxying, .dribbling, .streaming, .websocket, .http2: return false
        }
    }
}

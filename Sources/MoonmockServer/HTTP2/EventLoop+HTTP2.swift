import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// The client preface of HTTP/2 with prior knowledge (RFC 9113 §3.4).
enum HTTP2Preface {
    static let bytes = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    enum Match { case matched, incomplete, other }

    /// Whether `bytes` start with the preface (``Match/incomplete``: a prefix of it so far).
    static func match(_ bytes: UnsafeRawBufferPointer) -> Match {
        let n = min(bytes.count, Self.bytes.count)
        for i in 0..<n where bytes[i] != Self.bytes[i] { return .other }
        return n == Self.bytes.count ? .matched : .incomplete
    }
}

/// HTTP/2 on the event loops: a second framing over the same connections. nghttp2 turns the
/// bytes a connection reads into streams; each whole request goes through the server exactly as
/// an HTTP/1.1 one does (the same ``MockRequest``, journal, admin API, delays and faults), and
/// its answer goes back as HEADERS and DATA frames (EventLoop+HTTP2Answering).
extension EventLoop {
    /// A session for `c`, its SETTINGS queued. `upgrade`: the `HTTP2-Settings` of an
    /// `Upgrade: h2c` request and whether it was a HEAD.
    func startHTTP2(_ c: Connection, upgrade: (settings: [UInt8], head: Bool)?) -> HTTP2Session? {
        var limits = HTTP2Session.Limits()
        limits.maxBodyBytes = maxBodyBytes
        guard let h2 = HTTP2Session(limits: limits, upgrade: upgrade) else {
            closeConnection(c)
            return nil
        }
        Self.setTCPOption(c.fd, TCP_NODELAY, 1)   // frames of several streams interleave: none waits for an ACK
        c.keepAlive = true
        return h2
    }

    /// `Upgrade: h2c` with `HTTP2-Settings` on a plain connection (RFC 7540 §3.2): `101`, then the
    /// request is answered as stream 1 of the new session. `false` when the request does not
    /// ask for it (or asks wrongly): it is answered as HTTP/1.1.
    func upgradeToHTTP2(_ c: Connection, _ request: MockRequest, head: Bool) -> Bool {
        guard let upgrade = request.headers["upgrade"], upgrade.lowercased().split(separator: ",")
                .contains(where: { $0.trimmingCharacters(in: .whitespaces) == "h2c" }),
              let encoded = request.headers["http2-settings"], let settings = Self.base64URLDecoded(encoded),
              let h2 = startHTTP2(c, upgrade: (settings, head)) else { return false }
        output.removeAll(keepingCapacity: true)
        ResponseHead.append("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", into: &output)
        write(c, output)
        if c.closed { return true }
        c.state = .http2(h2)
        guard let stream = h2.streams[1] else { return true }
        stream.complete = true
        stream.isHead = head
        dispatchStream(c, h2, stream, request)
        flushHTTP2(c, h2)
        return true
    }

    /// Feeds what the client sent to the session, answers the requests that are whole, and
    /// writes what the session has to say. Returns the bytes used (all of them).
    func readHTTP2(_ c: Connection, _ h2: HTTP2Session, _ bytes: UnsafeRawBufferPointer) -> Int {
        if c.lingering || h2.dead { return bytes.count }
        let fine = h2.receive(bytes)
        settleClosedStreams(c, h2)
        if !h2.opened.isEmpty { startLiveCalls(c, h2) }
        for stream in h2.live.values where !stream.body.isEmpty { feedLive(c, h2, stream) }
        if !h2.ready.isEmpty {
            let ready = h2.ready
            h2.ready.removeAll(keepingCapacity: true)
            for stream in ready where !stream.isClosed && !c.closed {
                if stream.dispatched {   // a live call: the client has finished sending
                    endLiveInput(c, h2, stream)
                    continue
                }
                if stopping {
                    h2.reset(stream, code: 7)   // REFUSED_STREAM: the server is stopping; safe to retry elsewhere
                    continue
                }
                stream.isHead = stream.method == "HEAD"
                if let refusal = stream.refusal {
                    let message = refusal == 431 ? "header list larger than \(h2.limits.maxHeaderListBytes) bytes"
                                                 : "request body larger than \(maxBodyBytes) bytes"
                    beginStream(stream)
                    deliverStream(c, h2, stream, .json(.object(["error": .string(message)]), status: refusal))
                    continue
                }
                dispatchStream(c, h2, stream, stream.request(defaultScheme: scheme, defaultAuthority: defaultAuthority))
            }
        }
        if !fine && h2.failure != nil { c.keepAlive = false }
        flushHTTP2(c, h2)
        return bytes.count
    }

    /// Counts a stream among the requests in flight.
    func beginStream(_ stream: HTTP2Stream) {
        stream.active = true
        inFlight.add(1, ordering: .relaxed)
    }

    /// Writes what the session has queued (answers are corked until the end of the loop's turn,
    /// as HTTP/1.1 keep-alive answers are); closes the connection when both sides are done.
    func flushHTTP2(_ c: Connection, _ h2: HTTP2Session) {
        if c.closed { return }
        if c.pending.count < Self.outputLimit && h2.wantsWrite {
            h2.drain(into: &c.pending, limit: Self.outputLimit)
            account(c)
            settleClosedStreams(c, h2)
            if !c.pending.isEmpty && !c.corked {
                c.corked = true
                corked.append(c)
            }
        }
        if !c.lingering && (h2.isFinished || (!c.keepAlive && h2.streams.isEmpty && !h2.wantsWrite)) {
            if c.pending.isEmpty {
                lingerClose(c)
            } else {
                c.closeWhenFlushed = true
                c.lingerWhenFlushed = true
            }
        }
    }

    /// Shuts the write side once the last frame (GOAWAY) has left, and reads what the client
    /// still sends until it closes (or the sweep ends it after two seconds).
    func lingerClose(_ c: Connection) {
        if c.lingering || c.closed { return }
        if c.tls != nil || c.peerClosed { return closeConnection(c) }
        c.lingering = true
        c.closeWhenFlushed = false
        c.lingerSince = turnStarted
        shutdown(c.fd, Int32(SHUT_WR))
        updateInterest(c)
    }

    /// Streams nghttp2 has closed: answered, or reset by the client before their answer.
    func settleClosedStreams(_ c: Connection, _ h2: HTTP2Session) {
        if h2.released > 0 {
            unsentOutput -= h2.released
            h2.released = 0
        }
        guard !h2.closed.isEmpty else { return }
        let closed = h2.closed
        h2.closed.removeAll(keepingCapacity: true)
        for stream in closed {
            h2.live[stream.id] = nil
            endStreamWork(stream, reason: stream.started ? "completed" : "client left")
        }
    }

    /// A stream is gone: its wait is cancelled, its streamed answer journaled, its request no
    /// longer in flight.
    func endStreamWork(_ stream: HTTP2Stream, reason: String) {
        stream.isClosed = true
        if let waiting = stream.waiting {
            stream.waiting = nil
            waiting.cancel()
        }
        if case .streaming(let cursor) = stream.phase { endStream(cursor, stream.finished && stream.out.isEmpty ? "completed" : "client left") }
        if let session = stream.liveSession { closeLive(session, how: reason) }
        stream.phase = .sending
        if stream.active {
            stream.active = false
            inFlight.subtract(1, ordering: .relaxed)
        }
    }

    /// The connection closes: every stream it still has ends with it.
    func endHTTP2(_ c: Connection, _ h2: HTTP2Session) {
        settleClosedStreams(c, h2)
        h2.live.removeAll()
        for stream in h2.streams.values {
            unsentOutput -= stream.counted
            stream.counted = 0
            endStreamWork(stream, reason: "client left")
        }
        h2.streams.removeAll()
    }

    /// The server stops: GOAWAY, the streams already begun are answered, then the connection closes.
    func stopHTTP2(_ c: Connection, _ h2: HTTP2Session) {
        c.keepAlive = false
        for stream in h2.streams.values {
            if case .held = stream.phase { h2.reset(stream, code: 0) }
            if case .streaming = stream.phase { finishStreamHTTP2(c, h2, stream, "server stopped") }
        }
        h2.goAway(code: 0, graceful: true, "server stopping")
        flushHTTP2(c, h2)
    }

    /// A stream's timer: its delay is over, or its streamed or dribbled body has more to send.
    func timerFired(_ c: Connection, _ h2: HTTP2Session, stream id: Int32) {
        guard let stream = h2.streams[id], !stream.isClosed else { return }
        switch stream.phase {
        case .delayed(let response):
            stream.phase = .sending
            deliverStream(c, h2, stream, response)
        case .dribbling:
            dribbleStream(c, h2, stream)
        case .streaming:
            streamNextHTTP2(c, h2, stream)
        default:
            return
        }
        flushHTTP2(c, h2)
    }

    /// The sweep's look at an HTTP/2 connection: idle past the idle timeout with no stream open
    /// (GOAWAY, then the close), or an answer the client's flow control has held for longer than
    /// the send timeout (the window never reopened: the connection is dropped).
    func sweepHTTP2(_ c: Connection, _ h2: HTTP2Session, now: UInt64, idle: UInt64) {
        if c.lingering {
            if now &- c.lingerSince > 2_000_000_000 { closeConnection(c) }
            return
        }
        if h2.streams.isEmpty {
            if now &- c.lastActivity > idle {
                c.keepAlive = false
                h2.goAway(code: 0, graceful: true, "idle")
                flushHTTP2(c, h2)
            }
            return
        }
        for stream in h2.streams.values where stream.started && (!stream.out.isEmpty || !stream.finished) && !stream.deferred {
            // Data waits and nghttp2 is not waiting for more: the peer's window is shut.
            if stream.stalledSince == 0 || stream.bodySent != stream.stalledAt {
                stream.stalledSince = now
                stream.stalledAt = stream.bodySent
            } else if now &- stream.stalledSince > sendTimeout {
                return closeConnection(c)
            }
        }
    }

    /// Base64url without padding (the `HTTP2-Settings` field), or `nil`.
    static func base64URLDecoded(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}

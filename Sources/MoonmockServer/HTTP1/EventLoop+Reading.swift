import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// Reading: bytes off the socket (or its TLS session), parsed into requests in place.
extension EventLoop {
    // MARK: reading

    func readable(_ c: Connection, hangup: Bool = false) {
        if c.tls != nil && !c.tlsChecked && !refusePlainHTTP(c) { return }
        while !c.closed {
            let n: Int
            if let session = c.tls {
                n = session.read(scratch.baseAddress!, scratch.count)
                if n <= 0 {
                    switch TLSSession.Outcome(n) {
                    case .wantRead:
                        if c.tlsReadWantsWrite {
                            c.tlsReadWantsWrite = false
                            updateInterest(c)
                        }
                        return
                    case .wantWrite:
                        c.tlsReadWantsWrite = true
                        updateInterest(c)
                        return
                    case .closed:
                        return peerFinishedSending(c)
                    case .failed:
                        c.tlsFailed = true
                        return closeConnection(c)
                    }
                }
            } else {
                n = SocketCalls.receive(c.fd, scratch.baseAddress, scratch.count)
                if n == 0 { return peerFinishedSending(c) }
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(c) }
                    return
                }
            }
            c.lastActivity = turnStarted
            if let session = c.tls {
                c.tlsEstablished = true
                // ALPN chose h2: the connection speaks HTTP/2 from its first byte.
                if !c.alpnChecked {
                    c.alpnChecked = true
                    if http2 && session.alpn == "h2", let h2 = startHTTP2(c, upgrade: nil) { c.state = .http2(h2) }
                }
            }
            let chunk = UnsafeRawBufferPointer(start: scratch.baseAddress, count: n)
            if c.input.isEmpty {
                // The common case: the whole request in one read, parsed where it landed.
                let used = process(c, chunk)
                if !c.closed && used < n { c.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[used...])) }
            } else {
                c.input.append(contentsOf: chunk)
                resume(c)
            }
            if !c.closed && c.awaitsRestOfRequest { acknowledgeNow(c) }
            if !c.closed && c.input.count > Self.headLimit * 4 && !c.isReading {
                // A client sending ahead while its response waits: stop reading until it is due.
                c.readPaused = true
                updateInterest(c)
            }
            // A short read empties a socket; a TLS read returns one record, so it reads on until
            // OpenSSL finds the socket empty (edge-triggered: nothing would report the rest).
            if n < scratch.count && c.tls == nil && !hangup { return }
        }
    }

    /// The first byte of a TLS connection is a handshake record (22). A client that speaks plain
    /// HTTP to the HTTPS port gets a plain `400` that says so, instead of a failed handshake it
    /// would report as a garbled or empty reply. `false` when the connection is not ready (or closed).
    func refusePlainHTTP(_ c: Connection) -> Bool {
        var first: UInt8 = 0
        let n = SocketCalls.receive(c.fd, &first, 1, peek: true)
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return false }
        c.tlsChecked = true
        if n == 1 && first == 22 { return true }
        if n == 1 {
            let body = #"{"error":"this port speaks HTTPS: the request was sent as plain HTTP"}"#
            let text = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            _ = Array(text.utf8).withUnsafeBytes { SocketCalls.send(c.fd, $0.baseAddress, $0.count) }
        }
        c.tlsFailed = true
        closeConnection(c)
        return false
    }

    /// Sets an integer `IPPROTO_TCP` option (a failure only loses the optimisation it is for).
    static func setTCPOption(_ fd: Int32, _ option: Int32, _ value: Int32) {
        var value = value
        setsockopt(fd, Int32(IPPROTO_TCP), option, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Acknowledges what `c` has sent so far, now. Connections start in delayed-ACK mode (see
    /// `init`), and a client with Nagle's algorithm on holds back the rest of a small request until
    /// its first part is acknowledged: without this, each such request would wait for the
    /// delayed-ACK timer (about 40 ms). Only requests that arrive in parts pay for the call.
    func acknowledgeNow(_ c: Connection) {
        SocketCalls.acknowledgeNow(c.fd)
    }

    /// The client shut down its side (`shutdown(SHUT_WR)` or a close): an answer it may still
    /// be waiting for — a delayed or dribbled response, or one the socket has not taken yet — is
    /// sent before the connection closes; a held request (the `timeout` fault) or an idle
    /// connection closes now.
    func peerFinishedSending(_ c: Connection) {
        switch c.state {
        case .delayed, .dribbling:
            break
        case .head where !c.pending.isEmpty:
            c.closeWhenFlushed = true
        default:
            return closeConnection(c)
        }
        c.peerClosed = true
        c.keepAlive = false
        updateInterest(c)
    }

    /// Processes what the connection has buffered.
    func resume(_ c: Connection) {
        guard !c.input.isEmpty, c.isReading else { return }
        let used = c.input.withUnsafeBytes { process(c, $0) }
        if !c.closed { c.input.removeFirst(min(used, c.input.count)) }
    }

    /// Consumes requests from `bytes` while the connection is reading; returns the bytes used.
    func process(_ c: Connection, _ bytes: UnsafeRawBufferPointer) -> Int {
        var used = 0
        while !c.closed {
            switch c.state {
            case .head:
                guard used < bytes.count else { return used }
                // After a request that ends the connection (`Connection: close`, HTTP/1.0, a
                // refusal), nothing more is read as a request: the rest is dropped.
                if !c.keepAlive { return bytes.count }
                // HTTP/2 with prior knowledge: the client's preface instead of a request line.
                if c.requests == 0 && http2 && bytes[used] == UInt8(ascii: "P") {
                    switch HTTP2Preface.match(UnsafeRawBufferPointer(rebasing: bytes[used...])) {
                    case .incomplete: return used
                    case .matched:
                        guard let h2 = startHTTP2(c, upgrade: nil) else { return bytes.count }
                        c.state = .http2(h2)
                        continue
                    case .other: break
                    }
                }
                if c.pending.count > Self.outputLimit {
                    // A client sending requests without reading the answers: wait for it to read.
                    c.readPaused = true
                    updateInterest(c)
                    return used
                }
                switch RequestHead.parse(UnsafeRawBufferPointer(rebasing: bytes[used...]), limit: Self.headLimit, recent: &recent) {
                case .incomplete:
                    // The header timeout counts from a head's first byte.
                    if c.headStarted == 0 { c.headStarted = turnStarted }
                    return used
                case .invalid(let status, let message):
                    inFlight.add(1, ordering: .relaxed)
                    c.active = true
                    c.keepAlive = false
                    send(c, .json(.object(["error": .string(message)]), status: status), head: false, http10: false)
                    return bytes.count
                case .complete(var head, let length):
                    c.headStarted = 0
                    let headBytes = UnsafeRawBufferPointer(rebasing: bytes[used...])
                    used += length
                    inFlight.add(1, ordering: .relaxed)
                    c.requests += 1
                    if c.requests == 2 {
                        // A second request: responses may now follow each other closely (keep-alive,
                        // pipelining), and Nagle's algorithm would hold one back for an ACK.
                        // One-request connections never pay for the call (nginx does the same).
                        Self.setTCPOption(c.fd, TCP_NODELAY, 1)
                    }
                    c.active = true
                    c.keepAlive = head.keepAlive && !stopping
                    let limit = maxBodyBytes
                    if head.chunked {
                        head.keepLines(from: headBytes)
                        c.state = .chunked(head, ChunkedBody(limit: limit), [])
                        if head.expectContinue && used == bytes.count { sendContinue(c) }
                    } else if let length = head.contentLength, length > 0 {
                        if length > limit {
                            c.keepAlive = false
                            send(c, serverRef._withUnsafeGuaranteedRef { $0.tooLarge() }, head: false, http10: head.minorVersion == 0)
                            return bytes.count
                        }
                        if bytes.count - used >= length {
                            let body = UnsafeRawBufferPointer(rebasing: bytes[used..<(used + length)])
                            used += length
                            head.withLines(in: headBytes) { dispatch(c, head, lines: $0, body: body) }
                        } else {
                            head.keepLines(from: headBytes)
                            var body: [UInt8] = []
                            body.reserveCapacity(min(length, 1 << 20))
                            c.state = .body(head, body, length)
                            if head.expectContinue && used == bytes.count { sendContinue(c) }
                        }
                    } else {
                        head.withLines(in: headBytes) { dispatch(c, head, lines: $0, body: UnsafeRawBufferPointer(start: nil, count: 0)) }
                    }
                }
            case .body(let head, var body, let length):
                let take = min(length - body.count, bytes.count - used)
                c.state = .head   // not holding a second reference to the body while appending
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[used..<(used + take)]))
                used += take
                if body.count < length {
                    c.state = .body(head, body, length)
                    return used
                }
                dispatch(c, head, body)
            case .chunked(let head, var decoder, var body):
                c.state = .head
                switch decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[used...]), into: &body) {
                case .needMore:
                    c.state = .chunked(head, decoder, body)
                    return bytes.count
                case .done(let consumed):
                    used += consumed
                    dispatch(c, head, body)
                case .invalid(let message):
                    c.keepAlive = false
                    send(c, .json(.object(["error": .string(message)]), status: 400), head: false, http10: head.minorVersion == 0)
                    return bytes.count
                case .tooLarge:
                    c.keepAlive = false
                    send(c, serverRef._withUnsafeGuaranteedRef { $0.tooLarge() }, head: false, http10: head.minorVersion == 0)
                    return bytes.count
                }
            case .websocket(let ws):
                return used + readFrames(c, ws, UnsafeRawBufferPointer(rebasing: bytes[used...]))
            case .http2(let h2):
                return used + readHTTP2(c, h2, UnsafeRawBufferPointer(rebasing: bytes[used...]))
            case .delayed, .held, .proxying, .dribbling, .streaming:
                return used
            }
        }
        return bytes.count
    }

    /// A request whose body was read in parts: its head kept its header lines.
    func dispatch(_ c: Connection, _ head: RequestHead, _ body: [UInt8]) {
        body.withUnsafeBytes { body in
            head.withLines(in: UnsafeRawBufferPointer(start: nil, count: 0)) { dispatch(c, head, lines: $0, body: body) }
        }
    }

    /// Runs a complete request through the server and acts on the answer. The header `lines`
    /// and `body` are copied into the storage of the loop's last request when nothing holds
    /// that any more (``MockRequest/recycling(_:method:scheme:host:port:target:headerLines:body:)``).
    func dispatch(_ c: Connection, _ head: RequestHead, lines: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        c.state = .head
        let isHead = head.method == "HEAD"
        let http10 = head.minorVersion == 0
        let request: MockRequest
        if head.target == "*" {
            // `OPTIONS *` (the parser lets no other method have it) asks about the server itself.
            var headers = HTTPHeaders()
            headers.add("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
            return deliver(c, MockResponse(status: 200, headers: headers), head: false, http10: http10)
        }
        if head.target.utf8.first != UInt8(ascii: "/") && head.target.contains("://") {
            // Absolute form (`GET http://host/path`, as sent to a proxy): the URL names the host.
            request = MockRequest(method: head.method, url: head.target, headers: HTTPHeaders(validatedLines: Array(lines)), body: Array(body))
        } else {
            // Split once per distinct authority: the parser hands back the very string it made
            // for the last request when the bytes are the same, so the compare is of its bits.
            let authority = head.host ?? defaultAuthority
            if authority != lastAuthority.value {
                lastAuthority = (authority, MockRequest.hostAndPort(of: authority))
            }
            request = MockRequest.recycling(&spareRequest, method: head.method, scheme: scheme, host: lastAuthority.split.host,
                                            port: lastAuthority.split.port, target: head.target, headerLines: lines, body: body,
                                            namesRange: head.namesRange)
        }
        if head.http2Settings && http2 && c.tls == nil && upgradeToHTTP2(c, request, head: isHead) {
            spareRequest = nil
            return
        }
        let offloaded = serverRef._withUnsafeGuaranteedRef { server in
            if let workers = server.storeWorkers, server.mayWaitForStore(request, onLoopWithStore: storeChannel != nil) {
                offload(c, request, to: workers, server: server, head: isHead, http10: http10)
                return true
            }
            server.answer(request) { response, delay in act(c, request, response, delay, head: isHead, http10: http10) }
            // Webhooks and mock.after work of this request go once its answer is written.
            if server.engine.outbox.isHolding { answeredWithHeldWork.append(server.engine.lastRequestIDOnThisThread) }
            return false
        }
        // Kept for the next request, unless its body is large (or another thread has it).
        spareRequest = body.count <= Self.keptBodyBytes && !offloaded ? consume request : nil
    }

    /// Sends, forwards, upgrades or schedules an answer, as it says.
    func act(_ c: Connection, _ request: MockRequest, _ response: MockResponse, _ delay: Double, head isHead: Bool, http10: Bool) {
        if let proxy = response.proxy {
            forward(c, request, to: proxy, delay: delay, head: isHead, http10: http10)
        } else if case .suspended(let suspension)? = response.fault {
            wait(c, request, suspension, head: isHead, http10: http10)
        } else if case .websocket(let route)? = response.fault {
            upgrade(c, request, route, response, http10: http10)
        } else if delay > 0 {
            c.state = .delayed(response, isHead, http10)
            schedule(c, after: delay / 1000)
        } else {
            deliver(c, response, head: isHead, http10: http10)
        }
    }
}

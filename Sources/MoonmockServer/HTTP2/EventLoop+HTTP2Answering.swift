#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// HTTP/2 answers: a stream's request through the server, and its answer (or its fault) as
/// frames. Delays, streamed and dribbled bodies are the loop's timers, one per stream.
///
/// Faults over HTTP/2 (docs/http2.md):
/// - `connection_reset` (and a Swift `failure(error)`): RST_STREAM with INTERNAL_ERROR;
/// - `empty_response`: GOAWAY, and the connection closes without answering the stream;
/// - `malformed_chunk`: half the body, then RST_STREAM with PROTOCOL_ERROR;
/// - `timeout`: the stream is held, never answered; `dribble`: DATA slices from timers.
extension EventLoop {
    /// Answers a whole request of `h2`, as ``dispatch(_:_:lines:body:)`` does for HTTP/1.1.
    func dispatchStream(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream, _ request: MockRequest) {
        beginStream(stream)
        let isHead = stream.isHead
        serverRef._withUnsafeGuaranteedRef { server in
            if let workers = server.storeWorkers, server.mayWaitForStore(request, onLoopWithStore: storeChannel != nil) {
                stream.phase = .parked
                return offload(c, request, to: workers, server: server, head: isHead, http10: false, stream: stream.id)
            }
            server.answer(request) { response, delay in actStream(c, h2, stream, request, response, delay) }
            if server.engine.outbox.isHolding { answeredWithHeldWork.append(server.engine.lastRequestIDOnThisThread) }
        }
    }

    /// Sends, forwards or schedules a stream's answer, as ``act(_:_:_:_:head:http10:)`` does.
    func actStream(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream, _ request: MockRequest, _ response: MockResponse, _ delay: Double) {
        if stream.dispatched, case .websocket(let route)? = response.fault {
            return openLiveCall(c, h2, stream, route, request)
        }
        if let proxy = response.proxy {
            stream.phase = .parked
            forward(c, request, to: proxy, delay: delay, head: stream.isHead, http10: false, stream: stream.id)
        } else if case .suspended(let suspension)? = response.fault {
            stream.phase = .parked
            wait(c, request, suspension, head: stream.isHead, http10: false, stream: stream)
        } else if delay > 0 {
            stream.phase = .delayed(response)
            schedule(c, stream: stream.id, after: delay / 1000)
        } else {
            deliverStream(c, h2, stream, response)
        }
    }

    /// An answer made off the loop (a store worker, an upstream, a handler that waited) for one stream.
    func completeParkedStream(_ c: Connection, _ answer: ParkedAnswer) {
        guard case .http2(let h2) = c.state, let stream = h2.streams[answer.stream], !stream.isClosed, case .parked = stream.phase else { return }
        stream.waiting = nil
        actStream(c, h2, stream, answer.request, answer.response, answer.delay)
        if answer.request.id != 0, serverRef._withUnsafeGuaranteedRef({ $0.engine.outbox.isHolding }) { answeredWithHeldWork.append(answer.request.id) }
        flushHTTP2(c, h2)
        flushCorked()
    }

    /// Sends `response` on the stream, or acts out its fault.
    func deliverStream(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream, _ response: MockResponse) {
        stream.phase = .sending
        switch response.fault {
        case nil:
            if Self.isNativeGRPC(response) { return sendGRPC(h2, stream, response) }
            sendStream(h2, stream, response)
        case .connectionReset?, .error?:
            h2.reset(stream, code: 2)   // INTERNAL_ERROR
        case .emptyResponse?:
            c.keepAlive = false
            h2.goAway(code: 0, graceful: false, "empty_response")
        case .suspended(let s)?:
            sendStream(h2, stream, .json(.object(["error": .string("\(s) was not driven")]), status: 500))
        case .forward(let target)?:
            sendStream(h2, stream, .json(.object(["error": .string("mock.proxy: \(target.base) was not forwarded")]), status: 502))
        case .timeout?:
            if stopping { return h2.reset(stream, code: 0) }
            stream.phase = .held
        case .malformedChunk?:
            let body = response.body.isEmpty ? Array("{\"partial\":".utf8) : response.body
            stream.out = Array(body[0..<max(1, body.count / 2)])
            stream.finished = true
            stream.resetWhenSent = 1   // PROTOCOL_ERROR
            h2.respond(stream, status: response.status, fields: fields(of: response, length: nil), body: true)
        case .stream(let plan)?:
            startStreamHTTP2(c, h2, stream, plan, response)
        case .websocket?:
            // Its 426: WebSockets over HTTP/2 (RFC 8441's extended CONNECT) are not served.
            var refusal = response
            refusal.fault = nil
            sendStream(h2, stream, refusal)
        case .dribble(let bytesPerSecond)?:
            let body = stream.isHead ? [] : response.body
            h2.respond(stream, status: response.status, fields: fields(of: response, length: response.body.count), body: !body.isEmpty)
            if body.isEmpty { return }
            stream.phase = .dribbling(body, 0, max(1, bytesPerSecond))
            dribbleStream(c, h2, stream)
        }
    }

    /// A whole answer: HEADERS, then its body as DATA frames (none for HEAD, 204 and 304).
    func sendStream(_ h2: HTTP2Session, _ stream: HTTP2Stream, _ response: MockResponse) {
        let noContent = HTTPStatus.hasNoContent(response.status)
        let hasBody = !noContent && !stream.isHead && !response.body.isEmpty
        // As over HTTP/1.1: a large answer past this loop's share of --max-pending-output is a 503.
        if hasBody && response.body.count > Self.largeAnswer && unsentOutput + response.body.count > pendingOutputBudget {
            return sendStream(h2, stream, refusedForOutput(response.body.count))
        }
        if hasBody {
            stream.out = response.body
            stream.finished = true
            if response.body.count > Self.largeAnswer {
                stream.counted = response.body.count
                unsentOutput += stream.counted
            }
        }
        h2.respond(stream, status: response.status, fields: fields(of: response, length: noContent ? nil : response.body.count), body: hasBody)
    }

    /// The answer's fields as HTTP/2 carries them: without the connection-specific ones (RFC
    /// 9113 §8.2.2) or the script's framing; `content-length` when known; `date` unless given.
    func fields(of response: MockResponse, length: Int?) -> [(String, String)] {
        var out: [(String, String)] = []
        var sawDate = false
        response.headers.fields.withUnsafeBufferPointer { fields in
            out.reserveCapacity(fields.count + 2)
            for i in fields.indices {
                let name = fields[i].name
                switch name.utf8.count {
                case 10 where name.equalsIgnoringASCIICase("connection") || name.equalsIgnoringASCIICase("keep-alive"): continue
                case 16 where name.equalsIgnoringASCIICase("proxy-connection"): continue
                case 17 where name.equalsIgnoringASCIICase("transfer-encoding"): continue
                case 7 where name.equalsIgnoringASCIICase("upgrade"): continue
                case 14 where name.equalsIgnoringASCIICase("content-length"): continue
                case 4 where name.equalsIgnoringASCIICase("date"): sawDate = true
                default: break
                }
                out.append((name, fields[i].value))
            }
        }
        if let length { out.append(("content-length", String(length))) }
        if !sawDate { out.append(("date", dateValue())) }
        return out
    }

    /// An answer for gRPC itself (not gRPC-Web): the engine lays calls out as gRPC-Web does,
    /// the status in a last envelope flagged 0x80; over HTTP/2 that envelope's lines become the
    /// trailers (and with no message, the HEADERS frame carries them: "trailers-only").
    static func isNativeGRPC(_ response: MockResponse) -> Bool {
        guard let type = response.headers["content-type"], type.hasPrefix("application/grpc") else { return false }
        return !type.hasPrefix("application/grpc-web")
    }

    func sendGRPC(_ h2: HTTP2Session, _ stream: HTTP2Stream, _ response: MockResponse) {
        var body = response.body
        var trailers: [(String, String)] = [("grpc-status", "2"), ("grpc-message", "the mock's answer had no status")]
        if let last = Self.lastEnvelope(body), last.flags & RPCFraming.webTrailers != 0 {
            trailers = RPCFraming.trailerLines(last.payload)
            body.removeLast(5 + last.payload.count)
        }
        let fields = fields(of: response, length: nil)
        if body.isEmpty || stream.isHead {
            return h2.respond(stream, status: 200, fields: fields + trailers, body: false)
        }
        stream.out = body
        stream.finished = true
        stream.trailers = trailers
        h2.respond(stream, status: 200, fields: fields, body: true)
    }

    /// The last envelope of a body of envelopes (found by walking them from the start).
    static func lastEnvelope(_ body: [UInt8]) -> (flags: UInt8, payload: [UInt8])? {
        var i = 0, last: (UInt8, [UInt8])?
        while body.count - i >= 5 {
            let n = Int(body[i + 1]) << 24 | Int(body[i + 2]) << 16 | Int(body[i + 3]) << 8 | Int(body[i + 4])
            guard body.count - i - 5 >= n else { return nil }
            last = (body[i], Array(body[(i + 5)..<(i + 5 + n)]))
            i += 5 + n
        }
        return i == body.count ? last : nil
    }

    /// The `date` field's value for this second (the loop's cached `Date: …\r\n` line, made a
    /// string once per second).
    func dateValue() -> String {
        let line = clock.now()
        if line.count == h2DateLine.bytes.count, memcmp(line.baseAddress!, h2DateLine.bytes, line.count) == 0 { return h2DateLine.value }
        h2DateLine = (Array(line), String(decoding: line.dropFirst(6).dropLast(2), as: UTF8.self))
        return h2DateLine.value
    }

    /// `mock.sse`, `mock.stream`, `mock.llm`: the head at once, each event as DATA when due.
    func startStreamHTTP2(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream, _ plan: StreamPlan, _ response: MockResponse) {
        stream.grpc = Self.isNativeGRPC(response)
        let cursor = plan.start()
        if stream.isHead {
            cursor.end("completed")
            recordStream(cursor)
            return h2.respond(stream, status: response.status, fields: fields(of: response, length: nil), body: false)
        }
        stream.phase = .streaming(cursor)
        openStreams.add(1, ordering: .relaxed)
        h2.respond(stream, status: response.status, fields: fields(of: response, length: nil), body: true)
        streamNextHTTP2(c, h2, stream)
    }

    /// What is due of a streamed answer, then the timer for what comes next.
    func streamNextHTTP2(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream) {
        guard case .streaming(let cursor) = stream.phase else { return }
        while true {
            switch cursor.next() {
            case .send(let bytes)?:
                if stream.grpc, bytes.first.map({ $0 & RPCFraming.webTrailers != 0 }) == true, let last = Self.lastEnvelope(bytes) {
                    stream.trailers = RPCFraming.trailerLines(last.payload)   // a streamed call's status: its trailers
                    continue
                }
                stream.out.append(contentsOf: bytes)
            case .wait(let milliseconds)?:
                recordStream(cursor)
                h2.resume(stream)
                return schedule(c, stream: stream.id, after: milliseconds / 1000)
            case nil:
                return finishStreamHTTP2(c, h2, stream, "completed")
            }
        }
    }

    /// Ends a streamed answer (END_STREAM after what is queued) and journals it.
    func finishStreamHTTP2(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream, _ reason: String) {
        guard case .streaming(let cursor) = stream.phase else { return }
        endStream(cursor, reason)
        stream.phase = .sending
        stream.finished = true
        h2.resume(stream)
    }

    /// The next slice of a dribbled body, then a timer for the one after.
    func dribbleStream(_ c: Connection, _ h2: HTTP2Session, _ stream: HTTP2Stream) {
        guard case .dribbling(let body, let offset, let bytesPerSecond) = stream.phase else { return }
        let slice = max(1, min(bytesPerSecond / 10, body.count - offset))
        stream.out.append(contentsOf: body[offset..<(offset + slice)])
        if offset + slice >= body.count {
            stream.phase = .sending
            stream.finished = true
        } else {
            stream.phase = .dribbling(body, offset + slice, bytesPerSecond)
            schedule(c, stream: stream.id, after: Double(slice) / Double(bytesPerSecond))
        }
        h2.resume(stream)
    }
}

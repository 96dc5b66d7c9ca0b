import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// Answering: a response, or its fault acted out on the wire.
extension EventLoop {
    // MARK: answering

    /// Sends `response`, or acts out its fault on the wire:
    /// - `connection_reset` (and a Swift `failure(error)` stub, which cannot travel): a TCP RST;
    /// - `empty_response`: the connection closes without a byte (over TLS, after close_notify);
    /// - `malformed_chunk`: half the body in a chunk, then the stream breaks off;
    /// - `timeout`: the connection is held, never answered, until the client leaves or the server stops;
    /// - `dribble`: the body at N bytes per second, in slices sent from the loop's timers.
    func deliver(_ c: Connection, _ response: MockResponse, head: Bool, http10: Bool) {
        if response.fault != nil && c.corked {
            // Answers to earlier pipelined requests leave before the fault is acted out.
            sendPending(c)
            if c.closed { return }
        }
        switch response.fault {
        case nil:
            send(c, response, head: head, http10: http10)
        case .connectionReset?, .error?:
            // SO_LINGER {on, 0}: close sends a RST instead of a FIN.
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            c.tlsFailed = true   // no close_notify before the reset
            closeConnection(c)
        case .emptyResponse?:
            closeConnection(c)
        case .suspended(let s)?:
            // Driven where the request is read (EventLoop+Waiting); an answer of its own would be a bug.
            send(c, .json(.object(["error": .string("\(s) was not driven")]), status: 500), head: head, http10: http10)
        case .forward(let target)?:
            // Forwarded where the request is read (EventLoop+Proxy); an answer of its own would be a bug.
            send(c, .json(.object(["error": .string("mock.proxy: \(target.base) was not forwarded")]), status: 502), head: head, http10: http10)
        case .timeout?:
            if stopping { return closeConnection(c) }
            c.state = .held
        case .malformedChunk?:
            // Half the body in a proper chunk, then the stream breaks off without its last chunk.
            let body = response.body.isEmpty ? Array("{\"partial\":".utf8) : response.body
            let half = max(1, body.count / 2)
            output.removeAll(keepingCapacity: true)
            ResponseHead.append(status: response.status, headers: response.headers, framing: .chunked, connection: .close,
                                date: clock.now(), lines: statusLines, fields: fieldBytes, into: &output)
            ResponseHead.appendHex(half, into: &output)
            ResponseHead.append("\r\n", into: &output)
            output.append(contentsOf: body[0..<half])
            ResponseHead.append("\r\n", into: &output)
            c.keepAlive = false
            write(c, output)
            finishRequest(c)
        case .stream(let plan)?:
            startStream(c, plan, response, head: head, http10: http10)
        case .websocket?:
            send(c, response, head: head, http10: http10)   // its 426: a delayed answer is not upgraded
        case .dribble(let bytesPerSecond)?:
            Self.setTCPOption(c.fd, TCP_NODELAY, 1)   // each slice leaves at once, not when the previous one is acknowledged
            output.removeAll(keepingCapacity: true)
            let keepAlive = c.keepAlive && !stopping
            ResponseHead.append(status: response.status, headers: response.headers, framing: .length(response.body.count),
                                connection: keepAlive ? (http10 ? .keepAlive10 : .keepAlive11) : .close,
                                date: clock.now(), lines: statusLines, fields: fieldBytes, into: &output)
            write(c, output)
            if c.closed { return }
            c.state = .dribbling(head ? [] : response.body, 0, max(1, bytesPerSecond))
            dribble(c)
        }
    }

    /// `100 Continue`: the client waits for it before sending the body it announced.
    func sendContinue(_ c: Connection) {
        output.removeAll(keepingCapacity: true)
        ResponseHead.append("HTTP/1.1 100 Continue\r\n\r\n", into: &output)
        write(c, output)
    }

    /// Writes a whole response and finishes the request.
    func send(_ c: Connection, _ response: MockResponse, head: Bool, http10: Bool) {
        // A large answer that would take this loop's unsent output past its share of
        // --max-pending-output gets a 503 instead: the server's memory stays bounded by clients
        // that do not read.
        if response.body.count > Self.largeAnswer && !head && unsentOutput + response.body.count > pendingOutputBudget {
            return send(c, refusedForOutput(response.body.count), head: head, http10: http10)
        }
        let keepAlive = c.keepAlive && !stopping
        c.keepAlive = keepAlive
        let noBody = HTTPStatus.hasNoContent(response.status)
        let framing: ResponseHead.Framing = noBody ? .none : .length(response.body.count)
        if keepAlive {
            // Written straight into the connection's output, and sent at the end of the turn
            // with the turn's other answers (``flushCorked()``).
            ResponseHead.append(status: response.status, headers: response.headers, framing: framing,
                                connection: http10 ? .keepAlive10 : .keepAlive11,
                                date: clock.now(), lines: statusLines, fields: fieldBytes, into: &c.pending)
            // (Appending from buffers: appending the arrays themselves retains and releases them.)
            if !head && !noBody { response.body.withUnsafeBufferPointer { c.pending.append(contentsOf: $0) } }
            // Counted at once: the next large answer of this turn sees it (sent at the turn's end).
            if response.body.count > Self.largeAnswer { account(c) }
            if !c.corked {
                c.corked = true
                corked.append(c)
            }
            return finishRequest(c)
        }
        output.removeAll(keepingCapacity: true)
        ResponseHead.append(status: response.status, headers: response.headers, framing: framing, connection: .close,
                            date: clock.now(), lines: statusLines, fields: fieldBytes, into: &output)
        if !head && !noBody { response.body.withUnsafeBufferPointer { output.append(contentsOf: $0) } }
        // A last response is held back (MSG_MORE) until the close right after it, so the FIN
        // leaves in the same segment as the data: one packet less for each side to handle.
        write(c, output, more: !keepAlive)
        finishRequest(c)
    }

    /// The `503` for an answer the unsent-output bound has no room for.
    @inline(never)
    func refusedForOutput(_ size: Int) -> MockResponse {
        var refusal = MockResponse.json(.object([
            "error": .string("the server holds \(unsentOutput) bytes of answers its clients have not read; this \(size)-byte answer "
                             + "would pass its share of --max-pending-output (\(pendingOutputBudget) bytes): read the answers, or raise it"),
        ]), status: 503)
        refusal.headers["Retry-After"] = "1"
        return refusal
    }

    /// The next slice of a dribbled body, then a timer for the one after.
    func dribble(_ c: Connection) {
        guard case .dribbling(let body, let offset, let bytesPerSecond) = c.state else { return }
        if offset >= body.count {
            c.state = .head
            finishRequest(c)
            return
        }
        let slice = max(1, min(bytesPerSecond / 10, body.count - offset))
        write(c, Array(body[offset..<(offset + slice)]))
        if c.closed { return }
        c.state = .dribbling(body, offset + slice, bytesPerSecond)
        schedule(c, after: Double(slice) / Double(bytesPerSecond))
    }

    /// The request's answer has been handed over: the connection reads the next one, or closes.
    func finishRequest(_ c: Connection) {
        if c.active {
            c.active = false
            inFlight.subtract(1, ordering: .relaxed)
        }
        if c.closed { return }
        if !c.keepAlive {
            if c.pending.isEmpty { closeConnection(c) } else { c.closeWhenFlushed = true }
            return
        }
        c.state = .head
        if c.readPaused {
            c.readPaused = false
            updateInterest(c)
        }
    }
}

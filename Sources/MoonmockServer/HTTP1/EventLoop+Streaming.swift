import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// Streamed answers (`mock.sse`, `mock.stream`, `mock.llm`): the head goes out at once, each
/// chunk when its timer fires — a stream costs a timer, never a thread. Chunked on HTTP/1.1,
/// delimited by the close on HTTP/1.0. A client that leaves ends the stream; its transcript goes
/// to the journal either way.
extension EventLoop {
    func startStream(_ c: Connection, _ plan: StreamPlan, _ response: MockResponse, head: Bool, http10: Bool) {
        Self.setTCPOption(c.fd, TCP_NODELAY, 1)   // each piece leaves at once
        let chunked = !http10
        if !chunked { c.keepAlive = false }
        let keepAlive = c.keepAlive && !stopping && plan.closes
        c.keepAlive = keepAlive
        output.removeAll(keepingCapacity: true)
        ResponseHead.append(status: response.status, headers: response.headers, framing: chunked ? .chunked : .none,
                            connection: keepAlive ? .keepAlive11 : .close, date: clock.now(), lines: statusLines, fields: fieldBytes, into: &output)
        write(c, output)
        if c.closed { return }
        let cursor = plan.start()
        if head {
            cursor.end("completed")
            recordStream(cursor)
            if chunked { write(c, Array("0\r\n\r\n".utf8)) }
            return finishRequest(c)
        }
        c.state = .streaming(cursor, chunked, head)
        openStreams.add(1, ordering: .relaxed)
        streamNext(c)
    }

    /// Sends what is due, then sets the timer for what comes next; ends the body when the plan does.
    func streamNext(_ c: Connection) {
        guard case .streaming(let cursor, let chunked, _) = c.state else { return }
        while true {
            switch cursor.next() {
            case .send(let bytes)?:
                if bytes.isEmpty { continue }
                if chunked {
                    output.removeAll(keepingCapacity: true)
                    ResponseHead.appendHex(bytes.count, into: &output)
                    ResponseHead.append("\r\n", into: &output)
                    output.append(contentsOf: bytes)
                    ResponseHead.append("\r\n", into: &output)
                    write(c, output)
                } else {
                    write(c, bytes)
                }
                if c.closed { return }
            case .wait(let milliseconds)?:
                recordStream(cursor)
                return schedule(c, after: milliseconds / 1000)
            case nil:
                return finishStream(c, "completed")
            }
        }
    }

    /// Ends the body (the last chunk, or the close) and the request.
    func finishStream(_ c: Connection, _ reason: String) {
        guard case .streaming(let cursor, let chunked, _) = c.state else { return }
        endStream(cursor, reason)
        c.state = .head
        if reason != "completed" { c.keepAlive = false }
        if chunked { write(c, Array("0\r\n\r\n".utf8)) }
        if c.closed { return }
        if !c.keepAlive { return closeConnection(c) }
        finishRequest(c)
    }

    /// Records the end of a stream in the journal.
    func endStream(_ cursor: StreamCursor, _ reason: String) {
        if cursor.transcript.ended == nil { openStreams.subtract(1, ordering: .relaxed) }
        cursor.end(reason)
        recordStream(cursor)
    }

    func recordStream(_ cursor: StreamCursor) {
        guard let id = cursor.journalID else { return }
        serverRef._withUnsafeGuaranteedRef { $0.engine.journal.recordStream(cursor.transcript, for: id) }
    }
}

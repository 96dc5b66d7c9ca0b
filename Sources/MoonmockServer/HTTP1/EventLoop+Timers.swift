import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// Timers: delays, dribbled slices and the sweep of connections past their deadlines.
extension EventLoop {
    // MARK: timers

    func schedule(_ c: Connection, after seconds: Double) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        timers.push(TimerHeap.Entry(deadline: deadline, fd: c.fd, serial: c.serial))
    }

    /// A timer for one HTTP/2 stream of `c` (its delay, its stream's next event).
    func schedule(_ c: Connection, stream: Int32, after seconds: Double) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        timers.push(TimerHeap.Entry(deadline: deadline, fd: c.fd, serial: c.serial, stream: stream))
    }

    func fireTimers(_ now: UInt64) {
        while let entry = timers.popDue(now) {
            if entry.serial == 0 {
                // The listener's pause after running out of descriptors (connection serials start at 1).
                if entry.fd == listener && listener >= 0 { watch(listener, .input, add: true) }
                continue
            }
            guard Int(entry.fd) < connections.count, let c = connections[Int(entry.fd)], c.serial == entry.serial else { continue }
            switch c.state {
            case .delayed(let response, let head, let http10):
                c.state = .head
                deliver(c, response, head: head, http10: http10)
                if !c.closed, c.isReading { resume(c) }
            case .dribbling:
                dribble(c)
                if !c.closed, c.isReading { resume(c) }
            case .streaming:
                streamNext(c)
                if !c.closed, c.isReading { resume(c) }
            case .websocket(let ws):
                // The client did not answer our close in time.
                if ws.closeSent { closeConnection(c) }
            case .http2(let h2):
                timerFired(c, h2, stream: entry.stream)
            default:
                break
            }
        }
    }

    /// Ends connections past a deadline: a head that has not arrived whole within the header
    /// timeout or a body that made no progress within the body timeout (`408`), an answer the
    /// client has not taken a byte of within the send timeout (dropped, its memory freed), and
    /// keep-alive connections idle past the idle timeout.
    func sweep(_ now: UInt64) {
        defer { returnMemoryIfDue(now) }
        let idle = UInt64(max(1, idleTimeout)) * 1_000_000_000
        for case let c? in connections {
            if !c.pending.isEmpty {
                if now &- c.lastSent > sendTimeout {
                    // The kernel's queue going down is progress too (the loop writes again only
                    // once a third of the socket's buffer is free).
                    let unsent = SocketCalls.unsentBytes(c.fd)
                    if unsent >= 0 && unsent != c.unsentSeen {
                        c.unsentSeen = unsent
                        c.lastSent = now
                    } else {
                        closeConnection(c)
                    }
                }
                continue
            }
            switch c.state {
            case .head:
                if c.headStarted != 0 && now &- c.headStarted > headerTimeout && c.tls != nil && !c.tlsEstablished {
                    closeConnection(c)   // a TLS handshake that never finished: nothing can be answered
                } else if c.headStarted != 0 && now &- c.headStarted > headerTimeout {
                    refuse(c, status: 408, "the request head did not arrive within \(Self.seconds(headerTimeout))")
                } else if now &- c.lastActivity > idle {
                    closeConnection(c)
                }
            case .body, .chunked:
                if now &- c.lastActivity > bodyTimeout {
                    refuse(c, status: 408, "the request body made no progress for \(Self.seconds(bodyTimeout))")
                }
            case .http2(let h2):
                sweepHTTP2(c, h2, now: now, idle: idle)
            case .delayed, .held, .proxying, .dribbling, .streaming, .websocket:
                break
            }
        }
    }

    /// Out of descriptors: closes the connections that have waited longest for a request head
    /// (idle keep-alive connections, and heads trickling in), up to 16 and never one with a request
    /// in progress, so that a new client can be taken in. Returns how many it closed.
    func shedIdleConnections() -> Int {
        var waiting: [(since: UInt64, connection: Connection)] = []
        for case let c? in connections where !c.active && c.pending.isEmpty {
            if case .head = c.state { waiting.append((c.headStarted != 0 ? c.headStarted : c.lastActivity, c)) }
        }
        let oldest = waiting.sorted { $0.since < $1.since }.prefix(16)
        for (_, c) in oldest {
            if c.headStarted != 0 && (c.tls == nil || c.tlsEstablished) {
                refuse(c, status: 408, "the server is out of connections and this request head was the slowest")
            } else {
                closeConnection(c)
            }
        }
        return oldest.count
    }

    /// Answers `status` with `message` on a connection with no request in progress, and closes it.
    func refuse(_ c: Connection, status: Int, _ message: String) {
        c.keepAlive = false
        c.headStarted = 0
        c.state = .head
        send(c, .json(.object(["error": .string(message)]), status: status), head: false, http10: false)
        if !c.closed && c.pending.isEmpty { closeConnection(c) }
    }

    static func seconds(_ nanoseconds: UInt64) -> String {
        let s = Double(nanoseconds) / 1e9
        return s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }
}

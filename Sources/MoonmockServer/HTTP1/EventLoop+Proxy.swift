import Foundation
import MoonmockCore
import MoonmockProxy

/// An upstream's answer to a request of connection `fd` (`serial` tells a later connection on
/// the same descriptor from this one).
struct ProxiedAnswer: @unchecked Sendable {
    let fd: Int32
    let serial: UInt64
    let response: MockResponse
    let delay: Double
    let head: Bool
    let http10: Bool
}

/// `mock.proxy`: the loop hands the request to the upstream pool and serves on; the answer comes
/// back through the loop's command queue and is delivered like any other.
extension EventLoop {
    func forward(_ c: Connection, _ request: MockRequest, to target: ProxyTarget, delay: Double, head: Bool, http10: Bool) {
        c.state = .proxying
        let fd = c.fd, serial = c.serial
        Upstream.shared.forward(request, to: target) { [self] response in
            commands.withLock { commands in
                guard !commands.closed else { return }   // the loop has ended: nobody to answer
                // Under the lock: the server waits for this loop to close before it goes away.
                serverRef._withUnsafeGuaranteedRef { server in
                    server.recorder.record(request, response, via: target)
                    if let id = target.journalID { server.engine.journal.recordUpstreamStatus(response.status, for: id) }
                }
                commands.proxied.append(ProxiedAnswer(fd: fd, serial: serial, response: response, delay: delay, head: head, http10: http10))
                poke(commands)
            }
        }
    }

    /// Delivers an upstream's answer to its connection, if that is still open and waiting.
    func completeProxy(_ answer: ProxiedAnswer) {
        guard answer.fd >= 0, Int(answer.fd) < connections.count, let c = connections[Int(answer.fd)], c.serial == answer.serial,
              case .proxying = c.state else { return }
        if answer.delay > 0 {
            c.state = .delayed(answer.response, answer.head, answer.http10)
            schedule(c, after: answer.delay / 1000)
        } else {
            deliver(c, answer.response, head: answer.head, http10: answer.http10)
            // Requests the client sent behind this one (pipelined) wait in the input: on to them.
            if !c.closed, c.isReading { resume(c) }
        }
        flushCorked()
    }
}

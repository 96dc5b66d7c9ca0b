import Foundation
import MoonmockCore

/// An answer made off the loop (``StoreWorkers``) for the request of connection `fd`
/// (`serial` tells a later connection on the same descriptor from this one).
struct OffloadedAnswer: @unchecked Sendable {
    // @unchecked: handed from the worker to the loop once, through the loop's command lock.
    let fd: Int32
    let serial: UInt64
    let request: MockRequest
    let response: MockResponse
    let delay: Double
    let head: Bool
    let http10: Bool
}

/// With a shared store, a request that may wait for it is answered by a store worker: the loop
/// parks the connection (as for `mock.proxy`), serves the others, and acts on the answer when
/// it comes back through the command queue.
extension EventLoop {
    func offload(_ c: Connection, _ request: MockRequest, to workers: StoreWorkers, server: MoonmockServer, head: Bool, http10: Bool) {
        c.state = .proxying
        let fd = c.fd, serial = c.serial
        // The worker holds the server: it outlives a stop that did not wait for this answer.
        workers.submit { [self, server] in
            let (response, delay) = server.answer(request) { ($0, $1) }
            commands.withLock { commands in
                guard !commands.closed else { return }   // the loop has ended: nobody to answer
                commands.offloaded.append(OffloadedAnswer(fd: fd, serial: serial, request: request, response: response,
                                                          delay: delay, head: head, http10: http10))
                // The first answer since the loop last took them wakes it; it takes them all.
                if commands.offloaded.count == 1 { poke(commands) }
            }
        }
    }

    /// Acts on a worker's answer, if its connection is still open and waiting for it.
    func completeOffloaded(_ answer: OffloadedAnswer) {
        guard answer.fd >= 0, Int(answer.fd) < connections.count, let c = connections[Int(answer.fd)], c.serial == answer.serial,
              case .proxying = c.state else { return }
        act(c, answer.request, answer.response, answer.delay, head: answer.head, http10: answer.http10)
        // Requests the client sent behind this one (pipelined) wait in the input: on to them.
        if !c.closed, c.isReading { resume(c) }
        flushCorked()
    }
}

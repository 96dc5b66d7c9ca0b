import Foundation
import MoonmockCore

/// An answer made off the loop for the request of connection `fd` — by the upstream pool
/// (`mock.proxy`) or a store worker (``StoreWorkers``) — while the connection waited parked in
/// `.proxying` (`serial` tells a later connection on the same descriptor from this one).
struct ParkedAnswer: @unchecked Sendable {
    // @unchecked: handed from its thread to the loop once, through the loop's command lock.
    let fd: Int32
    let serial: UInt64
    let request: MockRequest
    let response: MockResponse
    let delay: Double
    let head: Bool
    let http10: Bool
    /// The HTTP/2 stream the answer is for (0: the connection's one request).
    var stream: Int32 = 0
}

/// Requests answered off the loop: the loop parks the connection, serves the others, and acts
/// on the answer when it comes back through the command queue.
extension EventLoop {
    /// With a shared store, a request that may wait for it goes to a store worker.
    func offload(_ c: Connection, _ request: MockRequest, to workers: StoreWorkers, server: MoonmockServer, head: Bool, http10: Bool,
                 stream: Int32 = 0) {
        if stream == 0 { c.state = .proxying }
        let fd = c.fd, serial = c.serial
        // The worker holds the server: it outlives a stop that did not wait for this answer.
        workers.submit { [self, server] in
            let (response, delay) = server.answer(request) { ($0, $1) }
            var request = request
            if server.engine.outbox.isHolding { request.id = server.engine.lastRequestIDOnThisThread }   // its webhooks go by it
            commands.withLock { commands in
                guard !commands.closed else { return }   // the loop has ended: nobody to answer
                park(ParkedAnswer(fd: fd, serial: serial, request: request, response: response, delay: delay, head: head, http10: http10,
                                  stream: stream), in: &commands)
            }
        }
    }

    /// Queues an answer for the loop (under the command lock); the first since the loop last
    /// took them wakes it, and it takes them all.
    func park(_ answer: ParkedAnswer, in commands: inout Commands) {
        commands.answers.append(answer)
        if commands.answers.count == 1 { poke(commands) }
    }

    /// Acts on an answer made off the loop, if its connection is still open and waiting for it.
    func completeParked(_ answer: ParkedAnswer) {
        guard answer.fd >= 0, Int(answer.fd) < connections.count, let c = connections[Int(answer.fd)], c.serial == answer.serial else { return }
        if answer.stream != 0 { return completeParkedStream(c, answer) }
        guard case .proxying = c.state else { return }
        c.waiting = nil
        act(c, answer.request, answer.response, answer.delay, head: answer.head, http10: answer.http10)
        if answer.request.id != 0, serverRef._withUnsafeGuaranteedRef({ $0.engine.outbox.isHolding }) { answeredWithHeldWork.append(answer.request.id) }
        // Requests the client sent behind this one (pipelined) wait in the input: on to them.
        if !c.closed, c.isReading { resume(c) }
        flushCorked()
    }
}

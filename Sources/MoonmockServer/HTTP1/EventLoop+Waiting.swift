import Foundation
import MoonmockCore
import MoonmockProxy

/// Handlers that wait (`mock.fetch`, `mock.sleep`, `mock.proxy` with a `transform`): the
/// connection is parked, the loop serves the others, and the handler is resumed on this loop
/// when its wait is over. Its answer comes back through the command queue like a proxied one.
extension EventLoop {
    func wait(_ c: Connection, _ request: MockRequest, _ suspension: Suspension, head: Bool, http10: Bool, stream: HTTP2Stream? = nil) {
        if stream == nil { c.state = .proxying }
        let fd = c.fd, serial = c.serial, streamID = stream?.id ?? 0
        let server = serverRef.takeUnretainedValue()
        let engine = server.engine
        c.waitSerial &+= 1
        let mine = c.waitSerial
        let handle = engine.drive(suspension, client: server.outbound, hop: { [self] work in
            // On this loop already (a store reply): at once; else through the command queue.
            if onLoopThread { return work() }
            commands.withLock { commands in
                guard !commands.closed else { return }   // the loop has ended: the handler is let go with it
                commands.work.append(work)
                if commands.work.count == 1 { poke(commands) }
            }
        }) { [self, server] response, delay in
            var response = response
            if let cors = server.corsFlag || engine.declaresCORS ? server.cors(for: request) : nil { cors.decorate(&response, for: request) }
            server.log(request, status: response.fault == nil ? response.status : 0, rule: suspension.context.rule?.id ?? (AdminAPI.owns(request.path) ? "admin" : nil), delay: delay)
            let answer = ParkedAnswer(fd: fd, serial: serial, request: suspension.context.request, response: response, delay: delay, head: head,
                                      http10: http10, stream: streamID)
            if onLoopThread { return completeParked(answer) }
            commands.withLock { commands in
                guard !commands.closed else { return }
                park(answer, in: &commands)
            }
        }
        // Kept unless the handler answered already (its outcome came at once, on this thread).
        if let stream {
            if !stream.isClosed, case .parked = stream.phase { stream.waiting = handle }
        } else if c.waitSerial == mine, !c.closed, case .proxying = c.state {
            c.waiting = handle
        }
    }
}

extension EventLoop {
    /// The answers of this turn are written: their requests' webhooks and later work start.
    @inline(never)
    func releaseHeldWork() {
        let outbox = serverRef._withUnsafeGuaranteedRef { $0.engine.outbox }
        for id in answeredWithHeldWork { outbox.release(id) }
        answeredWithHeldWork.removeAll(keepingCapacity: true)
    }
}

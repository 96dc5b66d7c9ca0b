import Foundation
import MoonmockCore
import MoonmockProxy

/// `mock.proxy`: the loop hands the request to the upstream pool and serves on; the answer comes
/// back through the loop's command queue and is delivered like any other.
extension EventLoop {
    func forward(_ c: Connection, _ request: MockRequest, to target: ProxyTarget, delay: Double, head: Bool, http10: Bool, stream: Int32 = 0) {
        if stream == 0 { c.state = .proxying }
        let fd = c.fd, serial = c.serial
        // Traced: the upstream call is a client span, and the request's span ends with its answer.
        let traced = serverRef._withUnsafeGuaranteedRef { $0.engine.proxySpan(request, target) }
        Upstream.shared.forward(request, to: traced?.1 ?? target) { [self] answer in
            if let (span, sent) = traced { endProxySpans(span, request, sent, answer) }
            commands.withLock { commands in
                guard !commands.closed else { return }   // the loop has ended: nobody to answer
                // Under the lock: the server waits for this loop to close before it goes away.
                let response = serverRef._withUnsafeGuaranteedRef { server in
                    let response = server.recorder.isRecording ? server.recorder.record(request, answer, via: target) : answer
                    if let id = target.journalID { server.engine.journal.recordUpstreamStatus(response.status, for: id) }
                    return response
                }
                park(ParkedAnswer(fd: fd, serial: serial, request: request, response: response, delay: delay, head: head, http10: http10,
                                  stream: stream), in: &commands)
            }
        }
    }

    /// The spans of a proxied request: the upstream call's, then the request's.
    private func endProxySpans(_ span: OpenSpan, _ request: MockRequest, _ target: ProxyTarget, _ answer: MockResponse) {
        serverRef._withUnsafeGuaranteedRef { server in
            guard let tracer = server.engine.tracer, let parent = request.span else { return }
            // Upstream's own 502 says why no answer came.
            let error = answer.headers[Upstream.failureHeader]
            tracer.endClientSpan(span, method: request.method, url: target.url(for: request), kind: "proxy", status: error == nil ? answer.status : nil,
                                 error: error)
            server.engine.endProxiedSpan(parent, status: answer.status, error: error)
        }
    }
}

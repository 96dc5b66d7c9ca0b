import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockProxy

extension MoonmockURLProtocol {
    /// `mock.proxy(url, { insecure = true })` in-process: the request goes through libcurl (as on
    /// the server), certificate unchecked; its answer is delivered as an engine answer would be,
    /// and an upstream that does not answer fails the task with a `URLError`.
    func forward(_ request: MockRequest, to proxy: ProxyTarget, head: Bool) {
        let me = Unchecked(self)
        let queue = laterQueue()
        let owner = Self.owner
        Upstream.shared.forward(request, to: proxy) { response in
            queue.async {
                let this = me.value
                guard !this.withPending({ $0.stopped }) else { return }
                if let reason = response.headers["x-moonmock-proxy-error"] {
                    this.fail(URLError(reason.lowercased().contains("timed out") ? .timedOut : .cannotConnectToHost))
                    return
                }
                if let id = proxy.journalID { owner?.engine.journal.recordUpstreamStatus(response.status, for: id) }
                do {
                    let delivery = try Delivery(response, for: this.request.url, head: head, date: owner?.engine.environment.now() ?? Date().timeIntervalSince1970)
                    this.send(delivery)
                } catch {
                    this.fail(error)
                }
            }
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
#if canImport(MoonmockProxy)
import MoonmockProxy

extension MoonmockURLProtocol {
    /// `mock.proxy(url, { insecure = true })` in-process: the request goes through libcurl (as on
    /// the server), certificate unchecked; its answer is delivered as an engine answer would be,
    /// and an upstream that does not answer fails the task with a `URLError`.
    func forward(_ request: MockRequest, to proxy: ProxyTarget, head: Bool) {
        let me = Unchecked(self)
        let route = later()
        let owner = Self.owner
        Upstream.shared.forward(request, to: proxy) { response in
            route.async {
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
#endif

extension MoonmockURLProtocol {
    // MARK: pass-through

    /// A session of its own, on its own queue: calling `URLSession.shared` from `startLoading`
    /// deadlocks on Linux. The requests it sends are marked so that no Moonmock protocol takes them.
    /// It has no URL cache: a request passed through goes to the network, as the test asked.
    static let upstreamSession: URLSession = {
        let queue = OperationQueue()
        queue.name = "moonmock.passThrough"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: nil, delegateQueue: queue)
    }()

    #if canImport(MoonmockProxy)
    static var insecureSession: URLSession { upstreamSession }   // Linux: insecure upstreams go through libcurl
    #else
    /// Apple platforms: `mock.proxy(…, {insecure = true})`, a session whose delegate accepts any
    /// server certificate (Linux's URLSession cannot, so there libcurl forwards it).
    static let insecureSession: URLSession = {
        let queue = OperationQueue()
        queue.name = "moonmock.passThrough.insecure"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: TrustingDelegate(), delegateQueue: queue)
    }()

    /// Trusts whatever certificate the upstream presents (only for `insecure` proxies).
    private final class TrustingDelegate: NSObject, URLSessionDelegate, @unchecked Sendable {
        func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge) async
            -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                  let trust = challenge.protectionSpace.serverTrust else { return (.performDefaultHandling, nil) }
            return (.useCredential, URLCredential(trust: trust))
        }
    }
    #endif

    func passThrough(_ request: URLRequest, journalID: Int? = nil, insecure: Bool = false) {
        guard let mutable = (request as NSURLRequest).mutableCopy() as? NSMutableURLRequest else {
            fail(URLError(.unknown)); return
        }
        URLProtocol.setProperty(true, forKey: Self.passThroughKey, in: mutable)
        let upstreamRequest = Unchecked(mutable as URLRequest)
        let me = Unchecked(self)
        let route = later()
        // Not from this thread: startLoading runs on URLSession's work queue, and creating a
        // task on any session synchronously enters that queue again (a deadlock on Linux).
        DispatchQueue.global().async {
            let task = (insecure ? Self.insecureSession : Self.upstreamSession).dataTask(with: upstreamRequest.value) { data, response, error in
                let result = Unchecked((data, response, error))
                route.async {
                    let this = me.value
                    let (data, response, error) = result.value
                    guard !this.withPending({ $0.stopped }) else { return }
                    if let error { this.fail(error); return }
                    if let journalID, let http = response as? HTTPURLResponse {
                        Self.owner?.engine.journal.recordUpstreamStatus(http.statusCode, for: journalID)
                    }
                    if let response { this.client?.urlProtocol(this, didReceive: response, cacheStoragePolicy: .notAllowed) }
                    if let data, !data.isEmpty { this.client?.urlProtocol(this, didLoad: data) }
                    this.finish()
                }
            }
            let started = me.value.withPending { p -> Bool in
                guard !p.stopped else { return false }
                p.upstream = task
                return true
            }
            if started { task.resume() }
        }
    }
}

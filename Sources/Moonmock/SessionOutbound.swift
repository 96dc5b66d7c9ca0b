import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
#if canImport(MoonmockProxy)
import MoonmockProxy
#endif

/// The in-process door's outbound requests (`mock.fetch`, webhooks, `mock.proxy` with a
/// `transform`): through the pass-through `URLSession`, whose requests no Moonmock protocol
/// takes. On Linux, whose URLSession can neither skip a certificate check nor trust a CA file,
/// a request with `insecure` or `ca` goes through libcurl instead (``CurlOutbound``).
///
/// ```swift
/// moonmock.engine.outbox.client = SessionOutbound()
/// ```
public struct SessionOutbound: OutboundClient {
    public init() {}

    public func send(_ request: OutboundRequest,
                     completion: @escaping @Sendable (Result<OutboundResponse, OutboundFailure>) -> Void) -> @Sendable () -> Void {
        #if canImport(MoonmockProxy)
        if request.insecure || request.caFile != nil { return CurlOutbound.shared.send(request, completion: completion) }
        #endif
        guard let url = URL(string: request.url) else {
            completion(.failure(OutboundFailure("not a URL: \(request.url)")))
            return {}
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: Double(request.timeoutMilliseconds) / 1000)
        urlRequest.httpMethod = request.method
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        guard let marked = (urlRequest as NSURLRequest).mutableCopy() as? NSMutableURLRequest else {
            completion(.failure(OutboundFailure("cannot prepare the request")))
            return {}
        }
        URLProtocol.setProperty(true, forKey: MoonmockURLProtocol.passThroughKey, in: marked)
        let session = request.insecure ? MoonmockURLProtocol.insecureSession : MoonmockURLProtocol.upstreamSession
        let upstream = Unchecked(marked as URLRequest)
        let task = Locked<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))
        // Made and started off the caller's thread: it may be URLSession's work queue, which
        // making a task on any session enters synchronously again (a deadlock on Linux).
        DispatchQueue.global().async {
            let made = session.dataTask(with: upstream.value) { data, response, error in
                if let error { return completion(.failure(OutboundFailure(error.localizedDescription))) }
                guard let http = response as? HTTPURLResponse else { return completion(.failure(OutboundFailure("no HTTP answer"))) }
                var headers = HTTPHeaders()
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers.add(name, value) }
                }
                completion(.success(OutboundResponse(status: http.statusCode, headers: headers, body: data.map { [UInt8]($0) } ?? [])))
            }
            let start = task.withLock { t -> Bool in
                t.task = made
                return !t.cancelled
            }
            if start { made.resume() }
        }
        return {
            let made = task.withLock { t -> URLSessionDataTask? in
                t.cancelled = true
                return t.task
            }
            made?.cancel()
        }
    }
}

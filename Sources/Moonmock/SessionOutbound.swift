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
        let task = session.dataTask(with: marked as URLRequest) { data, response, error in
            if let error { return completion(.failure(OutboundFailure(error.localizedDescription))) }
            guard let http = response as? HTTPURLResponse else { return completion(.failure(OutboundFailure("no HTTP answer"))) }
            var headers = HTTPHeaders()
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers.add(name, value) }
            }
            completion(.success(OutboundResponse(status: http.statusCode, headers: headers, body: data.map { [UInt8]($0) } ?? [])))
        }
        let box = Unchecked(task)
        // Not from the caller's thread: it may be URLSession's work queue (see passThrough).
        DispatchQueue.global().async { box.value.resume() }
        return { box.value.cancel() }
    }
}

import Foundation

/// The span an outbound call belongs to, and what sends it. A class: an ``OutboundRequest``
/// travels by value through every handler's wait, and one reference keeps it small.
public final class OutboundTrace: Sendable, Equatable {
    public let parent: SpanContext
    /// `fetch`, `webhook` or `proxy`: the client span's `moonmock.call` attribute.
    public let kind: String
    public init(parent: SpanContext, kind: String) {
        self.parent = parent
        self.kind = kind
    }

    public static func == (a: OutboundTrace, b: OutboundTrace) -> Bool { a.parent == b.parent && a.kind == b.kind }
}

/// An ``OutboundClient`` whose calls become client spans: a call made for a traced request
/// (``OutboundRequest/trace``) gets a span of its own, a child of the request's, named in the
/// `traceparent` field it carries (unless the handler set that field itself), and recorded when
/// the answer or the failure comes. Other calls go through untouched.
///
/// ```swift
/// let client = TracedOutbound(CurlOutbound.shared, tracer: tracer)
/// ```
public final class TracedOutbound: OutboundClient {
    public let base: any OutboundClient
    public let tracer: Tracer

    public init(_ base: any OutboundClient, tracer: Tracer) {
        self.base = base
        self.tracer = tracer
    }

    public func send(_ request: OutboundRequest, completion: @escaping @Sendable (Result<OutboundResponse, OutboundFailure>) -> Void) -> @Sendable () -> Void {
        guard let trace = request.trace else { return base.send(request, completion: completion) }
        let span = tracer.span(parent: trace.parent, remote: false)
        var request = request
        if request.headers["traceparent"] == nil {
            request.headers["traceparent"] = span.context.traceparent
            if let state = span.context.traceState { request.headers["tracestate"] = state }
        }
        let tracer = self.tracer, method = request.method, url = request.url
        return base.send(request) { result in
            let status: Int?, error: String?
            switch result {
            case .success(let response): (status, error) = (response.status, nil)
            case .failure(let failure): (status, error) = (nil, failure.description)
            }
            tracer.endClientSpan(span, method: method, url: url, kind: trace.kind, status: status, error: error)
            completion(result)
        }
    }
}

extension Tracer {
    /// Ends a client span: OpenTelemetry's HTTP client attributes, `moonmock.call`, and an error
    /// status for a failure or a status of 400 and above.
    public func endClientSpan(_ span: OpenSpan, method: String, url: String, kind: String, status: Int?, error: String?) {
        guard span.end() else { return }
        var attributes: [SpanAttribute] = [.init("http.request.method", .string(method)), .init("url.full", .string(url)),
                                           .init("moonmock.call", .string(kind))]
        if let (host, port) = Self.hostAndPort(url) {
            attributes.append(.init("server.address", .string(host)))
            if let port { attributes.append(.init("server.port", .int(Int64(port)))) }
        }
        if let status { attributes.append(.init("http.response.status_code", .int(Int64(status)))) }
        if let error { attributes.append(.init("error.type", .string(error))) } else if let status, status >= 400 { attributes.append(.init("error.type", .string(String(status)))) }
        submit(span.record(name: method, kind: .client, end: SpanRecord.now(), attributes: attributes,
                           error: error ?? status.flatMap { $0 >= 400 ? "HTTP \($0)" : nil }))
    }

    /// The host and port a URL names (`nil`: not an absolute URL).
    static func hostAndPort(_ url: String) -> (String, Int?)? {
        guard let components = URLComponents(string: url), let host = components.host else { return nil }
        let port = components.port ?? (components.scheme == "https" ? 443 : components.scheme == "http" ? 80 : nil)
        return (host, port)
    }
}

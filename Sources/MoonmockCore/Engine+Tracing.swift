import Foundation

/// The spans of requests (``Tracer``): each answer ends its request's span, named after the rule
/// that answered (`GET /users/:id`, `shop.Orders/Get`), with OpenTelemetry's HTTP attributes and
/// Moonmock's own (rule, location, chaos, fault, delay, journal id).
extension Engine {
    /// Ends the span of `request` with `response`. A proxied answer's span waits for the
    /// upstream (``endProxiedSpan(_:status:error:)``); the answer's delay is part of the span.
    @inline(never)
    func endServerSpan(_ tracer: Tracer, _ request: MockRequest, _ response: MockResponse, ruleID: String?, rule: Rule?, error: String?,
                       chaos: ChaosKind?, delay: Double) {
        guard let span = request.span else { return }
        let rpc = RPCProtocol(contentType: request.headers["content-type"], connectHeader: request.headers["connect-protocol-version"] != nil)
        var name = request.method
        var a: [(key: String, value: SpanValue)] = [("http.request.method", .string(request.method)), ("url.path", .string(request.path)),
                                                    ("url.scheme", .string(request.scheme)), ("server.address", .string(request.host))]
        if let port = request.port { a.append(("server.port", .int(Int64(port)))) }
        if let query = request.rawQuery { a.append(("url.query", .string(query))) }
        if let agent = request.headers["user-agent"] { a.append(("user_agent.original", .string(agent))) }
        if let rpc {
            let method = String(request.path.dropFirst())
            name = method
            let system: String
            if case .connectUnary = rpc { system = "connect_rpc" } else if case .connectStream = rpc { system = "connect_rpc" } else { system = "grpc" }
            a.append(("rpc.system", .string(system)))
            if let slash = method.lastIndex(of: "/") {
                a.append(("rpc.service", .string(String(method[..<slash]))))
                a.append(("rpc.method", .string(String(method[method.index(after: slash)...]))))
            }
            if let code = Self.grpcStatus(response) { a.append(("rpc.grpc.status_code", .int(Int64(code)))) }
        }
        if let rule {
            if rpc == nil { name = request.method + " " + rule.pattern.source }
            a.append(("http.route", .string(rule.pattern.source)))
            if let location = rule.location {
                a.append(("moonmock.rule.location", .string(location)))
                if let colon = location.lastIndex(of: ":"), let line = Int(location[location.index(after: colon)...]) {
                    a.append(("code.file.path", .string(String(location[..<colon]))))
                    a.append(("code.line.number", .int(Int64(line))))
                }
            }
        } else if let ruleID, rpc == nil {
            name = ruleID
        }
        a.append(("moonmock.rule", .string(ruleID ?? "")))
        a.append(("moonmock.matched", .bool(ruleID != nil)))
        a.append(("moonmock.request_id", .int(Int64(request.id))))
        a.append(("moonmock.door", .string(ThreadDoor.current)))
        if let chaos { a.append(("moonmock.chaos", .string(chaos.name))) }
        var failure = error
        if let fault = response.fault, Self.isFailure(fault) {
            a.append(("moonmock.fault", .string(fault.description)))
            failure = failure ?? "fault: \(fault.description)"
        } else if response.proxy == nil, response.status > 0 {
            // Streams and WebSockets carry the status they open with.
            a.append(("http.response.status_code", .int(Int64(response.status))))
            if response.status >= 500 {
                a.append(("error.type", .string(String(response.status))))
                failure = failure ?? "HTTP \(response.status)"
            }
        }
        if delay > 0 { a.append(("moonmock.delay_ms", .double(delay))) }
        if let error { a.append(("moonmock.handler_error", .string(error))) }
        let record = span.record(name: name, kind: .server, end: SpanRecord.now() + UInt64(max(0, delay) * 1e6), attributes: a, error: failure)
        if response.proxy != nil {
            span.pending.withLock { $0 = record }
            return
        }
        guard span.end() else { return }
        tracer.submit(record)
    }

    /// Ends a proxied request's span when the upstream answered (`status`) or failed (`error`).
    public func endProxiedSpan(_ span: ServerSpan, status: Int, error: String?) {
        guard let tracer, var record = span.pending.withLock({ $0 }), span.end() else { return }
        record.end = SpanRecord.now()
        record.attributes.append(("http.response.status_code", .int(Int64(status))))
        if status >= 500 { record.attributes.append(("error.type", .string(error == nil ? String(status) : "upstream"))) }
        if let error { record.error = error } else if status >= 500 { record.error = "HTTP \(status)" }
        tracer.submit(record)
    }

    /// The client span of a request forwarded by `mock.proxy`, and the target that tells the
    /// upstream about it in `traceparent` (`nil`: the request is not traced).
    public func proxySpan(_ request: MockRequest, _ target: ProxyTarget) -> (ServerSpan, ProxyTarget)? {
        guard let tracer, let parent = request.span else { return nil }
        let span = tracer.span(parent: parent.context, remote: false)
        var headers = target.headers.filter { $0.name.lowercased() != "traceparent" && $0.name.lowercased() != "tracestate" }
        headers.append(("traceparent", span.context.traceparent))
        headers.append(("tracestate", span.context.traceState ?? ""))
        return (span, ProxyTarget(base: target.base, headers: headers, timeoutMilliseconds: target.timeoutMilliseconds, insecure: target.insecure,
                                  journalID: target.journalID))
    }

    /// The faults a client sees as a failure (not a proxy, stream, WebSocket or wait).
    private static func isFailure(_ fault: Fault) -> Bool {
        switch fault {
        case .connectionReset, .emptyResponse, .malformedChunk, .timeout, .dribble, .error: return true
        case .forward, .stream, .websocket, .suspended: return false
        }
    }

    /// The gRPC status of an answer laid out for gRPC or binary gRPC-Web (its trailers envelope).
    private static func grpcStatus(_ response: MockResponse) -> Int? {
        if let field = response.headers["grpc-status"] { return Int(field) }
        guard response.fault == nil, let envelopes = try? RPCFraming.envelopes(response.body),
              let last = envelopes.last, last.flags & RPCFraming.webTrailers != 0 else { return nil }
        return RPCFraming.trailerLines(last.payload).first { $0.0 == "grpc-status" }.flatMap { Int($0.1) }
    }
}

import Foundation

/// The spans of requests (``Tracer``): each answer ends its request's span, named after the rule
/// that answered (`GET /users/:id`, `shop.Orders/Get`), with OpenTelemetry's HTTP attributes and
/// Moonmock's own (rule, location, chaos, fault, delay, journal id).
extension Engine {
    /// Ends the span of `request` with `response`. A proxied answer's span waits for the
    /// upstream (``endProxiedSpan(_:status:error:)``); the answer's delay is part of the span.
    @inline(never)
    func endServerSpan(_ tracer: Tracer, _ request: MockRequest, _ response: MockResponse, ruleID: String?, rule: Rule?, error: String?,
                       chaos: ChaosKind?, delay: Double, door: String? = nil) {
        guard let span = request.span else { return }
        let rpc = Self.rpcProtocol(request)
        var name = request.method
        var a: [SpanAttribute] = []
        a.reserveCapacity(20)
        a.append(.init("http.request.method", .string(request.method)))
        a.append(.init("url.path", .string(request.path)))
        a.append(.init("url.scheme", .string(request.scheme)))
        a.append(.init("server.address", .string(request.host)))
        if let port = request.port { a.append(.init("server.port", .int(Int64(port)))) }
        if let query = request.rawQuery { a.append(.init("url.query", .string(query))) }
        if let agent = request.headers["user-agent"] { a.append(.init("user_agent.original", .string(agent))) }
        if let rpc {
            let method = String(request.path.dropFirst())
            name = method
            switch rpc {
            case .connectUnary, .connectStream: a.append(.init("rpc.system", .string("connect_rpc")))
            case .grpc, .grpcWeb: a.append(.init("rpc.system", .string("grpc")))
            }
            if let slash = method.lastIndex(of: "/") {
                a.append(.init("rpc.service", .string(String(method[..<slash]))))
                a.append(.init("rpc.method", .string(String(method[method.index(after: slash)...]))))
            }
            if let code = Self.grpcStatus(response) { a.append(.init("rpc.grpc.status_code", .int(Int64(code)))) }
        }
        if let rule {
            if rpc == nil { name = rule.spanName ?? request.method + " " + rule.pattern.source }
            a.append(.init("http.route", .string(rule.pattern.source)))
            if let location = rule.location { a.append(.init("moonmock.rule.location", .string(location))) }
            if let file = rule.codeFile, let line = rule.codeLine {
                a.append(.init("code.file.path", .string(file)))
                a.append(.init("code.line.number", .int(Int64(line))))
            }
        } else if let ruleID, rpc == nil {
            name = ruleID
        }
        a.append(.init("moonmock.rule", .string(ruleID ?? "")))
        a.append(.init("moonmock.matched", .bool(ruleID != nil)))
        a.append(.init("moonmock.request_id", .int(Int64(request.id))))
        a.append(.init("moonmock.door", .string(door ?? ThreadDoor.current)))
        if let chaos { a.append(.init("moonmock.chaos", .string(chaos.name))) }
        var failure = error
        if let fault = response.fault, Self.isFailure(fault) {
            a.append(.init("moonmock.fault", .string(fault.description)))
            failure = failure ?? "fault: \(fault.description)"
        } else if response.proxy == nil, response.status > 0 {
            // Streams and WebSockets carry the status they open with.
            a.append(.init("http.response.status_code", .int(Int64(response.status))))
            if response.status >= 500 {
                a.append(.init("error.type", .string(String(response.status))))
                failure = failure ?? "HTTP \(response.status)"
            }
        }
        if delay > 0 { a.append(.init("moonmock.delay_ms", .double(delay))) }
        if let error { a.append(.init("moonmock.handler_error", .string(error))) }
        let record = span.record(name: name, kind: .server, end: SpanRecord.now() + UInt64(max(0, delay) * 1e6), attributes: a, error: failure)
        if response.proxy != nil {
            span.pending.withLock { $0 = record }
            return
        }
        guard span.end() else { return }
        tracer.submit(record)
    }

    /// Starts the span of a request the engine takes (out of line, as all of tracing: an
    /// untraced request carries none of it).
    @inline(never)
    func beginSpan(_ request: MockRequest, _ lane: EngineLane) {
        guard let tracer else { return }
        request.attach(tracer.serverSpan(for: request, &lane.traceIDs))
    }

    /// Ends the span of a request answered on this thread, with the rule routing noted.
    @inline(never)
    func endSpan(_ request: MockRequest, _ response: MockResponse, _ ruleID: String?, _ error: String?, _ chaos: ChaosKind?,
                 _ delay: Double, _ lane: EngineLane) {
        let rule = lane.spanRule
        lane.spanRule = nil
        guard let tracer else { return }
        endServerSpan(tracer, request, response, ruleID: ruleID, rule: rule?.takeUnretainedValue(), error: error, chaos: chaos, delay: delay,
                      door: lane.metrics?.door)
    }

    /// The rule a traced request was routed to, for its span's name (out of line: an untraced
    /// request's routing carries none of it).
    @inline(never)
    static func noteSpanRule(_ lane: EngineLane, _ rule: Unmanaged<Rule>) { lane.spanRule = rule }

    /// Ends a proxied request's span when the upstream answered (`status`) or failed (`error`).
    public func endProxiedSpan(_ span: OpenSpan, status: Int, error: String?) {
        guard let tracer, var record = span.pending.withLock({ $0 }), span.end() else { return }
        record.end = SpanRecord.now()
        record.attributes.append(.init("http.response.status_code", .int(Int64(status))))
        if status >= 500 { record.attributes.append(.init("error.type", .string(error == nil ? String(status) : "upstream"))) }
        if let error { record.error = error } else if status >= 500 { record.error = "HTTP \(status)" }
        tracer.submit(record)
    }

    /// The client span of a request forwarded by `mock.proxy`, and the target that tells the
    /// upstream about it in `traceparent` (`nil`: the request is not traced).
    public func proxySpan(_ request: MockRequest, _ target: ProxyTarget) -> (OpenSpan, ProxyTarget)? {
        guard let tracer, let parent = request.span else { return nil }
        let span = tracer.span(parent: parent.context, remote: false)
        var headers = target.headers.filter { $0.name.lowercased() != "traceparent" && $0.name.lowercased() != "tracestate" }
        headers.append(("traceparent", span.context.traceparent))
        headers.append(("tracestate", span.context.traceState ?? ""))
        return (span, ProxyTarget(base: target.base, headers: headers, timeoutMilliseconds: target.timeoutMilliseconds, insecure: target.insecure,
                                  journalID: target.journalID))
    }

    /// The request's RPC protocol, the content type looked at first: most requests are not
    /// RPCs, and only a JSON or protobuf body makes the Connect header worth looking up.
    private static func rpcProtocol(_ request: MockRequest) -> RPCProtocol? {
        guard let type = request.headers["content-type"] else { return nil }
        let rpcFamily = asciiPrefix(type, "application/grpc") || asciiPrefix(type, "application/connect")
        // Connect's unary calls: JSON or protobuf posted to a method's path (`/pkg.Service/Method`).
        let connectUnary = !rpcFamily && (asciiPrefix(type, "application/json") || asciiPrefix(type, "application/proto"))
            && request.path.utf8.dropFirst().contains(UInt8(ascii: "/"))
        guard rpcFamily || connectUnary else { return nil }
        return RPCProtocol(contentType: type, connectHeader: connectUnary && request.headers["connect-protocol-version"] != nil)
    }

    /// Whether `text` starts with `prefix` (lower-case ASCII), case-insensitively.
    private static func asciiPrefix(_ text: String, _ prefix: StaticString) -> Bool {
        guard text.utf8.count >= prefix.utf8CodeUnitCount else { return false }
        var i = text.utf8.startIndex
        for k in 0..<prefix.utf8CodeUnitCount {
            guard text.utf8[i] | 0x20 == prefix.utf8Start[k] else { return false }
            i = text.utf8.index(after: i)
        }
        return true
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

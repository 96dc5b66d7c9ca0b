import MoonmockCore

/// A response value from the script, resolved to Swift once: fixed bytes, a template rendered
/// per request, or a sequence that advances per hit.
enum ResponseSpec: Sendable {
    case fixed(MockResponse, explicitStatus: Bool)
    /// A body template (or `nil`: the base's body) and header templates, rendered per request.
    case template(Template?, headers: [HeaderTemplate], base: MockResponse, escapeJSON: Bool, explicitStatus: Bool)
    case sequence(id: Int, items: [ResponseSpec])
    /// `conditional = true`: a `GET` or `HEAD` whose validators match the answer's `ETag` or
    /// `Last-Modified` gets `304 Not Modified` instead.
    indirect case conditional(ResponseSpec)

    /// The response for one request. Consuming: a spec a handler returned hands its response on
    /// (moved, not copied: no retain of its body and header list, and no release with the spec).
    consuming func realize(_ context: RequestContext, _ generation: ScriptGeneration) throws -> (MockResponse, explicitStatus: Bool) {
        switch consume self {
        case .fixed(let response, let explicit):
            return (response, explicit)
        case .template(let template, let headers, let base, let escapeJSON, let explicit):
            var response = base
            if let template {
                response.body = try template.render(request: context.request, params: context.params, state: context.state,
                                                    environment: context.environment, escapeJSON: escapeJSON, fake: context)
            }
            for header in headers {
                let value = try header.template.render(request: context.request, params: context.params, state: context.state,
                                                       environment: context.environment, escapeJSON: false, fake: context)
                response.headers[header.name] = String(decoding: value, as: UTF8.self)
            }
            return (response, explicit)
        case .sequence(let id, let items):
            if let waiting = generation.sequenceWait(id, items, context) { return (waiting, true) }
            let n = try generation.sequenceHits.next(id)
            return try items[min(n, items.count - 1)].realize(context, generation)
        case .conditional(let spec):
            let (response, explicit) = try spec.realize(context, generation)
            return (ConditionalRequest.answer(context.request, response), explicit)
        }
    }
}

/// A response header whose value is a `mock.template(...)`: `Location` built from the request's
/// own `Host`, so that an answer recorded from one origin stays on whichever serves it.
struct HeaderTemplate: Sendable {
    let name: String
    let template: Template
}

/// Rule-level `opts` (status, headers, delay) applied on top of what a handler returns.
struct RuleDefaults: Sendable {
    var status: Int?
    var headers = HTTPHeaders()
    var delay: DelaySpec?

    /// Consuming `response`: the handler's response is changed in place, not copied first.
    func apply(to response: consuming MockResponse, explicitStatus: Bool) -> MockResponse {
        var r = response
        if let status, !explicitStatus, r.fault == nil { r.status = status }
        if !headers.isEmpty {   // (most rules have no default headers: no list made to walk)
            for field in headers where r.headers[field.name] == nil { r.headers.add(field.name, field.value) }
        }
        if r.delay == nil { r.delay = delay }
        return r
    }
}

/// Conditional `GET`/`HEAD` (RFC 9110 §13): the answer a cache revalidating it gets.
enum ConditionalRequest {
    /// `response`, or `304 Not Modified` with its validators and caching fields when the
    /// request's `If-None-Match` names its `ETag` (weakly compared), or, without
    /// `If-None-Match`, its `Last-Modified` is not after `If-Modified-Since`.
    static func answer(_ request: MockRequest, _ response: MockResponse) -> MockResponse {
        guard request.method == "GET" || request.method == "HEAD", (200...299).contains(response.status), response.fault == nil
        else { return response }
        let notModified: Bool
        if let condition = request.headers["if-none-match"] {
            guard let etag = response.headers["etag"] else { return response }
            notModified = condition.split(separator: ",").contains { tag in
                let t = tag.trimmingCharacters(in: .whitespaces)
                return t == "*" || weak(t) == weak(etag)
            }
        } else if let since = request.headers["if-modified-since"].flatMap(HTTPDateFormat.parse),
                  let modified = response.headers["last-modified"].flatMap(HTTPDateFormat.parse) {
            notModified = modified <= since
        } else {
            return response
        }
        guard notModified else { return response }
        var headers = HTTPHeaders()
        for field in response.headers where !dropped.contains(field.name.lowercased()) { headers.add(field.name, field.value) }
        return MockResponse(status: 304, headers: headers, body: [], delay: response.delay)
    }

    /// Fields a `304` does not carry: they describe a body it has not got.
    private static let dropped: Set<String> = ["content-type", "content-length", "content-encoding", "content-range",
                                               "transfer-encoding", "accept-ranges", "content-disposition"]

    /// An entity tag without its weakness marker (`W/"a"` and `"a"` compare equal weakly).
    private static func weak(_ tag: String) -> Substring {
        let t = tag.trimmingCharacters(in: .whitespaces)
        return t.hasPrefix("W/") ? Substring(t.dropFirst(2)) : Substring(t)
    }
}

import MoonmockCore

/// A response value from the script, resolved to Swift once: fixed bytes, a template rendered
/// per request, or a sequence that advances per hit.
enum ResponseSpec: Sendable {
    case fixed(MockResponse, explicitStatus: Bool)
    case template(Template, base: MockResponse, escapeJSON: Bool, explicitStatus: Bool)
    case sequence(id: Int, items: [ResponseSpec])

    /// The response for one request. Consuming: a spec a handler returned hands its response on
    /// (moved, not copied: no retain of its body and header list, and no release with the spec).
    consuming func realize(_ context: RequestContext, _ generation: ScriptGeneration) throws -> (MockResponse, explicitStatus: Bool) {
        switch consume self {
        case .fixed(let response, let explicit):
            return (response, explicit)
        case .template(let template, let base, let escapeJSON, let explicit):
            var response = base
            response.body = try template.render(request: context.request, params: context.params, state: context.state,
                                            environment: context.environment, escapeJSON: escapeJSON)
            return (response, explicit)
        case .sequence(let id, let items):
            let n = try generation.sequenceHits.next(id)
            return try items[min(n, items.count - 1)].realize(context, generation)
        }
    }
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

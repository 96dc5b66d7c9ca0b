import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore

/// What the protocol does for one request, worked out in full before delivery begins: the
/// engine has run, the request is logged, and a response's status line, headers and body are
/// ready as the objects URLSession takes.
///
/// ```swift
/// let answer = Answer(request, owner, sessionHeaders: nil)   // the engine runs here
/// if case .respond(let delivery, let delay) = answer { … }
/// ```
enum Answer {
    /// Deliver `Delivery` after `delayMilliseconds`.
    case respond(Delivery, delayMilliseconds: Double)
    /// Fail the task (an unmatched request under ``UnmatchedPolicy/fail``).
    case fail(MoonmockError)
    /// Hand the request to the real network.
    case passThrough

    /// Runs `request` through `owner`'s engine, logs it and prepares what to deliver.
    /// `sessionHeaders` are the session's `httpAdditionalHeaders` (see ``MockRequest/init(_:sessionHeaders:)``).
    init(_ request: URLRequest, _ owner: Moonmock, sessionHeaders: [String: String]? = nil) {
        let exchange = owner.engine.handle(MockRequest(request, sessionHeaders: sessionHeaders))
        let policy = owner.unmatchedPolicy, logging = owner.logging
        let head = exchange.request.method == "HEAD"
        if exchange.matched {
            logging.log(exchange.request, status: exchange.response.fault == nil ? exchange.response.status : 0, ruleID: exchange.ruleID)
            self = .respond(Delivery(exchange.response, for: request.url, head: head), delayMilliseconds: exchange.delayMilliseconds)
            return
        }
        switch policy {
        case .fail:
            logging.log(exchange.request, status: 0, ruleID: nil)
            self = .fail(MoonmockError.unmatched(exchange.request, exchange.nearMisses))
        case .notImplemented:
            logging.log(exchange.request, status: 501, ruleID: nil)
            let text = MoonmockError.unmatchedText(exchange.request, exchange.nearMisses) + "\n"
            self = .respond(Delivery(.text(text, status: 501), for: request.url, head: head), delayMilliseconds: 0)
        case .passThrough:
            logging.log(exchange.request, status: nil, ruleID: nil)
            self = .passThrough
        }
    }
}

/// A response as the protocol client takes it.
struct Delivery {
    /// The engine's response (its fault, and the body a dribble slices).
    let response: MockResponse
    /// The status line and headers; `nil` when they do not make an `HTTPURLResponse`.
    let head: HTTPURLResponse?
    /// The body (empty for `HEAD`).
    let body: Data

    init(_ response: MockResponse, for url: URL?, head isHead: Bool) {
        self.response = response
        body = isHead ? Data() : Data(response.body)
        head = url.flatMap { Self.head(response, url: $0) }
    }

    /// `response`'s status and headers for `url`: repeated names joined, and a
    /// `Content-Length` added when the response has none.
    private static func head(_ response: MockResponse, url: URL) -> HTTPURLResponse? {
        var fields = [String: String](minimumCapacity: response.headers.fields.count + 1)
        var hasLength = false
        for field in response.headers {
            if !hasLength && field.name.utf8.count == 14 && field.name.equalsIgnoringASCIICase("content-length") { hasLength = true }
            if let earlier = fields[field.name] { fields[field.name] = earlier + ", " + field.value } else { fields[field.name] = field.value }
        }
        if !hasLength { fields["Content-Length"] = String(response.body.count) }
        return HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1", headerFields: fields)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
import MoonmockCodings

/// What the protocol does for one request, worked out in full before delivery begins: the
/// engine has run, the request is logged, and a response's status line, headers and body are
/// ready as the objects URLSession takes.
///
/// ```swift
/// let answer = Answer(request, owner, session: sessionFacts)   // the engine runs here
/// if case .respond(let delivery, let delay) = answer { … }
/// ```
enum Answer {
    /// Deliver `Delivery` after `delayMilliseconds`.
    case respond(Delivery, delayMilliseconds: Double)
    /// Fail the task (an unmatched request under ``UnmatchedPolicy/fail``, too many redirects).
    case fail(any Error)
    /// Hand the request to the real network (the request a redirect led to, or the original);
    /// for `mock.proxy`, the journal id whose status the upstream's answer gives.
    /// `insecure`: `mock.proxy(…, {insecure = true})` on Apple platforms, whose URLSession can
    /// accept any server certificate (a session whose delegate trusts it).
    case passThrough(URLRequest, journalID: Int? = nil, insecure: Bool = false)
    /// A handler waits (`mock.fetch`, `mock.sleep`): the engine drives it to its answer, then
    /// the answer is delivered for `request` after the delay so far (redirects before it).
    case wait(Exchange, URLRequest, delayMilliseconds: Double, head: Bool)
    #if canImport(MoonmockProxy)
    /// `mock.proxy` with `insecure` on Linux: through libcurl, which can skip the certificate
    /// check that URLSession on Linux cannot (the request, its target with the journal id, HEAD or not).
    case forward(MockRequest, ProxyTarget, head: Bool)
    #endif

    /// Runs `request` through `owner`'s engine, logs it and prepares what to deliver. A redirect
    /// the engine answers is followed as URLSession follows one from the network (a `URLProtocol`
    /// cannot hand it one on Linux): the engine answers the request it leads to, up to 20 times,
    /// the delays adding up, the cookies of each hop kept. `session` is what the task's session
    /// adds to its requests (see ``MockRequest/init(_:sessionHeaders:cookies:)``).
    init(_ request: URLRequest, _ owner: Moonmock, session: SessionFacts? = nil) {
        let policy = owner.unmatchedPolicy, logging = owner.logging
        var current = request
        var delay = 0.0
        var redirects = 0
        // When the answer will be delivered, by the engine's clock: its `Date` field.
        func deliveredAt() -> Double { owner.engine.environment.now() + delay / 1000 }
        while true {
            // The first request is the task's own, its cookies already added by the session.
            let exchange = owner.engine.handle(MockRequest(current, sessionHeaders: session?.additionalHeaders,
                                                           cookies: redirects > 0 && current.httpShouldHandleCookies ? session?.cookieStorage : nil))
            let head = exchange.request.method == "HEAD"
            // A request an enforced spec refused gets its 400 (404, 405), as from the socket server.
            if exchange.matched || exchange.refusedByContract || exchange.answeredByChaos {
                logging.log(exchange.request, status: exchange.response.fault == nil ? exchange.response.status : 0, ruleID: exchange.ruleID)
                if case .suspended? = exchange.response.fault {
                    self = .wait(exchange, current, delayMilliseconds: delay, head: head)
                    return
                }
                delay += exchange.delayMilliseconds
                #if canImport(MoonmockProxy)
                if let proxy = exchange.response.proxy, proxy.insecure {
                    self = .forward(exchange.request, proxy.forJournal(exchange.request.id), head: head)
                    return
                }
                #endif
                if let proxy = exchange.response.proxy {
                    // mock.proxy: the pass-through session sends it upstream; its answer (or URLError) is the task's.
                    self = .passThrough(Self.upstreamRequest(current, exchange.request, proxy), journalID: exchange.request.id,
                                        insecure: proxy.insecure)
                    return
                }
                if let next = Self.redirect(from: current, by: exchange.response) {
                    if current.httpShouldHandleCookies, let url = current.url { session?.storeCookies(of: exchange.response, for: url, mainDocumentURL: current.mainDocumentURL) }
                    redirects += 1
                    // As URLSession: the 21st redirect in a row fails the task.
                    if redirects > 20 { self = .fail(URLError(.httpTooManyRedirects)); return }
                    current = next
                    continue
                }
                do {
                    var delivery = try Delivery(exchange.response, for: current.url, head: head, date: deliveredAt())
                    delivery.requestID = exchange.request.id
                    self = .respond(delivery, delayMilliseconds: delay)
                } catch {
                    self = .fail(error)   // a body whose content coding cannot be undone
                }
                return
            }
            switch policy {
            case .fail:
                logging.log(exchange.request, status: 0, ruleID: nil)
                self = .fail(MoonmockError.unmatched(exchange.request, exchange.nearMisses))
            case .notImplemented:
                logging.log(exchange.request, status: 501, ruleID: nil)
                // A gRPC-Web or Connect call: the engine's UNIMPLEMENTED in the call's own protocol.
                if RPCProtocol(contentType: exchange.request.headers["content-type"], connectHeader: exchange.request.headers["connect-protocol-version"] != nil) != nil,
                   let delivery = try? Delivery(exchange.response, for: current.url, head: head, date: deliveredAt()) {
                    self = .respond(delivery, delayMilliseconds: delay)
                    return
                }
                let text = MoonmockError.unmatchedText(exchange.request, exchange.nearMisses) + "\n"
                // Plain text, no content coding: nothing to fail.
                self = .respond(try! Delivery(.text(text, status: 501), for: current.url, head: head,
                                              date: deliveredAt()), delayMilliseconds: delay)
            case .passThrough, .leaveUnclaimed:
                logging.log(exchange.request, status: nil, ruleID: nil)
                self = .passThrough(current)
            }
            return
        }
    }

    /// The request `mock.proxy` sends: the same method, body and fields (hop-by-hop ones
    /// dropped, the proxy's own applied) to the upstream's URL, with its timeout.
    static func upstreamRequest(_ original: URLRequest, _ request: MockRequest, _ proxy: ProxyTarget) -> URLRequest {
        var upstream = URLRequest(url: URL(string: proxy.url(for: request)) ?? original.url!,
                                  timeoutInterval: Double(proxy.timeoutMilliseconds) / 1000)
        upstream.httpMethod = request.method
        upstream.httpBody = request.body.isEmpty ? nil : Data(request.body)
        upstream.httpShouldHandleCookies = false
        for field in proxy.forwardedHeaders(request) { upstream.addValue(field.value, forHTTPHeaderField: field.name) }
        return upstream
    }

    /// The request a redirect leads to, as swift-corelibs-foundation builds it: for 301, 302,
    /// 305, 307 and 308 with a `Location` (relative to the request's URL), the same request
    /// there, except that 303, and 301 or 302 after a `POST`, become a `GET` without a body.
    /// `nil` for any other response (a fault included).
    static func redirect(from request: URLRequest, by response: MockResponse) -> URLRequest? {
        guard response.fault == nil, [301, 302, 303, 305, 307, 308].contains(response.status),
              let location = response.headers["location"],
              let target = URL(string: location, relativeTo: request.url)?.absoluteURL else { return nil }
        var next = request
        next.url = target
        if response.status == 303 || (response.status <= 302 && request.httpMethod == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
        }
        return next
    }
}

/// A response as the protocol client takes it.
struct Delivery {
    /// The engine's response (its fault, and the body a dribble slices).
    let response: MockResponse
    /// The status line and headers; `nil` when they do not make an `HTTPURLResponse`.
    let head: HTTPURLResponse?
    /// The body (empty for `HEAD`), its content codings undone as URLSession undoes them.
    let body: Data
    /// The journal id of the request answered: its webhooks go once the answer is delivered.
    var requestID: Int?

    /// `date` (seconds since 1970, the engine's clock) is when it will be delivered: the
    /// `Date` field the server would send then, unless the rule gave one. Throws when the body
    /// has a content coding that cannot be undone (see ``ContentDecoding``).
    init(_ response: MockResponse, for url: URL?, head isHead: Bool, date: Double) throws {
        self.response = response
        // 1xx, 204 and 304 go without their body, as the server sends them.
        if isHead || HTTPStatus.hasNoContent(response.status) {
            body = Data()
        } else {
            do {
                body = Data(try ContentDecoding.decode(response.body, contentEncodings: response.headers.values("content-encoding")))
            } catch let failure as ContentDecoding.Failure {
                throw URLError(.cannotDecodeContentData, userInfo: [NSLocalizedDescriptionKey: failure.description])
            }
        }
        head = url.flatMap { Self.head(response, url: $0, date: date) }
    }

    /// `response`'s status and headers for `url`: repeated names joined, and a
    /// `Content-Length` added when the response has none (none at all for a status that
    /// carries no content, as from the server).
    private static func head(_ response: MockResponse, url: URL, date: Double) -> HTTPURLResponse? {
        var fields = [String: String](minimumCapacity: response.headers.fields.count + 2)
        let noContent = HTTPStatus.hasNoContent(response.status)
        var hasLength = false, hasDate = false
        for field in response.headers {
            if field.name.utf8.count == 14 && field.name.equalsIgnoringASCIICase("content-length") {
                hasLength = true
                if noContent { continue }
            }
            if field.name.utf8.count == 4 && field.name.equalsIgnoringASCIICase("date") { hasDate = true }
            if let earlier = fields[field.name] { fields[field.name] = earlier + ", " + field.value } else { fields[field.name] = field.value }
        }
        if response.stream != nil {
            // Sent in pieces, as the server sends it: chunked, no length.
            fields["Transfer-Encoding"] = "chunked"
        } else if !hasLength && !noContent {
            fields["Content-Length"] = String(response.body.count)
        }
        if !hasDate { fields["Date"] = HTTPDateFormat.imfFixdate(Int(date.rounded(.down))) }
        return HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1", headerFields: fields)
    }
}

import Foundation
import MoonmockCore

extension MoonmockServer {
    /// What the server answers, over either scheme: the admin API under
    /// `/__moonmock/`, else the engine; with the request's log line. `act` gets the response and
    /// its delay in milliseconds where the engine left them: returned instead, the response would
    /// be copied out of the exchange (its body and header list retained, then released with it).
    func answer<R>(_ request: MockRequest, _ act: (MockResponse, Double) -> R) -> R {
        if AdminAPI.owns(request.path) {
            let response = admin.handle(request, server: self)
            log(request, status: response.status, rule: "admin", delay: 0)
            return act(response, 0)
        }
        let exchange = engine.handle(request)
        log(exchange.request, status: exchange.response.fault == nil ? exchange.response.status : 0,
            rule: exchange.ruleID, delay: exchange.delayMilliseconds)
        return act(exchange.response, exchange.delayMilliseconds)
    }

    func tooLarge() -> MockResponse {
        .json(.object(["error": .string("request body larger than \(configuration.maxBodyBytes) bytes")]), status: 413)
    }

    // MARK: logging

    func log(_ request: MockRequest, status: Int, rule: String?, delay: Double) {
        guard configuration.log != .none else { return }
        var line = "\(request.method) \(request.path)\(request.rawQuery.map { "?" + $0 } ?? "") → \(status == 0 ? "fault" : String(status))"
        line += rule.map { "  (\($0))" } ?? "  (unmatched)"
        if delay > 0 { line += "  +\(Int(delay)) ms" }
        if configuration.log == .verbose {
            for h in request.headers { line += "\n    \(h.name): \(h.value)" }
            if !request.body.isEmpty { line += "\n    " + String(decoding: request.body.prefix(1024), as: UTF8.self) }
        }
        if let sink = configuration.logSink { sink(line) } else { print(line) }
    }
}

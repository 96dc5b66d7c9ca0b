import Foundation
import MoonmockCore

extension MoonmockServer {
    /// What the server answers, over either scheme: the admin API under
    /// `/__moonmock/`, else the engine; with the request's log line. `act` gets the response and
    /// its delay in milliseconds where the engine left them: returned instead, the response would
    /// be copied out of the exchange (its body and header list retained, then released with it).
    func answer<R>(_ request: MockRequest, _ act: (MockResponse, Double) -> R) -> R {
        if recorder.isRecording, !AdminAPI.owns(request.path), let target = recorder.target(for: request) {
            // Recording: everything but the admin API goes to the upstream, and is kept.
            var response = MockResponse()
            response.proxy = target
            log(request, status: -1, rule: "recording", delay: 0)
            return act(response, 0)
        }
        if corsFlag || engine.declaresCORS, let cors = cors(for: request) {
            return answer(request, cors, act)
        }
        if AdminAPI.owns(request.path) {
            let response = admin.handle(request, server: self)
            // Reads of the admin API (the dashboard's own traffic) stay out of the log; changes show.
            if request.method != "GET" && request.method != "HEAD", response.fault == nil { log(request, status: response.status, rule: "admin", delay: 0) }
            return act(response, 0)
        }
        let exchange = engine.handle(request)
        log(exchange)
        if exchange.response.fault != nil, exchange.response.proxy != nil {
            var response = exchange.response
            tagProxy(&response, exchange)
            return act(response, exchange.delayMilliseconds)
        }
        return act(exchange.response, exchange.delayMilliseconds)
    }

    /// The log line of an engine answer: its status, `fault`, or `proxy`.
    private func log(_ exchange: Exchange) {
        let r = exchange.response
        if case .suspended? = r.fault { return }   // logged when the handler answers (EventLoop+Waiting)
        log(exchange.request, status: r.fault == nil ? r.status : (r.proxy != nil ? -1 : 0), rule: exchange.ruleID, delay: exchange.delayMilliseconds)
        if let verdict = exchange.contract, !verdict.isClean { logContract(exchange.request, verdict) }
    }

    /// A broken contract is always logged (whatever `--log` says): one line per violation.
    private func logContract(_ request: MockRequest, _ verdict: ContractVerdict) {
        var line = "contract: \(request.method) \(request.path) (#\(request.id)\(verdict.operation.map { ", " + $0.id } ?? ""))"
        for (direction, errors) in [("request", verdict.request), ("response", verdict.response)] {
            for e in errors {
                let at = e["instance_path"]?.stringValue ?? ""
                line += "\n    \(direction) \(at.isEmpty ? "" : at + ": ")\(e["message"]?.stringValue ?? "")"
            }
        }
        if let sink = configuration.logSink { sink(line) } else { print(line) }
    }

    /// Tells a `mock.proxy` target which journal entry the upstream's status belongs to.
    private func tagProxy(_ response: inout MockResponse, _ exchange: Exchange) {
        if let proxy = response.proxy { response.proxy = proxy.forJournal(exchange.request.id) }
    }

    /// The policy in force (the script's, else `--cors`) when `request` comes from a page (has an `Origin`).
    @inline(never)
    func cors(for request: MockRequest) -> CORSPolicy? {
        guard request.headers["origin"] != nil else { return nil }
        return engine.cors ?? corsFlagPolicy
    }

    /// `answer` for a request from a page: preflights answered here, every other answer with
    /// the CORS fields. Out of line: the requests without CORS carry none of its code.
    @inline(never)
    private func answer<R>(_ request: MockRequest, _ cors: CORSPolicy, _ act: (MockResponse, Double) -> R) -> R {
        if CORSPolicy.isPreflight(request) {
            let response = cors.preflight(request)
            log(request, status: response.status, rule: "CORS preflight", delay: 0)
            return act(response, 0)
        }
        if AdminAPI.owns(request.path) {
            var response = admin.handle(request, server: self)
            cors.decorate(&response, for: request)
            log(request, status: response.status, rule: "admin", delay: 0)
            return act(response, 0)
        }
        let exchange = engine.handle(request)
        log(exchange)
        var response = exchange.response
        cors.decorate(&response, for: request)
        tagProxy(&response, exchange)
        return act(response, exchange.delayMilliseconds)
    }

    func tooLarge() -> MockResponse {
        .json(.object(["error": .string("request body larger than \(configuration.maxBodyBytes) bytes")]), status: 413)
    }

    // MARK: logging

    func log(_ request: MockRequest, status: Int, rule: String?, delay: Double) {
        guard configuration.log != .none else { return }
        var line = "\(request.method) \(request.path)\(request.rawQuery.map { "?" + $0 } ?? "") → \(status == 0 ? "fault" : status < 0 ? "proxy" : String(status))"
        line += rule.map { "  (\($0))" } ?? "  (unmatched)"
        if delay > 0 { line += "  +\(Int(delay)) ms" }
        if configuration.log == .verbose {
            for h in request.headers { line += "\n    \(h.name): \(h.value)" }
            if !request.body.isEmpty { line += "\n    " + String(decoding: request.body.prefix(1024), as: UTF8.self) }
        }
        if let sink = configuration.logSink { sink(line) } else { print(line) }
    }
}

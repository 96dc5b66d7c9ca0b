/// The specs an engine checks requests and answers against, and what came of it
/// (`GET /__moonmock/contract`).
///
/// ```swift
/// engine.setContracts([spec], from: .commandLine)
/// engine.contractSummary()["violations"]   // 0 while every exchange kept the contract
/// ```
extension Engine {
    /// Where specs came from: a reload replaces the script's, never the command line's.
    public enum ContractSource: Sendable { case commandLine, script }

    /// Makes `checkers` the specs of `source`.
    public func setContracts(_ checkers: [any ContractChecking], from source: ContractSource) {
        let all = contracts.withLock { c -> [any ContractChecking] in
            switch source {
            case .commandLine: c.commandLine = checkers
            case .script: c.script = checkers
            }
            return c.commandLine + c.script
        }
        contractList.withLock { $0 = all }
        hasContracts.store(!all.isEmpty, ordering: .releasing)
    }

    /// The specs `source` gave.
    public func contracts(from source: ContractSource) -> [any ContractChecking] {
        contracts.withLock { source == .commandLine ? $0.commandLine : $0.script }
    }

    /// The specs checked, command line first.
    public var contractCheckers: [any ContractChecking] { contractList.withLock { $0 } }

    /// Whether any spec is checked: one relaxed load on every request.
    var checksContracts: Bool { hasContracts.load(ordering: .relaxed) }

    /// The verdict of the first spec that has an operation for `request` (or the first one's).
    func contractVerdict(_ request: MockRequest) -> (any ContractChecking, ContractVerdict)? {
        let checkers = contractList.withLock { $0 }
        var first: (any ContractChecking, ContractVerdict)?
        for checker in checkers {
            guard let verdict = checker.checkRequest(request) else { continue }
            if verdict.operation != nil { return (checker, verdict) }
            if first == nil || first!.1.refusal == 404 && verdict.refusal == 405 { first = (checker, verdict) }
        }
        return first
    }

    /// A request refused for breaking the contract: `application/problem+json` naming each violation.
    static func refusal(_ verdict: ContractVerdict) -> MockResponse {
        let title = verdict.refusal == 404 ? "No operation of the API's spec has this path"
            : verdict.refusal == 405 ? "The API's spec has this path, not this method"
            : "The request breaks the API's contract"
        var response = problem(status: verdict.refusal, title: title, verdict: verdict, errors: verdict.request, rule: nil)
        if !verdict.allow.isEmpty { response.headers["Allow"] = verdict.allow.joined(separator: ", ") }
        return response
    }

    /// A mock answer that breaks the contract, replaced: a 500 naming the rule and each violation.
    static func brokenAnswer(_ verdict: ContractVerdict, rule: String?) -> MockResponse {
        problem(status: 500, title: "The mock's answer breaks the API's contract", verdict: verdict, errors: verdict.response, rule: rule)
    }

    private static func problem(status: Int, title: String, verdict: ContractVerdict, errors: [JSONValue], rule: String?) -> MockResponse {
        let lines = errors.map { e -> String in
            let at = e["instance_path"]?.stringValue ?? ""
            return (at.isEmpty ? "" : at + ": ") + (e["message"]?.stringValue ?? "")
        }
        var detail = lines.joined(separator: "; ")
        if let rule { detail = "rule \(rule): " + detail }
        var body: [String: JSONValue] = [
            "title": .string(title), "status": .integer(Int64(status)), "detail": .string(detail), "violations": .array(errors),
        ]
        if let operation = verdict.operation { body["operation"] = .string(operation.id) }
        if let rule { body["rule"] = .string(rule) }
        var response = MockResponse.json(.object(body), status: status)
        response.headers["Content-Type"] = "application/problem+json"
        return response
    }

    /// `GET /__moonmock/contract`: per operation the requests and violations (the last 100 of
    /// each), the operations no request reached, and the violations in all.
    public func contractSummary() -> JSONValue {
        let operations = contractCheckers.flatMap(\.operations)
        return contractLedger.summary(operations)
    }
}

/// Requests and violations per operation, since the start or the last journal clear.
final class ContractLedger: Sendable {
    private struct Tally {
        var requests = 0
        var violations: [JSONValue] = []
        var dropped = 0
    }
    private let tallies = Locked<(byOperation: [ContractOperation?: Tally], total: Int)>(([:], 0))
    static let kept = 100

    func record(_ verdict: ContractVerdict, requestID: Int) {
        tallies.withLock { t in
            var tally = t.byOperation[verdict.operation] ?? Tally()
            tally.requests += 1
            for (direction, errors) in [("request", verdict.request), ("response", verdict.response)] where !errors.isEmpty {
                t.total += 1
                if tally.violations.count == Self.kept { tally.violations.removeFirst(); tally.dropped += 1 }
                tally.violations.append(.object(["request_id": .integer(Int64(requestID)), "direction": .string(direction), "errors": .array(errors)]))
            }
            t.byOperation[verdict.operation] = tally
        }
    }

    var total: Int { tallies.withLock { $0.total } }

    func clear() { tallies.withLock { $0 = ([:], 0) } }

    func summary(_ operations: [ContractOperation]) -> JSONValue {
        let (byOperation, total) = tallies.withLock { ($0.byOperation, $0.total) }
        func entry(_ operation: ContractOperation?, _ tally: Tally) -> JSONValue {
            var o: [String: JSONValue] = [
                "operation": operation.map { .string($0.id) } ?? .null,
                "method": operation.map { .string($0.method) } ?? .null,
                "path": operation.map { .string($0.path) } ?? .null,
                "requests": .integer(Int64(tally.requests)),
                "violations": .array(tally.violations),
            ]
            if tally.dropped > 0 { o["violations_dropped"] = .integer(Int64(tally.dropped)) }
            return .object(o)
        }
        var list = operations.map { entry($0, byOperation[$0] ?? Tally()) }
        // Requests no operation describes: one entry of their own, last.
        if let none = byOperation[nil] { list.append(entry(nil, none)) }
        let uncovered = operations.filter { (byOperation[$0]?.requests ?? 0) == 0 }.map { JSONValue.string("\($0.method) \($0.path) (\($0.id))") }
        return .object(["operations": .array(list), "uncovered": .array(uncovered), "violations": .integer(Int64(total))])
    }
}

extension Engine {
    /// Checks the answer against the request's spec operation (an enforced spec replaces an answer
    /// that breaks it), journals the exchange, and tallies the contract's verdict.
    func finish(_ request: MockRequest, _ response: MockResponse, _ ruleID: String?, _ logs: [String],
                        _ error: String?, _ misses: [NearMiss], _ started: UInt64, _ lane: EngineLane,
                        contract: (any ContractChecking, ContractVerdict)?, rule: String? = nil, chaos: ChaosMark? = nil) -> Exchange {
        guard let (checker, checked) = contract else {
            return finish(request, response, ruleID, logs, error, misses, started, lane, chaos: chaos)
        }
        var response = response, verdict = checked
        // Proxied answers are the real API's; faults, streams and sockets are not a body to check.
        if verdict.request.isEmpty || !verdict.enforces, response.fault == nil, verdict.operation != nil, ruleID != nil {
            checker.checkResponse(response, to: request, &verdict)
            if verdict.enforces && !verdict.response.isEmpty { response = Self.brokenAnswer(verdict, rule: rule ?? ruleID) }
        }
        contractLedger.record(verdict, requestID: request.id)
        var exchange = finish(request, response, ruleID, logs, error, misses, started, lane, contract: verdict.json, chaos: chaos)
        exchange.contract = verdict
        return exchange
    }
}

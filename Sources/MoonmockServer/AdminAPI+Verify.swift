import Foundation
import MoonmockCore

/// `POST /__moonmock/verify`: `{"rule": id}`, `{"method": "GET", "pattern": "/users/:id"}` or
/// `{"url": "/users/7?full=1"}`, with `"times"`, `"at_least"` or `"at_most"` (default: at least
/// once). `200 {"ok": true, "count": n}`, else `422` with the requests that counted and, when
/// too few did, the closest others and why.
extension AdminAPI {
    func verify(_ request: MockRequest) throws -> MockResponse {
        guard case .object(let o)? = try? JSONValue(parsing: request.body) else {
            return Self.error(#"send {"method": "GET", "pattern": "/users/:id", "times": 2} (or "rule", or "url"; "at_least", "at_most")"#, 400)
        }
        if let contract = o["contract"] { return verifyContract(contract, fields: o.count) }
        if o["outbound"] != nil { return verifyOutbound(o) }
        let known = ["rule", "method", "pattern", "url", "times", "at_least", "at_most", "contract", "outbound"]
        if let unknown = o.keys.sorted().first(where: { !known.contains($0) }) {
            let hint = EditDistance.nearest(to: unknown, among: known).map { " (did you mean '\($0)'?)" } ?? ""
            return Self.error("verify: unknown field '\(unknown)'\(hint); fields: \(known.joined(separator: ", "))", 400)
        }
        let target: Verification.Target
        let label: String
        if let rule = o["rule"]?.stringValue {
            target = .rule(rule)
            label = "rule '\(rule)'"
        } else if let url = o["url"]?.stringValue {
            target = .url(url)
            label = url
        } else if let pattern = o["pattern"]?.stringValue {
            guard let p = try? RoutePattern(pattern) else { return Self.error("verify: invalid pattern '\(pattern)'", 400) }
            let method = o["method"]?.stringValue?.asciiUppercased
            target = .pattern(method: method == "ANY" ? nil : method, p)
            label = "\(method ?? "ANY") \(pattern)"
        } else {
            return Self.error(#"verify: say which requests: "rule", "url", or "pattern" (with "method")"#, 400)
        }
        let expected: Verification.Expected
        switch Self.expectedCount(o) {
        case .success(let e): expected = e
        case .failure(let refusal): return refusal.response
        }
        let entries = try engine.journalEntries()
        let result = Verification(target: target, expected: expected, rules: engine.allRules).run(on: entries)
        if result.ok { return .json(.object(["ok": .bool(true), "count": .integer(Int64(result.count))])) }
        var body: [String: JSONValue] = [
            "ok": .bool(false),
            "count": .integer(Int64(result.count)),
            "expected": .string(expected.description),
            "message": .string("expected \(label) \(expected.description) time(s), got \(result.count)"),
            "requests": .array(result.matching.suffix(20).map(Self.json)),
            "near_misses": .array(result.nearMisses.map { miss in
                .object(["request": .string("\(miss.entry.method) \(miss.entry.url)"), "id": .integer(Int64(miss.entry.id)),
                         "rule": miss.entry.ruleID.map(JSONValue.string) ?? .null,
                         "reasons": .array(miss.reasons.map(JSONValue.string))])
            }),
        ]
        if entries.isEmpty { body["message"] = .string("expected \(label) \(expected.description) time(s), got 0: no requests were made") }
        return .json(.object(body), status: 422)
    }

    /// A refusal of a verification's fields: its `400`.
    struct Refusal: Error { let response: MockResponse }

    /// `times`, `at_least` or `at_most` (at most one; default at least once).
    static func expectedCount(_ o: [String: JSONValue]) -> Result<Verification.Expected, Refusal> {
        let counts = ["times", "at_least", "at_most"].filter { o[$0] != nil }
        guard counts.count <= 1 else { return .failure(Refusal(response: error("verify: give one of times, at_least, at_most", 400))) }
        guard let key = counts.first else { return .success(.atLeast(1)) }
        guard case .integer(let n)? = o[key], n >= 0 else { return .failure(Refusal(response: error("verify: \(key) must be an integer, 0 or more", 400))) }
        return .success(key == "times" ? .exactly(Int(n)) : key == "at_least" ? .atLeast(Int(n)) : .atMost(Int(n)))
    }

    /// `{"contract": "clean"}`: no request or answer broke the spec (`--spec`, `mock.spec`)
    /// since the start or the last journal clear; else `422` with each violation.
    func verifyContract(_ value: JSONValue, fields: Int) -> MockResponse {
        guard value == .string("clean"), fields == 1 else { return Self.error(#"verify: send {"contract": "clean"} alone"#, 400) }
        guard !engine.contractCheckers.isEmpty else {
            return Self.error("verify: no spec is checked: serve with --spec FILE or call mock.spec in the script", 400)
        }
        let summary = engine.contractSummary()
        guard case .integer(let total)? = summary["violations"], total > 0 else { return .json(.object(["ok": .bool(true), "count": .integer(0)])) }
        var violations: [JSONValue] = []
        guard case .array(let operations)? = summary["operations"] else { return .json(summary, status: 422) }
        for operation in operations {
            guard case .array(let list)? = operation["violations"] else { continue }
            for v in list {
                guard case .object(var o) = v else { continue }
                o["operation"] = operation["operation"] ?? .null
                violations.append(.object(o))
            }
        }
        let first = violations.first.flatMap { $0["errors"]?[0]?["message"]?.stringValue } ?? ""
        return .json(.object([
            "ok": .bool(false), "count": .integer(total),
            "message": .string("expected a clean contract, got \(total) violation(s); the first: \(first)"),
            "violations": .array(violations),
        ]), status: 422)
    }
}

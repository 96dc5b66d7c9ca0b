import Foundation
import MoonmockContract
import MoonmockCore
import MoonmockScript

/// One request `moonmock drift` sends to both sides.
struct Probe {
    let method: String
    /// Path and query.
    let target: String
    let headers: [(String, String)]
    let body: [UInt8]
    var operation: String?

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The admin API's journal (an array of entries) or a HAR file's entries.
    static func read(file: String) throws -> [Probe] {
        guard let data = FileManager.default.contents(atPath: file) else { throw Failure(description: "cannot read \(file)") }
        let value = try JSONValue(parsing: Array(data))
        var list: [JSONValue] = []
        if case .array(let entries) = value { list = entries }
        else if case .array(let entries)? = value["log"]?["entries"] { list = entries.compactMap { entry in
            guard let r = entry["request"] else { return nil }
            var headers: [String: JSONValue] = [:]
            if case .array(let hs)? = r["headers"] {
                for h in hs { if let n = h["name"]?.stringValue, let v = h["value"]?.stringValue, !n.hasPrefix(":") { headers[n] = .string(v) } }
            }
            return .object(["method": r["method"] ?? .string("GET"), "url": r["url"] ?? .string("/"), "headers": .object(headers),
                            "body": r["postData"]?["text"] ?? .string("")])
        } }
        else { throw Failure(description: "\(file): neither a journal (a JSON array of requests) nor a HAR file") }
        return list.compactMap { e in
            guard let method = e["method"]?.stringValue, let url = e["url"]?.stringValue else { return nil }
            var target = url
            if let scheme = url.range(of: "://") {
                let rest = url[scheme.upperBound...]
                target = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
            }
            var headers: [(String, String)] = []
            if case .object(let h)? = e["headers"] {
                for name in h.keys.sorted() where !["host", "content-length", "connection", "accept-encoding"].contains(name.lowercased()) {
                    if let v = h[name]?.stringValue { headers.append((name, v)) }
                }
            }
            let body = e["body_base64"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { Array($0) } ?? Array((e["body"]?.stringValue ?? "").utf8)
            return Probe(method: method, target: target, headers: headers, body: body)
        }
    }

    /// The requests the spec tests beside `script` send (each once, in order); `nil` without tests.
    static func from(tests script: String) -> [Probe]? {
        let files = Test.defaultSpecs(beside: script)
        guard !files.isEmpty else { return nil }
        let runner = SpecRunner(script: script)
        runner.collectRequests = true
        for file in files { _ = runner.run(specFile: file) }
        var seen: Set<String> = []
        return runner.requests.compactMap { r in
            let target = r.path + (r.rawQuery.map { "?" + $0 } ?? "")
            let key = r.method + " " + target + " " + String(decoding: r.body, as: UTF8.self)
            guard seen.insert(key).inserted else { return nil }
            let headers = r.headers.fields.filter { !["host", "content-length", "connection"].contains($0.name.lowercased()) }.map { ($0.name, $0.value) }
            return Probe(method: r.method, target: target, headers: headers, body: r.body)
        }
    }

    static func from(spec: OpenAPIContract) -> [Probe] {
        spec.sampleRequests().map { Probe(method: $0.method, target: $0.target, headers: $0.headers, body: $0.body, operation: $0.operation.id) }
    }

    /// A GET per GET rule of the script, parameters set to `1` (rules pinned to a host or
    /// ending in a wildcard are left out).
    static func from(rules: [Rule]) -> [Probe] {
        var seen: Set<String> = []
        return rules.compactMap { rule in
            guard rule.method == "GET" || rule.method == nil, rule.pattern.host == nil else { return nil }
            var path = ""
            for segment in rule.pattern.segments {
                switch segment {
                case .literal(let l): path += "/" + l
                case .parameter: path += "/1"
                case .rest: return nil
                }
            }
            if path.isEmpty { path = "/" }
            guard seen.insert(path).inserted else { return nil }
            return Probe(method: "GET", target: path, headers: [], body: [])
        }
    }
}

/// What differs between the mock's answer and the real API's for one request.
struct Report {
    let probe: Probe
    let mock: MockResponse
    let real: Answer
    var operation: String?
    var differences: [String] = []
    var mockViolations: [JSONValue] = []
    var realViolations: [JSONValue] = []

    var drift: Bool { !differences.isEmpty || !mockViolations.isEmpty || !realViolations.isEmpty }

    static func compare(_ probe: Probe, mock: MockResponse, real: Answer, contract: OpenAPIContract?, values: Bool) -> Report {
        var r = Report(probe: probe, mock: mock, real: real, operation: probe.operation)
        guard case .answer(let answer) = real else {
            if case .failure(let why) = real { r.differences.append("the real API did not answer: \(why)") }
            return r
        }
        if mock.fault != nil {
            r.differences.append("the mock answers with \(mock.proxy != nil ? "a proxy to another server" : "a fault or a stream"): not compared")
            return r
        }
        if mock.status != answer.status { r.differences.append("status: \(mock.status) in the mock, \(answer.status) in the real API") }
        let mockType = mediaType(mock.headers["Content-Type"]), realType = mediaType(answer.headers["Content-Type"])
        if mockType != realType { r.differences.append("content type: \(mockType.isEmpty ? "none" : mockType) in the mock, \(realType.isEmpty ? "none" : realType) in the real API") }
        if let contract {
            let request = MockRequest(method: probe.method, url: "http://localhost" + probe.target, headers: HTTPHeaders(probe.headers), body: probe.body)
            if var verdict = contract.checkRequest(request), verdict.operation != nil {
                r.operation = verdict.operation?.id
                var realVerdict = verdict
                contract.checkResponse(mock, to: request, &verdict)
                contract.checkResponse(answer, to: request, &realVerdict)
                r.mockViolations = verdict.response
                r.realViolations = realVerdict.response
                for name in contract.documentedHeaders(verdict.operation!, status: answer.status) {
                    let inMock = mock.headers[name] != nil, inReal = answer.headers[name] != nil
                    if inMock != inReal { r.differences.append("header \(name): \(inMock ? "in the mock, not in the real API" : "in the real API, not in the mock")") }
                }
            }
        }
        if mockType == realType, OpenAPIContract.isJSON(mockType), let m = try? JSONValue(parsing: mock.body), let a = try? JSONValue(parsing: answer.body) {
            r.differences += ShapeDiff.compare(mock: m, real: a, values: values)
        } else if values && mock.body != answer.body {
            r.differences.append("body: \(mock.body.count) bytes in the mock, \(answer.body.count) in the real API, not the same")
        }
        return r
    }

    static func mediaType(_ header: String?) -> String {
        (header ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
    }

    var label: String { "\(probe.method) \(probe.target)" + (operation.map { " (\($0))" } ?? "") }

    var text: String {
        var lines = [(drift ? "✘ " : "✔ ") + label]
        for d in differences { lines.append("    " + d) }
        for (side, list) in [("the mock", mockViolations), ("the real API", realViolations)] {
            for v in list {
                let at = v["instance_path"]?.stringValue ?? ""
                lines.append("    spec, \(side): \(at.isEmpty ? "" : at + ": ")\(v["message"]?.stringValue ?? "")")
            }
        }
        return lines.joined(separator: "\n")
    }

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "request": .string("\(probe.method) \(probe.target)"),
            "operation": operation.map(JSONValue.string) ?? .null,
            "mock": .object(["status": .integer(Int64(mock.status)), "content_type": .string(Self.mediaType(mock.headers["Content-Type"]))]),
            "differences": .array(differences.map(JSONValue.string)),
            "violations": .object(["mock": .array(mockViolations), "real": .array(realViolations)]),
            "drift": .bool(drift),
        ]
        switch real {
        case .answer(let a): o["real"] = .object(["status": .integer(Int64(a.status)), "content_type": .string(Self.mediaType(a.headers["Content-Type"]))])
        case .failure(let why): o["real"] = .object(["error": .string(why)])
        }
        return .object(o)
    }

    static func junit(_ reports: [Report]) -> String {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<testsuites>\n"
        out += #"  <testsuite name="moonmock drift" tests="\#(reports.count)" failures="\#(reports.filter(\.drift).count)">"# + "\n"
        for r in reports {
            out += #"    <testcase name="\#(JUnitReport.escape(r.label))" classname="drift""#
            if r.drift {
                let body = r.text.split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
                out += #"><failure message="\#(JUnitReport.escape(body.split(separator: "\n").first.map(String.init) ?? "drift"))">\#(JUnitReport.escape(body))</failure></testcase>"# + "\n"
            } else {
                out += "/>\n"
            }
        }
        return out + "  </testsuite>\n</testsuites>\n"
    }
}

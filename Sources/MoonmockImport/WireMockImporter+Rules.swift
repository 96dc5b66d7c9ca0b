import Foundation
import MoonmockCore

/// One WireMock mapping as a `mock.route{...}` (see ``WireMockImporter``).
struct WireMockWriter {
    let writer: ScriptWriter
    /// `__files/`, where `bodyFileName` is read.
    let files: URL
    var fixtures = Fixtures()
    /// What a converted mapping lost (a matcher with no equivalent that could be left out).
    var notes: [WriterNote] = []
    var usesScenarios = false
    private var answers = 0

    init(writer: ScriptWriter, files: URL) {
        self.writer = writer
        self.files = files
    }

    typealias Raised = WriterNote.Raised

    mutating func rule(_ m: WireMockImporter.Mapping) throws -> String {
        guard case .object(let request)? = m.json["request"] else { throw Raised("no request") }
        guard case .object(let response)? = m.json["response"] else { throw Raised("no response") }
        var fields: [String] = [], whens: [String] = []
        let method = request["method"]?.stringValue?.uppercased()
        if let method, method != "ANY" { fields.append("method = \(LuaLiteral.string(method))") }
        var path = "/"
        var pattern = "/*"
        var queryItems: [(String, String)] = []
        if let url = request["url"]?.stringValue {
            let parts = url.split(separator: "?", maxSplits: 1)
            path = String(parts.first ?? "/")
            if parts.count == 2 {
                for item in parts[1].split(separator: "&") {
                    let kv = item.split(separator: "=", maxSplits: 1)
                    queryItems.append((PercentDecoding.decode(kv[0]), kv.count == 2 ? PercentDecoding.decode(kv[1]) : ""))
                }
            }
            pattern = RoutePattern.isLiteral(path) ? path : "/*"
            if !RoutePattern.isLiteral(path) { whens.append("req.path == \(LuaLiteral.string(path))") }
        } else if let urlPath = request["urlPath"]?.stringValue {
            path = urlPath
            pattern = RoutePattern.isLiteral(path) ? path : "/*"
            if !RoutePattern.isLiteral(path) { whens.append("req.path == \(LuaLiteral.string(path))") }
        } else if let regex = request["urlPathPattern"]?.stringValue {
            guard let lua = RegexToLua.translate(regex, whole: true) else { throw Raised("urlPathPattern \(regex): no Lua pattern matches the same") }
            whens.append("req.path:find(\(LuaLiteral.string(lua))) ~= nil")
        } else if let regex = request["urlPattern"]?.stringValue {
            guard let lua = RegexToLua.translate(regex, whole: true) else { throw Raised("urlPattern \(regex): no Lua pattern matches the same") }
            whens.append("(req.url:match(\"^%a+://[^/]*(.*)$\") or \"\"):find(\(LuaLiteral.string(lua))) ~= nil")
        }
        fields.append("path = \(LuaLiteral.string(pattern))")
        var query = queryItems.map { "\(LuaLiteral.key($0.0)) = \(LuaLiteral.string($0.1))" }
        if case .object(let q)? = request["queryParameters"] {
            for name in q.keys.sorted() { query.append("\(LuaLiteral.key(name)) = \(try matcher(q[name]!, "queryParameters.\(name)", m.source))") }
        }
        if !query.isEmpty { fields.append("query = { " + query.joined(separator: ", ") + " }") }
        if case .object(let h)? = request["headers"] {
            let items = try h.keys.sorted().map { "\(LuaLiteral.key($0.lowercased())) = \(try matcher(h[$0]!, "headers.\($0)", m.source))" }
            fields.append("headers = { " + items.joined(separator: ", ") + " }")
        }
        if case .array(let patterns)? = request["bodyPatterns"] {
            for p in patterns { try bodyPattern(p, &fields, &whens) }
        }
        for key in request.keys.sorted() where !["method", "url", "urlPath", "urlPathPattern", "urlPattern", "queryParameters",
                                                  "headers", "bodyPatterns"].contains(key) {
            throw Raised("request.\(key) has no equivalent in mocks.lua")
        }
        if case .integer(let p)? = m.json["priority"] { fields.append("priority = \(10 - p)") }
        if let name = m.json["name"]?.stringValue { fields.append("name = \(LuaLiteral.string(name))") }

        var value = try answer(response, method: method ?? "GET", path: path, m.source)
        var prelude = ""
        if let scenario = m.json["scenarioName"]?.stringValue {
            usesScenarios = true
            if let required = m.json["requiredScenarioState"]?.stringValue {
                whens.append("scenario(\(LuaLiteral.string(scenario))) == \(LuaLiteral.string(required))")
            }
            if let next = m.json["newScenarioState"]?.stringValue {
                answers += 1
                let local = "answer_\(answers)"
                prelude = "local \(local) = \(value)\n"
                value = "function() mock.state:set(\(LuaLiteral.string("scenario:" + scenario)), \(LuaLiteral.string(next))) return \(local) end"
            }
        }
        if !whens.isEmpty { fields.append("when = function(req) return " + whens.joined(separator: " and ") + " end") }
        fields.append("respond = \(value)")
        return "-- from \(m.source)\n" + prelude + "mock.route {\n" + fields.map { "  \($0),\n" }.joined() + "}\n"
    }

    /// A query or header matcher: the Lua value for the rule's table.
    private mutating func matcher(_ spec: JSONValue, _ what: String, _ source: String) throws -> String {
        guard case .object(let o) = spec else { throw Raised("\(what): not a matcher object") }
        if o["caseInsensitive"] == .bool(true) {
            notes.append(WriterNote(source: source, message: "\(what): caseInsensitive is left out (the match is exact)"))
        }
        if let s = o["equalTo"]?.stringValue { return LuaLiteral.string(s) }
        if o["absent"] == .bool(true) { return "mock.absent" }
        if let s = o["contains"]?.stringValue { return "mock.match(\(LuaLiteral.string(RegexToLua.literal(s))))" }
        if let regex = o["matches"]?.stringValue {
            guard let lua = RegexToLua.translate(regex, whole: true) else { throw Raised("\(what): matches \(regex): no Lua pattern matches the same") }
            return "mock.match(\(LuaLiteral.string(lua)))"
        }
        throw Raised("\(what): \(o.keys.sorted().joined(separator: ", ")) has no equivalent in mocks.lua")
    }

    /// One of `bodyPatterns`.
    private func bodyPattern(_ p: JSONValue, _ fields: inout [String], _ whens: inout [String]) throws {
        if let json = p["equalToJson"] {
            let value = json.stringValue.flatMap { try? JSONValue(parsing: Array($0.utf8)) } ?? json
            fields.append("json = \(LuaLiteral.value(value, indent: "  "))")
        } else if let s = p["equalTo"]?.stringValue {
            fields.append("body = \(LuaLiteral.string(s))")
        } else if let s = p["contains"]?.stringValue {
            fields.append("body = mock.match(\(LuaLiteral.string(RegexToLua.literal(s))))")
        } else if let regex = p["matches"]?.stringValue {
            guard let lua = RegexToLua.translate(regex, whole: true) else { throw Raised("bodyPatterns matches \(regex): no Lua pattern matches the same") }
            fields.append("body = mock.match(\(LuaLiteral.string(lua)))")
        } else if let path = p["matchesJsonPath"]?.stringValue {
            // Simple paths only: $.a.b (a member that exists).
            let parts = path.hasPrefix("$.") ? path.dropFirst(2).split(separator: ".").map(String.init) : []
            guard !parts.isEmpty, parts.allSatisfy(LuaLiteral.isIdentifier) else {
                throw Raised("bodyPatterns matchesJsonPath \(path): only simple paths ($.a.b) convert")
            }
            var chain = "req.json", checks = ["req.json"]
            for part in parts { chain += "." + part; checks.append(chain) }
            whens.append("(" + checks.joined(separator: " and ") + ") ~= nil")
        } else {
            throw Raised("bodyPatterns: \(p) has no equivalent in mocks.lua")
        }
    }

    /// The response as a Lua value.
    private mutating func answer(_ r: [String: JSONValue], method: String, path: String, _ source: String) throws -> String {
        if let base = r["proxyBaseUrl"]?.stringValue { return "mock.proxy(\(LuaLiteral.string(base)))" }
        var headers = HTTPHeaders()
        if case .object(let h)? = r["headers"] {
            for name in h.keys.sorted() {
                switch h[name]! {
                case .string(let v): headers.add(name, v)
                case .array(let vs): for v in vs { if let v = v.stringValue { headers.add(name, v) } }
                default: break
                }
            }
        }
        var body: [UInt8] = []
        if let text = r["body"]?.stringValue {
            body = Array(text.utf8)
        } else if let json = r["jsonBody"] {
            body = json.encoded()
            if headers["content-type"] == nil { headers.add("Content-Type", "application/json") }
        } else if let b64 = r["base64Body"]?.stringValue {
            guard let data = Data(base64Encoded: b64) else { throw Raised("response.base64Body is not valid base64") }
            body = Array(data)
        } else if let file = r["bodyFileName"]?.stringValue {
            guard !file.split(separator: "/").contains(".."), let data = FileManager.default.contents(atPath: files.appendingPathComponent(file).path) else {
                throw Raised("response.bodyFileName \(file): no such file in __files/")
            }
            body = Array(data)
            if headers["content-type"] == nil, let ext = file.split(separator: ".").last, let type = ScriptWriter.impliedType[String(ext)] {
                headers.add("Content-Type", type)
            }
        }
        var exchange = RecordedExchange(request: MockRequest(method: method, url: "http://localhost" + path),
                                        status: r["status"].flatMap { if case .integer(let s) = $0 { return Int(s) } else { return nil } } ?? 200,
                                        headers: headers, body: body)
        if case .integer(let ms)? = r["fixedDelayMilliseconds"] { exchange.delayMilliseconds = Double(ms) }
        if let fault = r["fault"]?.stringValue {
            let faults = ["CONNECTION_RESET_BY_PEER": "connection_reset", "EMPTY_RESPONSE": "empty_response",
                          "MALFORMED_RESPONSE_CHUNK": "malformed_chunk"]
            guard let mapped = faults[fault] else { throw Raised("response.fault \(fault) has no equivalent (mock.fault has \(faults.values.sorted().joined(separator: ", ")))") }
            exchange.fault = mapped
        }
        for key in r.keys.sorted() where !["status", "headers", "body", "jsonBody", "base64Body", "bodyFileName", "fixedDelayMilliseconds",
                                           "fault", "proxyBaseUrl", "statusMessage"].contains(key) {
            notes.append(WriterNote(source: source, message: "response.\(key) is left out"))
        }
        return writer.response(exchange, RuleKey(exchange.request, keepHost: false), &fixtures)
    }
}

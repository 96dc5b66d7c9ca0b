import Foundation
import MoonmockCore

/// What makes two requests the same rule: method, path, query (its parameters and values, in
/// any order of names), and a GraphQL POST's operation.
struct RuleKey: Hashable, Sendable {
    let method: String
    let origin: String?
    let path: String
    let query: [String]
    let operation: String?

    init(_ request: MockRequest, keepHost: Bool, pinnedBase: String? = nil) {
        method = request.method
        var base = pinnedBase ?? request.origin
        while base.hasSuffix("/") { base.removeLast() }
        origin = keepHost ? base : nil
        path = request.path
        // Stable: the values of one name keep their order (`tag=a&tag=b` is not `tag=b&tag=a`).
        query = request.queryItems.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }
            .map { "\($0.element.name)=\($0.element.value ?? "")" }
        operation = request.method == "POST" ? RuleKey.operationName(request.body) : nil
    }

    /// The `operationName` of a GraphQL body (a JSON object naming one).
    static func operationName(_ body: [UInt8]) -> String? {
        guard let first = body.first(where: { $0 > 0x20 }), first == UInt8(ascii: "{"),
              case .object(let o)? = try? JSONValue(parsing: body) else { return nil }
        return o["operationName"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// What tells apart requests of one ``RuleKey`` that got different answers: a GraphQL
/// operation's variables, else the body (JSON compared as values, anything else as bytes).
enum BodyKey: Equatable {
    case none
    case variables(JSONValue)
    case json(JSONValue)
    case bytes([UInt8])

    init(_ request: MockRequest, graphQL: Bool) {
        let json = try? JSONValue(parsing: request.body)
        if graphQL {
            self = .variables(json?["variables"] ?? .object([:]))
        } else if request.body.isEmpty {
            self = .none
        } else if let json, case .object = json {
            self = .json(json)
        } else {
            self = .bytes(request.body)
        }
    }

    /// The `mock.route` field that matches it (`variables`, `json` or `body`); `nil` for none.
    var field: String? {
        switch self {
        case .none: return nil
        case .variables(let v): return "variables = \(LuaLiteral.value(v, indent: "  ", wrap: 100))"
        case .json(let v): return "json = \(LuaLiteral.value(v, indent: "  ", wrap: 100))"
        case .bytes(let b): return "body = \(LuaLiteral.quoted(b))"
        }
    }
}

/// Fixture files, named after the route (`get_users_7.json`) and unique within one script;
/// the same bytes twice are one file.
struct Fixtures {
    private var used: Set<String> = []
    private var byContent: [[UInt8]: String] = [:]
    private(set) var files: [(path: String, bytes: [UInt8])] = []

    mutating func path(for key: RuleKey, extension ext: String, bytes: [UInt8]) -> String {
        if let known = byContent[bytes], known.hasSuffix("." + ext) { return known }
        var stem = (key.operation.map { "graphql_" + $0 } ?? (key.method + key.path)).lowercased()
            .map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        while stem.contains("__") { stem = stem.replacingOccurrences(of: "__", with: "_") }
        stem = String(stem.trimmingCharacters(in: CharacterSet(charactersIn: "_")).prefix(60))
        if stem.isEmpty { stem = "body" }
        var name = "fixtures/\(stem).\(ext)", n = 2
        while used.contains(name) { name = "fixtures/\(stem)_\(n).\(ext)"; n += 1 }
        used.insert(name)
        byContent[bytes] = name
        files.append((name, bytes))
        return name
    }
}

extension ScriptWriter {
    /// The rules for one key: one rule when every answer was the same; else one rule per body
    /// (or variables) when those tell the answers apart, each a `mock.sequence` only where the
    /// same request really got different answers. A `304` to a revalidation is no answer of its
    /// own: the rule answers conditional requests by its answer's validators.
    func rules(_ key: RuleKey, _ exchanges: [RecordedExchange], _ fixtures: inout Fixtures) -> [String] {
        let answered = exchanges.filter { !Self.isRevalidation($0) }
        let kept = answered.isEmpty ? exchanges : answered
        let answers = kept.map { response($0, key, &fixtures) }
        if Set(answers).count == 1 { return [rule(key, .none, kept[0], [answers[0]], name: nil)] }
        var bodies: [(body: BodyKey, first: RecordedExchange, answers: [String])] = []
        for (exchange, answer) in zip(kept, answers) {
            let body = BodyKey(exchange.request, graphQL: key.operation != nil)
            if let i = bodies.firstIndex(where: { $0.body == body }) { bodies[i].answers.append(answer) } else {
                bodies.append((body, exchange, [answer]))
            }
        }
        if bodies.count == 1 { return [rule(key, .none, kept[0], answers, name: nil)] }
        return bodies.enumerated().map { n, group in
            rule(key, group.body, group.first, group.answers, name: n == 0 ? nil : "#\(n + 1)")
        }
    }

    /// A `304` the client got for a request with `If-None-Match` or `If-Modified-Since`.
    static func isRevalidation(_ exchange: RecordedExchange) -> Bool {
        exchange.status == 304 && (exchange.request.headers["if-none-match"] != nil || exchange.request.headers["if-modified-since"] != nil)
    }

    /// One rule: a comment, then `mock.get(...)`, `mock.graphql(...)` or `mock.route{...}`.
    /// `suffix` tells apart the names of rules for one request with different bodies.
    private func rule(_ key: RuleKey, _ body: BodyKey, _ first: RecordedExchange, _ given: [String], name suffix: String?) -> String {
        var answers = given
        // Equal answers in a row at the end: a sequence repeats its last answer anyway.
        while answers.count > 1 && answers[answers.count - 1] == answers[answers.count - 2] { answers.removeLast() }
        var comment = "-- " + (first.source.map { "from \($0)" } ?? first.recordedAt.map { "recorded \(Self.stamp($0))" } ?? "recorded")
        if answers.count > 1 { comment += "; answered differently \(answers.count) times: one answer per request, in order" }
        let respond = answers.count == 1 ? answers[0] : "mock.sequence {\n" + answers.map { "  \($0),\n" }.joined() + "}"
        let literalPath = RoutePattern.isLiteral(key.path)
        let pattern = literalPath ? key.path : "/*"
        var matchers: [String] = []   // the fields a verb's opts and mock.route share
        let queryText = key.query.joined(separator: "&")
        if !key.query.isEmpty || suffix != nil {
            let shown = key.operation.map { "graphql \($0)" } ?? "\(key.method) \(key.path)\(queryText.isEmpty ? "" : "?" + queryText)"
            matchers.append("name = \(LuaLiteral.string(shown + (suffix.map { " " + $0 } ?? "")))")
        }
        if !key.query.isEmpty { matchers.append("query = " + Self.queryTable(first.request)) }
        if options.exactQuery && key.operation == nil { matchers.append("exact_query = true") }
        if case .variables = body, let field = body.field { matchers.append(field) }
        let opts = matchers.isEmpty ? "" : ", { " + matchers.joined(separator: ", ") + " }"
        let needsRoute: Bool
        switch body {
        case .json, .bytes: needsRoute = true
        case .none, .variables: needsRoute = false
        }
        if key.origin == nil, literalPath, !needsRoute {
            if let operation = key.operation {
                var graphQLOpts = matchers
                if key.path != "/graphql" { graphQLOpts.append("path = \(LuaLiteral.string(key.path))") }
                let o = graphQLOpts.isEmpty ? "" : ", { " + graphQLOpts.joined(separator: ", ") + " }"
                return comment + "\nmock.graphql(\(LuaLiteral.string(operation)), \(respond)\(o))\n"
            }
            if let verb = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"].first(where: { $0 == key.method }) {
                return comment + "\nmock.\(verb.lowercased())(\(LuaLiteral.string(pattern)), \(respond)\(opts))\n"
            }
        }
        var fields: [String] = []
        fields.append("method = \(LuaLiteral.string(key.method))")
        fields.append(key.origin.map { "url = \(LuaLiteral.string($0 + pattern))" } ?? "path = \(LuaLiteral.string(pattern))")
        if let operation = key.operation { fields.append("graphql = \(LuaLiteral.string(operation))") }
        fields += matchers
        if case .variables = body {} else if let field = body.field { fields.append(field) }
        if !literalPath { fields.append("when = function(req) return req.path == \(LuaLiteral.string(key.path)) end") }
        fields.append("respond = \(respond)")
        return comment + "\nmock.route {\n" + fields.map { "  \($0),\n" }.joined() + "}\n"
    }

    /// `{ page = "2", tag = { "a", "b" } }`: a parameter given more than once lists its values.
    static func queryTable(_ request: MockRequest) -> String {
        var names: [String] = [], values: [String: [String]] = [:]
        for item in request.queryItems {
            if values[item.name] == nil { names.append(item.name) }
            values[item.name, default: []].append(item.value ?? "")
        }
        return "{ " + names.map { name in
            let v = values[name]!
            return "\(LuaLiteral.key(name)) = " + (v.count == 1 ? LuaLiteral.string(v[0]) : "{ " + v.map(LuaLiteral.string).joined(separator: ", ") + " }")
        }.joined(separator: ", ") + " }"
    }

    /// `2026-12-02 14:03:00 UTC`.
    public static func stamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return f.string(from: date)
    }
}

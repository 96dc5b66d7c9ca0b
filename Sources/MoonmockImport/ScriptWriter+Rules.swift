import Foundation
import MoonmockCore

/// What makes two requests the same rule: method, path, query, and a GraphQL POST's operation.
struct RuleKey: Hashable, Sendable {
    let method: String
    let origin: String?
    let path: String
    let query: [String]
    let operation: String?

    init(_ request: MockRequest, keepHost: Bool) {
        method = request.method
        origin = keepHost ? "\(request.scheme)://\(request.host)\(request.port.map { ":\($0)" } ?? "")" : nil
        path = request.path
        query = request.queryItems.map { "\($0.name)=\($0.value ?? "")" }
        operation = request.method == "POST" ? RuleKey.operationName(request.body) : nil
    }

    /// The `operationName` of a GraphQL body (a JSON object naming one).
    static func operationName(_ body: [UInt8]) -> String? {
        guard let first = body.first(where: { $0 > 0x20 }), first == UInt8(ascii: "{"),
              case .object(let o)? = try? JSONValue(parsing: body) else { return nil }
        return o["operationName"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Fixture file names after the route (`get_users_7.json`), unique within one script.
struct FixtureNames {
    private var used: Set<String> = []

    mutating func name(for key: RuleKey, extension ext: String) -> String {
        var stem = (key.operation.map { "graphql_" + $0 } ?? (key.method + key.path)).lowercased()
            .map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        while stem.contains("__") { stem = stem.replacingOccurrences(of: "__", with: "_") }
        stem = String(stem.trimmingCharacters(in: CharacterSet(charactersIn: "_")).prefix(60))
        if stem.isEmpty { stem = "body" }
        var name = "fixtures/\(stem).\(ext)", n = 2
        while used.contains(name) { name = "fixtures/\(stem)_\(n).\(ext)"; n += 1 }
        used.insert(name)
        return name
    }
}

extension ScriptWriter {
    /// One rule: a comment, then `mock.get(...)`, `mock.graphql(...)` or `mock.route{...}`.
    func rule(_ key: RuleKey, _ exchanges: [RecordedExchange], _ names: inout FixtureNames, _ files: inout [(String, [UInt8])]) -> String {
        var answers = exchanges.map { response($0, key, &names, &files) }
        // Equal answers in a row at the end: a sequence repeats its last answer anyway.
        while answers.count > 1 && answers[answers.count - 1] == answers[answers.count - 2] { answers.removeLast() }
        let first = exchanges[0]
        var comment = "-- " + (first.source.map { "from \($0)" } ?? first.recordedAt.map { "recorded \(Self.stamp($0))" } ?? "recorded")
        if answers.count > 1 { comment += "; answered differently \(answers.count) times: one answer per request, in order" }
        let respond = answers.count == 1 ? answers[0] : "mock.sequence {\n" + answers.map { "  \($0),\n" }.joined() + "}"
        let literalPath = RoutePattern.isLiteral(key.path)
        let pattern = literalPath ? key.path : "/*"
        var fields: [String] = []
        if key.origin == nil, key.query.isEmpty, literalPath {
            if let operation = key.operation {
                let path = key.path == "/graphql" ? "" : ", { path = \(LuaLiteral.string(key.path)) }"
                return comment + "\nmock.graphql(\(LuaLiteral.string(operation)), \(respond)\(path))\n"
            }
            if let verb = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"].first(where: { $0 == key.method }) {
                return comment + "\nmock.\(verb.lowercased())(\(LuaLiteral.string(pattern)), \(respond))\n"
            }
        }
        fields.append("method = \(LuaLiteral.string(key.method))")
        fields.append(key.origin.map { "url = \(LuaLiteral.string($0 + pattern))" } ?? "path = \(LuaLiteral.string(pattern))")
        if let operation = key.operation { fields.append("graphql = \(LuaLiteral.string(operation))") }
        if !key.query.isEmpty {
            let items = first.request.queryItems.reduce(into: [(String, String)]()) { list, item in
                if !list.contains(where: { $0.0 == item.name }) { list.append((item.name, item.value ?? "")) }
            }
            fields.append("query = { " + items.map { "\(LuaLiteral.key($0.0)) = \(LuaLiteral.string($0.1))" }.joined(separator: ", ") + " }")
            fields.append("name = \(LuaLiteral.string("\(key.method) \(key.path)?\(key.query.joined(separator: "&"))"))")
        }
        if !literalPath { fields.append("when = function(req) return req.path == \(LuaLiteral.string(key.path)) end") }
        fields.append("respond = \(respond)")
        return comment + "\nmock.route {\n" + fields.map { "  \($0),\n" }.joined() + "}\n"
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

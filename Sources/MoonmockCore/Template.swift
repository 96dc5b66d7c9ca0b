import Foundation

/// A response template: text with `{{ ... }}` placeholders that look values up, never run code.
///
/// Placeholders: `uuid`, `now` (ISO 8601), `timestamp` (epoch seconds), `state.KEY`,
/// `req.method|url|scheme|host|port|path|body|id`, `req.params.NAME`, `req.query.NAME`,
/// `req.headers.NAME`, `req.cookies.NAME`, `req.json.a.b.1` (array positions count from 1,
/// as in Lua), `fake.KIND` with `name=value` arguments (`{{fake.name}}`,
/// `{{fake.int min=1 max=9}}`, `{{fake.city locale=de}}`: ``Fake``, seeded per request). A missing
/// value renders as an empty string.
///
/// ```swift
/// let t = try Template(#"{"id":"{{uuid}}","sku":"{{req.json.sku}}"}"#)
/// let body = try t.render(request: req, params: [:], state: state, environment: env, escapeJSON: true)
/// ```
public struct Template: Sendable {
    enum Piece: Sendable {
        case text([UInt8])
        case value(path: [String])
        /// `fake.KIND` and its arguments (`locale` among them).
        case fake(kind: Fake.Kind, arguments: [String: JSONValue], locale: FakeLocale?)
    }

    let pieces: [Piece]

    /// The `NAME`s of the template's `{{req.params.NAME}}` placeholders.
    public var parameterNames: [String] {
        pieces.compactMap { piece in
            if case .value(let path) = piece, path.count == 3, path[0] == "req", path[1] == "params" { return path[2] }
            return nil
        }
    }

    /// A placeholder that names nothing Moonmock knows.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(_ source: String) throws {
        var pieces: [Piece] = []
        var rest = Substring(source)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { pieces.append(.text(Array(rest[..<open.lowerBound].utf8))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw ParseError(description: "template: '{{' without a closing '}}'")
            }
            let expr = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            if expr.hasPrefix("fake.") {
                pieces.append(try Template.fakePiece(expr))
            } else {
                let path = expr.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                try Template.validate(path, expr)
                pieces.append(.value(path: path))
            }
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.text(Array(rest.utf8))) }
        self.pieces = pieces
    }

    private static let requestFields: Set<String> = ["method", "url", "scheme", "host", "port", "origin", "path", "body", "id"]
    private static let requestTables: Set<String> = ["params", "query", "headers", "cookies", "json"]

    /// `fake.KIND name=value …`: checked now (a bad kind or argument is the template's error, at
    /// load), made per request.
    private static func fakePiece(_ expr: String) throws -> Piece {
        let words = expr.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let kind = String(words[0].dropFirst("fake.".count))
        var arguments: [String: JSONValue] = [:]
        var locale: FakeLocale?
        for word in words.dropFirst() {
            let pair = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, !pair[0].isEmpty else { throw ParseError(description: "template: {{\(expr)}}: '\(word)' is not name=value") }
            if pair[0] == "locale" {
                guard let l = FakeLocale(named: pair[1]) else { throw ParseError(description: "template: {{\(expr)}}: no locale '\(pair[1])' (en, de, fr, es, ja)") }
                locale = l
                continue
            }
            let text = pair[1].count >= 2 && pair[1].first == "\"" && pair[1].last == "\"" ? String(pair[1].dropFirst().dropLast()) : pair[1]
            arguments[pair[0]] = Int64(text).map(JSONValue.integer) ?? Double(text).map(JSONValue.double) ?? .string(text)
        }
        var trial = Fake(seed: 0)
        do { _ = try trial.value(kind, arguments) } catch { throw ParseError(description: "template: {{\(expr)}}: \(error)") }
        return .fake(kind: Fake.Kind(rawValue: kind)!, arguments: arguments, locale: locale)
    }

    private static func validate(_ path: [String], _ expr: String) throws {
        func bad(_ why: String) -> ParseError { ParseError(description: "template: {{\(expr)}}: \(why)") }
        guard let root = path.first, !root.isEmpty, !path.contains("") else { throw bad("empty name") }
        switch root {
        case "uuid", "now", "timestamp":
            if path.count != 1 { throw bad("'\(root)' has no fields") }
        case "state":
            if path.count != 2 { throw bad("use state.KEY") }
        case "req":
            guard path.count >= 2 else { throw bad("use req.FIELD") }
            if requestFields.contains(path[1]) {
                if path.count != 2 { throw bad("req.\(path[1]) has no fields") }
            } else if requestTables.contains(path[1]) {
                if path.count < 3 { throw bad("use req.\(path[1]).NAME") }
                if path[1] != "json" && path.count != 3 { throw bad("use req.\(path[1]).NAME") }
            } else {
                throw bad("unknown request field '\(path[1])'")
            }
        default:
            throw bad("unknown name '\(root)' (expected req., state., fake., uuid, now or timestamp)")
        }
    }

    /// Renders the template. With `escapeJSON`, inserted strings are escaped for a JSON string
    /// context and JSON values from `req.json` are inserted as JSON text. `fake`: the request's
    /// generator (``RequestContext/fake``); without one, a generator seeded by the request's id.
    public func render(request: MockRequest, params: [String: String], state: StateStore,
                       environment: MockEnvironment, escapeJSON: Bool, fake: RequestContext? = nil) throws -> [UInt8] {
        var out: [UInt8] = []
        var own: Fake?
        for piece in pieces {
            var value: JSONValue?
            switch piece {
            case .text(let t):
                out.append(contentsOf: t)
                continue
            case .value(let path):
                value = try lookup(path, request, params, state, environment)
            case .fake(let kind, let arguments, let locale):
                if let fake {
                    value = try fake.fakeValue(kind, arguments, locale: locale)
                } else {
                    if own == nil { own = Fake(seed: SeededRandom.mix(environment.seed, UInt64(request.id)), now: environment.now()) }
                    own!.locale = locale ?? .en
                    value = try own!.value(kind, arguments)
                }
            }
            switch value {
            case .none: break
            case .string(let s)?:
                if escapeJSON {
                    var quoted: [UInt8] = []
                    JSONValue.encodeString(s, into: &quoted)
                    out.append(contentsOf: quoted.dropFirst().dropLast())
                } else {
                    out.append(contentsOf: Array(s.utf8))
                }
            case let v?:
                out.append(contentsOf: v.encoded())
            }
        }
        return out
    }

    private func lookup(_ path: [String], _ req: MockRequest, _ params: [String: String],
                        _ state: StateStore, _ env: MockEnvironment) throws -> JSONValue? {
        switch path[0] {
        case "uuid": return .string(env.uuid())
        case "now": return .string(env.nowISO8601())
        case "timestamp": return .integer(Int64(env.now()))
        case "state": return try state.get(path[1])?.json
        default: break
        }
        switch path[1] {
        case "method": return .string(req.method)
        case "url": return .string(req.url)
        case "scheme": return .string(req.scheme)
        case "host": return .string(req.host)
        case "origin": return .string(req.origin)
        case "port": return req.effectivePort.map { .integer(Int64($0)) }
        case "path": return .string(req.path)
        case "body": return .string(req.bodyText)
        case "id": return .integer(Int64(req.id))
        case "params": return params[path[2]].map(JSONValue.string)
        case "query": return req.query(path[2]).map(JSONValue.string)
        case "headers": return req.headers[path[2]].map(JSONValue.string)
        case "cookies": return req.cookies[path[2]].map(JSONValue.string)
        case "json":
            var v = req.json
            for key in path.dropFirst(2) {
                if case .array(let a)? = v, let n = Int(key) { v = n >= 1 && n <= a.count ? a[n - 1] : nil } else { v = v?[key] }
            }
            return v
        default: return nil
        }
    }
}

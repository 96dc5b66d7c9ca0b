import Foundation
import MoonmockCore

/// A runtime rule given as JSON (admin API `POST /__moonmock/rules`, `moonmock serve --rules`,
/// `Moonmock.addRule(json:)`), checked field by field and turned into the `mock.route{...}` call
/// that means the same: one implementation of the semantics, the script's.
///
/// ```swift
/// let rule = try RuleJSON(JSONValue(parsing: Array(#"{"path": "/ping", "respond": {"text": "pong"}}"#.utf8)), at: "rule")
/// rule.luaSource(id: "runtime-1")   // mock.route { name = "runtime-1", path = "/ping", respond = mock.text("pong", {}) }
/// ```
public struct RuleJSON: Sendable {
    /// The rule as given (what listings show).
    public let json: JSONValue
    /// `name` when given: the rule's id, which a later rule of the same name replaces.
    public let name: String?
    /// Whether the rule answers with a `lua` handler (whose errors name `FIELD.lua:LINE`).
    public var hasLua: Bool { fields["lua"] != nil }
    private let fields: [String: JSONValue]

    static let keys = ["name", "method", "path", "url", "host", "query", "exact_query", "headers", "json", "body", "graphql",
                       "variables", "priority", "times", "respond", "lua"]
    static let respondKeys = ["status", "headers", "json", "text", "base64", "file", "delay", "fault", "bytes_per_second", "conditional"]
    static let faults = ["connection_reset", "empty_response", "malformed_chunk", "timeout", "dribble"]

    /// Checks `json`; `field` names it in errors (`rules[2]`).
    public init(_ json: JSONValue, at field: String) throws(RuleJSONError) {
        guard case .object(let o) = json else { throw .expected(field, "an object", json) }
        self.json = json
        fields = o
        try Self.checkKeys(o, Self.keys, at: field)
        for key in ["name", "method", "path", "url", "host", "graphql", "lua"] {
            if let v = o[key] {
                guard let s = v.stringValue, !s.isEmpty else { throw .expected("\(field).\(key)", "a non-empty string", v) }
            }
        }
        name = o["name"]?.stringValue
        if o["path"] != nil && o["url"] != nil { throw .conflict(field, "give path or url, not both") }
        if o["path"] == nil && o["url"] == nil && o["graphql"] == nil {
            throw .missing("\(field).path", "the path pattern to match (\"/users/:id\"), or url")
        }
        if let pattern = (o["path"] ?? o["url"])?.stringValue {
            do { _ = try RoutePattern(pattern) } catch { throw .invalid("\(field).\(o["path"] != nil ? "path" : "url")", "\(error)") }
        }
        if let m = o["method"]?.stringValue, !m.utf8.allSatisfy(Self.isTokenByte) {
            throw .invalid("\(field).method", "'\(m)' is not an HTTP method")
        }
        for key in ["query", "headers"] { try Self.checkMatchers(o[key], at: "\(field).\(key)", lists: key == "query") }
        if let e = o["exact_query"], case .bool = e {} else if let e = o["exact_query"] { throw .expected("\(field).exact_query", "true or false", e) }
        if let v = o["variables"], case .object = v {} else if let v = o["variables"] { throw .expected("\(field).variables", "an object", v) }
        if let body = o["body"] { try Self.checkTextMatcher(body, at: "\(field).body") }
        if let p = o["priority"], Self.integer(p) == nil { throw .expected("\(field).priority", "an integer", p) }
        if let t = o["times"], (Self.integer(t) ?? 0) < 1 { throw .expected("\(field).times", "a positive integer", t) }
        switch (o["respond"], o["lua"]) {
        case (nil, nil): throw .missing("\(field).respond", #"what to answer: {"status": 200, "json": {...}} (or "lua": a handler)"#)
        case (.some, .some): throw .conflict(field, "give respond or lua, not both")
        case (let respond?, nil): try Self.checkRespond(respond, at: "\(field).respond")
        default: break
        }
    }

    /// The `mock.route{...}` statement for this rule, named `id`. A `lua` handler comes first,
    /// on the chunk's first line, so that its errors give its own line numbers.
    public func luaSource(id: String) -> String {
        var out = ""
        var entries = ["name = \(Self.lua(.string(id)))"]
        if let lua = fields["lua"]?.stringValue {
            out = "local handler = (" + lua + "\n)\n"
            out += "if type(handler) ~= \"function\" then error(\"lua: must be a function(req), got \" .. type(handler), 0) end\n"
        }
        for key in ["method", "path", "url", "host", "graphql"] {
            if let v = fields[key] { entries.append("\(key) = \(Self.lua(v))") }
        }
        for key in ["priority", "times"] {
            if let v = fields[key].flatMap(Self.integer) { entries.append("\(key) = \(v)") }
        }
        for key in ["query", "headers"] {
            if case .object(let o)? = fields[key] {
                let items = o.keys.sorted().map { "[\(Self.lua(.string($0)))] = \(Self.matcher(o[$0]!))" }
                entries.append("\(key) = { \(items.joined(separator: ", ")) }")
            }
        }
        if fields["exact_query"] == .bool(true) { entries.append("exact_query = true") }
        if let variables = fields["variables"] { entries.append("variables = \(Self.decoded(variables))") }
        if let json = fields["json"] { entries.append("json = \(Self.decoded(json))") }
        if let body = fields["body"] { entries.append("body = \(Self.matcher(body))") }
        entries.append("respond = " + (fields["lua"] != nil ? "handler" : Self.response(fields["respond"] ?? .object([:]))))
        return out + "mock.route { " + entries.joined(separator: ", ") + " }\n"
    }

    // MARK: checks

    private static func checkKeys(_ o: [String: JSONValue], _ known: [String], at field: String) throws(RuleJSONError) {
        for key in o.keys.sorted() where !known.contains(key) {
            throw .unknown("\(field).\(key)", EditDistance.nearest(to: key, among: known), known)
        }
    }

    /// `lists`: a value may also be a non-empty list of strings (every value of a query parameter, in order).
    private static func checkMatchers(_ value: JSONValue?, at field: String, lists: Bool = false) throws(RuleJSONError) {
        guard let value else { return }
        guard case .object(let o) = value else { throw .expected(field, #"an object of names to values"#, value) }
        for (name, v) in o.sorted(by: { $0.key < $1.key }) {
            if lists, case .array(let items) = v {
                guard !items.isEmpty, items.allSatisfy({ $0.stringValue != nil }) else {
                    throw .expected("\(field).\(name)", "a non-empty list of strings", v)
                }
                continue
            }
            try checkTextMatcher(v, at: "\(field).\(name)")
        }
    }

    /// A string, `{"present": true}`, `{"absent": true}` or `{"match": "lua pattern"}`.
    private static func checkTextMatcher(_ v: JSONValue, at field: String) throws(RuleJSONError) {
        let expected = #"a string, {"present": true}, {"absent": true} or {"match": "lua pattern"}"#
        switch v {
        case .string: return
        case .object(let o) where o.count == 1:
            if o["present"] == .bool(true) || o["absent"] == .bool(true) { return }
            if o["match"]?.stringValue != nil { return }
            throw .expected(field, expected, v)
        default: throw .expected(field, expected, v)
        }
    }

    private static func checkRespond(_ v: JSONValue, at field: String) throws(RuleJSONError) {
        guard case .object(let o) = v else { throw .expected(field, #"an object such as {"status": 200, "json": {...}}"#, v) }
        try checkKeys(o, respondKeys, at: field)
        let bodies = ["json", "text", "base64", "file"].filter { o[$0] != nil }
        if bodies.count > 1 { throw .conflict(field, "give one body of json, text, base64 or file, not \(bodies.joined(separator: " and "))") }
        if let s = o["status"], !(100...599).contains(integer(s) ?? 0) { throw .expected("\(field).status", "an integer from 100 to 599", s) }
        for key in ["text", "file", "base64"] {
            if let b = o[key], b.stringValue == nil { throw .expected("\(field).\(key)", "a string", b) }
        }
        if let b = o["base64"]?.stringValue, Data(base64Encoded: b) == nil { throw .invalid("\(field).base64", "not valid base64") }
        if let h = o["headers"] {
            guard case .object(let hs) = h else { throw .expected("\(field).headers", "an object of header names to strings", h) }
            for (name, value) in hs.sorted(by: { $0.key < $1.key }) where value.stringValue == nil {
                // A list of strings: the field repeated (`Set-Cookie`, `Link`).
                if case .array(let items) = value, !items.isEmpty, items.allSatisfy({ $0.stringValue != nil }) { continue }
                throw .expected("\(field).headers.\(name)", "a string or a list of strings", value)
            }
        }
        if let d = o["delay"] { try checkDelay(d, at: "\(field).delay") }
        if let c = o["conditional"], case .bool = c {} else if let c = o["conditional"] { throw .expected("\(field).conditional", "true or false", c) }
        if let f = o["fault"] {
            guard let kind = f.stringValue, faults.contains(kind) else { throw .expected("\(field).fault", "one of \(faults.joined(separator: ", "))", f) }
        }
        if let r = o["bytes_per_second"], (number(r) ?? 0) <= 0 { throw .expected("\(field).bytes_per_second", "a positive number", r) }
    }

    private static func checkDelay(_ d: JSONValue, at field: String) throws(RuleJSONError) {
        let expected = #"milliseconds: a number, {"min": a, "max": b} or {"median": m, "sigma": s}"#
        switch d {
        case .integer, .double:
            if (number(d) ?? -1) < 0 { throw .expected(field, expected, d) }
        case .object(let o) where Set(o.keys) == ["min", "max"] || Set(o.keys) == ["median", "sigma"]:
            for (key, v) in o.sorted(by: { $0.key < $1.key }) where (number(v) ?? -1) < 0 {
                throw .expected("\(field).\(key)", "a number of milliseconds, 0 or more", v)
            }
        default: throw .expected(field, expected, d)
        }
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || "!#$%&'*+-.^_`|~".utf8.contains(b)
    }

    static func integer(_ v: JSONValue) -> Int64? {
        switch v {
        case .integer(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 1e15: return Int64(d)
        default: return nil
        }
    }

    static func number(_ v: JSONValue) -> Double? {
        switch v {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}

/// How a query item, header or body is compared.
public enum ValueMatcher: Sendable, CustomStringConvertible {
    case equals(String)
    case present
    case absent
    /// A matcher implemented elsewhere (a Lua pattern, a regular expression), with its description.
    case custom(String, @Sendable (String) -> Bool)
    /// A matcher that can also fail outright (a Lua pattern stopped by the budget): `nil` when
    /// the value matches, else a reason; a reason starting with ``Predicate/stoppedMarker`` makes
    /// the request fail with a `500` rather than fall through.
    case checked(String, @Sendable (String) -> String?)

    /// `nil` when `value` is accepted, else why not (`what` names the item, e.g. `query.page`).
    public func mismatch(_ value: String?, what: String) -> String? {
        switch self {
        case .equals(let want):
            guard let value else { return "\(what): expected \(want), got nothing" }
            return value == want ? nil : "\(what): expected \(want), got \(Self.brief(value))"
        case .present:
            return value == nil ? "\(what): expected present, got nothing" : nil
        case .absent:
            return value == nil ? nil : "\(what): expected absent, got \(Self.brief(value!))"
        case .custom(let description, let test):
            guard let value else { return "\(what): expected \(description), got nothing" }
            return test(value) ? nil : "\(what): expected \(description), got \(Self.brief(value))"
        case .checked(let description, let test):
            guard let value else { return "\(what): expected \(description), got nothing" }
            guard let failure = test(value) else { return nil }
            if failure.hasPrefix(Predicate.stoppedMarker) { return Predicate.stoppedMarker + "\(what): " + failure.dropFirst(Predicate.stoppedMarker.count) }
            return "\(what): expected \(description), got \(Self.brief(value))"
        }
    }

    public var description: String {
        switch self {
        case .equals(let s): return s
        case .present: return "present"
        case .absent: return "absent"
        case .custom(let d, _), .checked(let d, _): return d
        }
    }

    static func brief(_ s: String) -> String { s.count > 60 ? String(s.prefix(57)) + "..." : s }
}

/// One condition of a rule beyond method and path. `check` returns `nil` when the request
/// passes, else a reason a person can read ("json.operationName: expected A, got B").
public struct Predicate: Sendable {
    public let description: String
    /// Starts the reason of a condition that could not be decided because its code was stopped
    /// (a pattern past the instruction budget): the engine answers `500` with it instead of trying
    /// the next rule, as it would for a handler stopped the same way.
    public static let stoppedMarker = "\u{1}stopped: "
    /// The reason of a condition that waits (`mock.fetch` in `when`): its ``ConditionWait`` is
    /// in ``PendingCondition``, and the engine suspends the request until it decides.
    public static let waitMarker = "\u{1}waiting"
    /// Whether evaluating it runs user code (Lua); near-miss reports skip those when cheaper
    /// conditions already failed.
    public let isCustomCode: Bool
    public let check: @Sendable (MockRequest, [String: String]) -> String?
    /// The operation of a ``graphQL(operation:)`` predicate: a rule indexed under the same
    /// operation is only ever tried for requests that name it, so routing skips the check.
    let graphQLOperation: String?

    public init(_ description: String, isCustomCode: Bool = false, check: @escaping @Sendable (MockRequest, [String: String]) -> String?) {
        self.init(description, isCustomCode: isCustomCode, graphQLOperation: nil, check: check)
    }

    init(_ description: String, isCustomCode: Bool, graphQLOperation: String?, check: @escaping @Sendable (MockRequest, [String: String]) -> String?) {
        self.description = description
        self.isCustomCode = isCustomCode
        self.graphQLOperation = graphQLOperation
        self.check = check
    }

    /// A query item (first value; an item without `=` is `""`).
    public static func query(_ name: String, _ matcher: ValueMatcher) -> Predicate {
        Predicate("query.\(name) \(matcher)") { req, _ in matcher.mismatch(req.query(name), what: "query.\(name)") }
    }

    /// Every value of a query parameter, in order (`?tag=a&tag=b` is `["a", "b"]`).
    public static func queryValues(_ name: String, _ want: [String]) -> Predicate {
        let shown = "[" + want.joined(separator: ", ") + "]"
        return Predicate("query.\(name) = \(shown)") { req, _ in
            let got = req.queryItems.filter { $0.name == name }.map { $0.value ?? "" }
            return got == want ? nil : "query.\(name): expected \(shown), got [\(got.map { ValueMatcher.brief($0) }.joined(separator: ", "))]"
        }
    }

    /// `exact_query`: the request's query has no parameter but `declared` (those expecting
    /// absence excepted), and each of `single` once.
    public static func queryExactly(declared: Set<String>, single: Set<String>) -> Predicate {
        Predicate("query exactly [\(declared.sorted().joined(separator: ", "))]") { req, _ in
            var seen: [String: Int] = [:]
            for item in req.queryItems {
                guard declared.contains(item.name) else { return "query: unexpected parameter \(ValueMatcher.brief(item.name))" }
                seen[item.name, default: 0] += 1
            }
            for name in single.sorted() where (seen[name] ?? 0) > 1 {
                return "query.\(name): expected one value, got \(seen[name]!)"
            }
            return nil
        }
    }

    /// A GraphQL request whose `variables` are exactly `want` (an empty table: none, or `{}`).
    public static func graphQLVariables(_ want: JSONValue) -> Predicate {
        let shown = String(decoding: want.encoded(), as: UTF8.self)
        let empty: Bool
        switch want {
        case .object(let o): empty = o.isEmpty
        case .array(let a): empty = a.isEmpty
        default: empty = false
        }
        return Predicate("variables = \(shown)") { req, _ in
            guard let json = req.json else { return "variables: body is not JSON" }
            let got = json["variables"] ?? .null
            if got == want || (empty && (got == .null || got == .object([:]))) { return nil }
            return "variables: expected \(shown), got \(ValueMatcher.brief(String(decoding: got.encoded(), as: UTF8.self)))"
        }
    }

    /// A header, by case-insensitive name.
    public static func header(_ name: String, _ matcher: ValueMatcher) -> Predicate {
        let lower = name.asciiLowercased
        return Predicate("headers.\(lower) \(matcher)") { req, _ in matcher.mismatch(req.headers[lower], what: "headers.\(lower)") }
    }

    /// The raw body as text.
    public static func body(_ matcher: ValueMatcher) -> Predicate {
        Predicate("body \(matcher)") { req, _ in
            matcher.mismatch(req.body.isEmpty ? nil : req.bodyText, what: "body")
        }
    }

    /// The JSON body contains `subset` (every given key equal, recursively).
    public static func json(_ subset: JSONValue) -> Predicate {
        Predicate("json ⊇ \(String(decoding: subset.encoded(), as: UTF8.self))") { req, _ in
            guard let json = req.json else { return "json: body is not JSON" }
            return json.firstMismatch(subset, path: "json")
        }
    }

    /// A GraphQL request body whose `operationName` is `name`. (Batches are split into
    /// operations by the ``Engine``; an array body only explains itself here.)
    public static func graphQL(operation name: String) -> Predicate {
        Predicate("json.operationName = \(name)", isCustomCode: false, graphQLOperation: name) { req, _ in
            if req.graphQLOperationName == name { return nil }
            switch req.json {
            case .object(let o)?:
                let got = o["operationName"]?.brief ?? "nothing"
                return got == name ? nil : "json.operationName: expected \(name), got \(got)"
            case .array(let items)?:
                let names = items.compactMap { $0["operationName"]?.stringValue }
                return "json.operationName: expected \(name), got a batch [\(names.joined(separator: ", "))]"
            default:
                if req.body.isEmpty { return "json: body is empty" }
                // Not JSON at all (a body cut short, say): say where it breaks.
                do { _ = try JSONValue(parsing: req.body) } catch { return "json: body is not JSON (\(error))" }
                return "json: body is not a GraphQL JSON object"
            }
        }
    }
}

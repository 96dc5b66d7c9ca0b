/// Why a rule did not answer a request: the near-miss report of an unmatched request.
public struct NearMiss: Sendable, Equatable {
    public let ruleID: String
    public let location: String?
    /// Readable reasons, e.g. `"json.operationName: expected GetViewer, got GetUser"`.
    public let mismatches: [String]
    /// The checks that passed, e.g. `["method ok", "path ok"]`.
    public let passed: [String]

    /// `"method ok; path ok; json.operationName: expected GetViewer, got GetUser"`.
    public var summary: String { (passed + mismatches).joined(separator: "; ") }

    /// How far the rule is from matching; lower is closer. A wrong path weighs most.
    var distance: Int

    /// The `limit` rules closest to matching `request`.
    static func closest(to request: MockRequest, among rules: [Rule], fellThrough: Set<ObjectIdentifier>, limit: Int = 3) -> [NearMiss] {
        var all: [NearMiss] = []
        for rule in rules {
            all.append(explain(rule, request, fellThrough.contains(ObjectIdentifier(rule))))
        }
        let sorted = all.enumerated().sorted { a, b in
            a.element.distance != b.element.distance ? a.element.distance < b.element.distance : a.offset < b.offset
        }
        return sorted.prefix(limit).map(\.element)
    }

    static func explain(_ rule: Rule, _ request: MockRequest, _ fellThrough: Bool) -> NearMiss {
        var bad: [String] = [], good: [String] = []
        var distance = 0
        if rule.acceptsMethod(request.method) { good.append("method ok") } else {
            bad.append("method: expected \(rule.method ?? "any"), got \(request.method)"); distance += 2
        }
        if let origin = rule.pattern.originMatches(request) { bad.append(origin); distance += 2 }
        let params = rule.pattern.matchPath(request.pathSegments)
        if params != nil { good.append("path ok") } else {
            bad.append("path: expected \(pathText(rule.pattern)), got \(request.path)"); distance += 4
        }
        let cheapFailed = !bad.isEmpty
        for predicate in rule.predicates {
            if predicate.isCustomCode && (cheapFailed || !bad.isEmpty) { continue }
            if let reason = predicate.check(request, params ?? [:]) {
                if reason == Predicate.waitMarker {
                    // A condition that would wait is not waited for to explain a miss.
                    PendingCondition.take()?.drop()
                    bad.append("\(predicate.description): it waits (mock.fetch, mock.sleep), so it was not run for this explanation")
                } else {
                    bad.append(reason)
                }
                distance += 1
            }
        }
        if bad.isEmpty {
            if rule.isRetired {
                bad.append("retired after \(rule.times ?? 0) response(s) (times = \(rule.times ?? 0))")
            } else if fellThrough {
                bad.append("handler returned nil")
            } else {
                bad.append("not reached")
            }
            distance += 1
        }
        return NearMiss(ruleID: rule.id, location: rule.location, mismatches: bad, passed: good, distance: distance)
    }

    private static func pathText(_ p: RoutePattern) -> String {
        "/" + p.segments.map { s -> String in
            switch s {
            case .literal(let l): return l
            case .parameter(let n): return ":" + n
            case .rest(let n): return "*" + n
            }
        }.joined(separator: "/")
    }

    /// The JSON body of the 404 answer for an unmatched request.
    /// The methods of the rules whose pattern matches the request's path, when none of them
    /// takes its method (nor any method); empty otherwise (a `404`). A `GET` rule takes `HEAD`.
    static func allowedMethods(for request: MockRequest, among rules: [Rule]) -> [String] {
        var methods: Set<String> = []
        for rule in rules where rule.graphQLOperation == nil && rule.pattern.match(request) != nil {
            guard let method = rule.method else { return [] }
            if method == request.method || (method == "GET" && request.method == "HEAD") { return [] }
            methods.insert(method)
            if method == "GET" { methods.insert("HEAD") }
        }
        return methods.sorted()
    }

    public static func body(for request: MockRequest, _ misses: [NearMiss]) -> JSONValue {
        .object([
            "error": .string("no rule matched \(request.method) \(request.url)"),
            "request": .object(["method": .string(request.method), "url": .string(request.url)]),
            "closest": .array(misses.map(\.json)),
        ])
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "rule": .string(ruleID),
            "mismatches": .array(mismatches.map(JSONValue.string)),
            "passed": .array(passed.map(JSONValue.string)),
            "summary": .string(summary),
        ]
        if let location { o["location"] = .string(location) }
        return .object(o)
    }

    public static func == (a: NearMiss, b: NearMiss) -> Bool {
        a.ruleID == b.ruleID && a.mismatches == b.mismatches && a.passed == b.passed
    }
}

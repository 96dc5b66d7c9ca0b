
/// What a rule's responder sees: the request, the parameters its pattern captured, and the
/// host services. Log lines written here end up in the journal entry.
public final class RequestContext: @unchecked Sendable {
    public let request: MockRequest
    /// The parameters the rule's pattern captured.
    public let captures: RouteCaptures
    /// ``captures`` as a dictionary, built when first asked for.
    public private(set) lazy var params: [String: String] = captures.dictionary
    /// The rule, engine and lane are borrowed: they outlive the responder's call, and their
    /// reference counts are shared by every worker thread (a retain per request would move a
    /// cache line between cores). Use a context only while the responder runs.
    private let borrowedRule: Unmanaged<Rule>?
    private unowned(unsafe) let engine: Engine
    /// Lines from `mock.log` / `print`, in order. One request is handled by one thread at a time.
    public private(set) var logs: [String] = []

    init(request: MockRequest, captures: RouteCaptures, rule: Unmanaged<Rule>?, engine: Engine) {
        self.request = request
        self.captures = captures
        self.borrowedRule = rule
        self.engine = engine
    }

    /// The rule being run; `nil` while a predicate runs before any rule is chosen.
    public var rule: Rule? { borrowedRule?.takeUnretainedValue() }
    /// The engine's `mock.state`.
    public var state: StateStore { engine.state }
    /// Clock and random source.
    public var environment: MockEnvironment { engine.environment }

    /// Whether the rule being run requires a GraphQL operation (read without retaining the rule).
    public var ruleRequiresGraphQLOperation: Bool {
        borrowedRule?._withUnsafeGuaranteedRef { $0.graphQLOperation != nil } ?? false
    }

    /// Adds a `mock.log` / `print` line. A request keeps at most ``logLimitBytes`` of them (a
    /// handler logging in a loop cannot fill the journal's memory): past it the lines are cut,
    /// and a last line says so.
    public func log(_ line: String) {
        guard loggedBytes < Self.logLimitBytes else { return }
        let room = Self.logLimitBytes - loggedBytes
        if line.utf8.count <= room {
            loggedBytes += line.utf8.count
            logs.append(line)
            return
        }
        loggedBytes = Self.logLimitBytes
        let kept = String(decoding: line.utf8.prefix(room), as: UTF8.self)
        if !kept.isEmpty { logs.append(kept) }
        logs.append("… (log output cut: a request keeps at most \(Self.logLimitBytes / 1024) KiB of it)")
    }

    /// This request's fake data (`mock.fake`, `{{fake.…}}`): seeded by the engine's seed, the rule
    /// (its id and `file:line`) and how many answers the rule gave before, so that the same
    /// requests in the same order get the same values on every run, replica and machine.
    public lazy var fake: Fake = {
        var key = SeededRandom.seed("when")
        var count = UInt64(bitPattern: Int64(request.id))
        if let rule {
            key = SeededRandom.seed(rule.id + "@" + (rule.location ?? ""))
            count = UInt64(rule.hits)
        }
        return Fake(seed: SeededRandom.mix(engine.environment.seed ^ key, count), now: engine.environment.now())
    }()

    /// A value of ``fake`` in `locale` (the generator's own otherwise).
    public func fakeValue(_ kind: Fake.Kind, _ arguments: [String: JSONValue], locale: FakeLocale?) throws -> JSONValue {
        if let locale, locale != fake.locale {
            let kept = fake.locale
            fake.locale = locale
            defer { fake.locale = kept }
            return try fake.value(kind, arguments)
        }
        return try fake.value(kind, arguments)
    }

    /// The most `mock.log` output one request keeps.
    public static let logLimitBytes = 64 * 1024
    private var loggedBytes = 0

    /// A context for code that runs while matching (a `when` predicate), before a rule is chosen.
    public static func probe(request: MockRequest, params: [String: String], engine: Engine) -> RequestContext {
        var captures = RouteCaptures()
        for (name, value) in params { captures.append(name, value) }
        return RequestContext(request: request, captures: captures, rule: nil, engine: engine)
    }
}

/// Turns a matched request into a response, or `nil` for "not me, try the next rule".
public typealias Responder = @Sendable (RequestContext) throws -> MockResponse?

/// A handler failure reported to the client as a 500 with the detail (e.g. a Lua traceback).
public struct HandlerFailure: Error, CustomStringConvertible, Sendable {
    public let message: String
    public let detail: String?
    public init(message: String, detail: String? = nil) {
        self.message = message
        self.detail = detail
    }
    public var description: String { detail.map { message + "\n" + $0 } ?? message }
}

/// One mock rule: method, pattern and predicates to match, a responder, and its budget.
///
/// ```swift
/// let rule = try Rule(method: "GET", pattern: "/users/:id") { ctx in
///     .json(.object(["id": .string(ctx.params["id"]!)]))
/// }
/// engine.add(rule)
/// ```
public final class Rule: Sendable {
    /// The rule's name, else `"METHOD pattern"` (`"ANY pattern"` when any method matches).
    public let id: String
    /// Upper-cased method, or `nil` for any.
    public let method: String?
    public let pattern: RoutePattern
    public let predicates: [Predicate]
    /// Retire after this many responses.
    public let times: Int?
    /// Higher priorities are tried first; equal priorities keep registration order.
    public let priority: Int
    /// Where it was defined (`mocks.lua:12`), for listings and messages.
    public let location: String?
    /// The GraphQL `operationName` this rule requires, if any: the index uses it so that
    /// thousands of operations on one path route in constant time.
    public let graphQLOperation: String?
    /// The rule JSON a runtime rule was made from (admin API, `--rules`, `addRule(json:)`), with
    /// its `id`; `nil` for a script's rules and for Swift stubs.
    public let definition: JSONValue?
    /// Whether answering may wait for a shared store (a `times` budget, Lua code, a sequence, a
    /// template reading state): the socket server runs such rules off its event loops when the
    /// engine has a store. `false` only for answers known to be fixed.
    public let mayUseStore: Bool
    /// Whether the rule uses the shared store only from handler code that can wait for it
    /// (`mock.state` in a Lua handler): on an event loop with a store channel it runs on the loop.
    public let storeWaits: Bool
    /// The rule's own chaos (`chaos = {...}` in its options): decided before it answers.
    public let chaos: ChaosRunner?
    /// Answers kept while a state version stays (a `mock.resource` list): the engine answers
    /// from here before running the responder.
    public let answerCache: AnswerCache?
    /// A bidirectional streaming call (`mock.grpc` with `on_message`): over HTTP/2 the door
    /// routes it as soon as its headers arrive, and its messages flow both ways while it lasts.
    public let liveStream: Bool
    /// For traces, worked out once: the span name of a rule with a method (`GET /users/:id`),
    /// and ``location`` as its file and line (`code.file.path`, `code.line.number`).
    let spanName: String?
    let codeFile: String?
    let codeLine: Int?
    let responder: Responder
    private let claimed = AtomicInt(0)
    /// Responses served, counted per thread (see ``StripedCounter``).
    private let served = StripedCounter()

    public init(id: String? = nil, method: String?, pattern: RoutePattern, predicates: [Predicate] = [],
                times: Int? = nil, priority: Int = 0, location: String? = nil, graphQLOperation: String? = nil,
                definition: JSONValue? = nil, mayUseStore: Bool = true, storeWaits: Bool = false, chaos: ChaosRunner? = nil,
                answerCache: AnswerCache? = nil, liveStream: Bool = false, responder: @escaping Responder) {
        let method = Rule.normalizedMethod(method)
        self.id = id ?? Rule.defaultID(method: method, pattern: pattern)
        self.method = method
        self.pattern = pattern
        self.predicates = predicates
        self.times = times
        self.priority = priority
        self.location = location
        spanName = method.map { "\($0) \(pattern.source)" }
        if let location, let colon = location.lastIndex(of: ":"), let line = Int(location[location.index(after: colon)...]) {
            (codeFile, codeLine) = (String(location[..<colon]), line)
        } else {
            (codeFile, codeLine) = (nil, nil)
        }
        self.graphQLOperation = graphQLOperation
        self.definition = definition
        self.mayUseStore = mayUseStore || times != nil
        self.storeWaits = storeWaits && answerCache == nil
        self.chaos = chaos
        self.answerCache = answerCache
        self.liveStream = liveStream
        self.responder = responder
    }

    /// Convenience with a pattern string; throws ``RoutePattern/ParseError``.
    public convenience init(id: String? = nil, method: String?, pattern: String, predicates: [Predicate] = [],
                            times: Int? = nil, priority: Int = 0, responder: @escaping Responder) throws {
        self.init(id: id, method: method, pattern: try RoutePattern(pattern), predicates: predicates,
                  times: times, priority: priority, responder: responder)
    }

    /// The id a rule without a name gets: `"METHOD pattern"` (`"ANY pattern"` for any method).
    public static func defaultID(method: String?, pattern: RoutePattern) -> String {
        "\(normalizedMethod(method) ?? "ANY") \(pattern.source)"
    }

    /// Upper-cased, with `ANY` / `*` meaning any method (`nil`).
    static func normalizedMethod(_ method: String?) -> String? {
        method.map(\.asciiUppercased).flatMap { $0 == "ANY" || $0 == "*" ? nil : $0 }
    }

    /// Runs the responder (for wrappers such as a VM pool that forward to an equivalent rule).
    public func respond(_ context: RequestContext) throws -> MockResponse? { try responder(context) }

    /// Responses this rule has served.
    public var hits: Int { served.total }

    /// `true` once `times` responses have been served.
    public var isRetired: Bool {
        guard let times else { return false }
        return claimed.load(ordering: .relaxed) >= times
    }

    /// Reserves one use of the `times` budget; `false` when it is spent.
    func claim() -> Bool {
        guard let times else { return true }
        while true {
            let n = claimed.load(ordering: .relaxed)
            if n >= times { return false }
            if claimed.compareExchange(expected: n, desired: n + 1, ordering: .relaxed).exchanged { return true }
        }
    }

    /// Gives back a reservation when the responder fell through.
    func unclaim() {
        if times != nil { claimed.subtract(1, ordering: .relaxed) }
    }

    /// The store's counter of this rule's `times` budget: the same on every replica serving
    /// the same script (its id and `file:line`), or the same runtime rule.
    var budgetCounter: String { "times:\(id)@\(location ?? "runtime")" }

    /// Reserves one use of a `times` budget every replica shares; `false` when it is spent.
    func claim(in store: any SharedStore) throws -> Bool {
        guard let times else { return true }
        let n = try store.count(budgetCounter, by: 1)
        // Spent: the local count says so too (the rule lists as retired here).
        if n > Int64(times) {
            claimed.store(times, ordering: .relaxed)
            return false
        }
        claimed.add(1, ordering: .relaxed)
        return true
    }

    /// Notes a claim counted in the store without waiting (`n`, the counter after it): as
    /// ``claim(in:)`` does with the count it waits for.
    func noteSharedClaim(count n: Int64) -> Bool {
        guard let times else { return true }
        if n > Int64(times) {
            claimed.store(times, ordering: .relaxed)
            return false
        }
        claimed.add(1, ordering: .relaxed)
        return true
    }

    /// Gives back a shared reservation (best effort: a store that went away keeps it spent).
    func unclaim(in store: (any SharedStore)?) {
        guard times != nil else { return }
        unclaim()
        if let store { _ = try? store.count(budgetCounter, by: -1) }
    }

    func recordHit(stripe: Int) { served.add(1, stripe: stripe) }

    /// Takes back a hit (and its `times` reservation) of a batch that was not answered after all.
    func undoHit(stripe: Int, store: (any SharedStore)?) {
        served.add(-1, stripe: stripe)
        unclaim(in: store)
    }

    /// Method check for this rule; HEAD requests also reach GET rules.
    func acceptsMethod(_ m: String) -> Bool {
        guard let method else { return true }
        return method == m || (m == "HEAD" && method == "GET")
    }
}

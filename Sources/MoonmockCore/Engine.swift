import Foundation

/// Matches requests against rules, runs responders, and records the journal. Both transports
/// call ``handle(_:)`` with a ``MockRequest`` and deliver the ``Exchange`` they get back.
///
/// ```swift
/// let engine = Engine()
/// engine.add(try Rule(method: "GET", pattern: "/ping") { _ in .text("pong") })
/// let exchange = engine.handle(MockRequest(method: "GET", url: "http://localhost/ping"))
/// exchange.response.status   // 200
/// ```
public final class Engine: Sendable {
    public let state: StateStore
    /// The variants of rules that have them, and which one is active.
    public let variants = VariantStore()
    /// How many times each `mock.sequence` has answered (in memory; with `--store`, replicas
    /// count in the store): `reset()` rewinds them, as a reload does.
    public let sequenceCounts = SequenceCounts()
    /// Open WebSockets (`mock.websocket` routes on the server).
    public let websockets = WebSocketRegistry()
    /// Answers counted by rule, method, status and door, with their server time (`/__moonmock/metrics`).
    public let requestMetrics = RequestMetrics()
    /// A gRPC family call's journal entry decoded (its method, status and messages as JSON), set
    /// by the script that loads its schemas: the admin API and the dashboard show it.
    public let rpcDescriber = Locked<(@Sendable (JournalEntry) -> JSONValue?)?>(nil)
    /// Requests, reloads, switches and state changes, for watchers (`GET /__moonmock/events`).
    public let feed: EventFeed
    /// The Mock-Bundles the script declared and the folder each serves.
    public let bundles = BundleRegistry()
    /// The script's `mock.resource` collections (their items are in ``state``).
    public let resources = ResourceRegistry()
    /// Errors, latency, faults and rate limits switched on by the script or at runtime.
    public let chaos: ChaosController
    public let journal: Journal
    public let environment: MockEnvironment
    /// Webhooks and `mock.after` functions waiting to go, and the client they go with.
    public let outbox = Outbox()
    /// How long a handler may wait in all (`--handler-timeout`), in milliseconds: then a `504`.
    public let handlerTimeoutMilliseconds = AtomicInt(30_000)
    /// Runtime and script rules as one immutable snapshot: a request takes one lock and one
    /// retain to read both.
    let sets = Locked(RuleSets(runtime: .empty, script: .empty))
    /// Bumped with every change of `sets`: a thread re-reads its snapshot when this moved.
    let version = AtomicInt(0)
    private let nextID: AtomicInt
    /// What replicas share (`moonmock serve --store`); `nil`: this engine keeps everything itself.
    public let store: (any SharedStore)?
    /// Makes a span of each request and of each call its handler sends (``Tracer``); `nil`: none.
    public let tracer: Tracer?
    /// `tracer != nil`, as a flag the request path tests (no reference loaded and retained).
    let traces: Bool
    /// The script's `mock.cors{...}` (read by the socket server for requests with an `Origin`).
    private let corsPolicy = Locked<CORSPolicy?>(nil)
    private let corsDeclared = AtomicBool(false)
    /// The specs checked (``setContracts(_:from:)``), by source and as one list, and whether
    /// there is one; what came of the checks.
    let contracts = Locked<(commandLine: [any ContractChecking], script: [any ContractChecking])>(([], []))
    let contractList = Locked<[any ContractChecking]>([])
    let hasContracts = AtomicBool(false)
    let contractLedger = ContractLedger()
    /// Tells this engine's lanes from those of engines that lived at the same address before.
    let serial = Engine.serials.add(1, ordering: .relaxed).oldValue
    private static let serials = AtomicInt(0)
    /// Request ids a lane takes at a time.
    private static let idBlock = 256

    /// `feed`: the one a given `state` publishes to (a new one otherwise). `store`: what this
    /// engine shares with other replicas (its state, counters and journal), when it has one;
    /// a given `state` should then have it as its backend.
    public init(environment: MockEnvironment = .system, journalCapacity: Int = 1000, state: StateStore? = nil, feed: EventFeed? = nil,
                store: (any SharedStore)? = nil, tracer: Tracer? = nil) {
        self.tracer = tracer
        traces = tracer != nil
        let feed = feed ?? EventFeed()
        self.feed = feed
        self.environment = environment
        self.chaos = ChaosController(seed: environment.seed)
        self.store = store
        self.nextID = AtomicInt(store?.firstRequestID ?? 1)
        self.journal = Journal(capacity: journalCapacity, sink: store?.journalSink)
        outbox.attach(journal, feed)
        self.state = state ?? StateStore(clock: environment.now, feed: feed, backend: store)
        store?.onOtherReplicasEntries(wanted: { feed.isWatched }) { feed.publish(.otherReplicas(.init($0))) }
    }

    /// The CORS policy the script declared with `mock.cors{...}`; `nil` when it declared none.
    public var cors: CORSPolicy? {
        get { corsDeclared.load(ordering: .relaxed) ? corsPolicy.withLock { $0 } : nil }
        set {
            corsPolicy.withLock { $0 = newValue }
            corsDeclared.store(newValue != nil, ordering: .relaxed)
        }
    }

    /// Whether ``cors`` is set: one relaxed load, for the server to ask on every request.
    public var declaresCORS: Bool { corsDeclared.load(ordering: .relaxed) }

    // MARK: requests

    /// Routes `request` and records it in the journal.
    ///
    /// A GraphQL batch (a JSON array of operations with `operationName`) is answered operation
    /// by operation when every one of them has a rule: the response is the array of their
    /// JSON bodies, the delay the longest, and each operation gets its own journal entry.
    public func handle(_ request: MockRequest) -> Exchange {
        let started = DispatchTime.now().uptimeNanoseconds
        let lane = EngineLanes.lane(serial)
        var request = request
        request.id = takeID(lane)
        if traces { beginSpan(request, lane) }
        if lane.depth > 0 {
            // A responder asking this engine again on the same thread: the outer request still
            // borrows the lane's snapshot, so this one holds its own.
            let sets = self.sets.withLock { $0 }
            return handle(request, sets, lane, started)
        }
        lane.depth += 1
        defer { lane.depth -= 1 }
        return snapshot(lane)._withUnsafeGuaranteedRef { sets in handle(request, sets, lane, started) }
    }

    /// Whether answering `request` may wait for the shared store: a rule it could reach may
    /// (``Rule/mayUseStore``). Always `false` without a store. The socket server asks before it
    /// answers, to run such requests off its event loops.
    ///
    /// ```swift
    /// engine.mayUseStore(MockRequest(method: "GET", url: "http://x/count"))   // true: a Lua handler
    /// ```
    public func mayUseStore(_ request: MockRequest) -> Bool { mayUseStore(request, waitsAllowed: false) }

    /// Whether a rule answers `path` as a live streaming call (``Rule/liveStream``).
    public func isLiveStream(_ path: String) -> Bool {
        sets.withLock { $0.script.livePaths.contains(path) || $0.runtime.livePaths.contains(path) }
    }

    /// ``mayUseStore(_:)``, not counting rules whose store use waits (``Rule/storeWaits``) when
    /// `waitsAllowed` (the caller's thread has a ``StoreChannel``).
    public func mayUseStore(_ request: MockRequest, waitsAllowed: Bool) -> Bool {
        guard store != nil else { return false }
        func reaches(_ sets: RuleSets) -> Bool {
            request.withPathSegments { path in
                for set in [sets.runtime, sets.script] where !set.isEmpty {
                    for index in set.candidates(for: request, path) where set.borrowedRule(index)._withUnsafeGuaranteedRef({
                        $0.mayUseStore && !(waitsAllowed && $0.storeWaits)
                    }) {
                        return true
                    }
                }
                return false
            }
        }
        // The thread's snapshot, as a request reads it (no lock every loop takes), unless a
        // request of this thread borrows it now.
        let lane = EngineLanes.lane(serial)
        if lane.depth > 0 { return reaches(sets.withLock { $0 }) }
        return snapshot(lane)._withUnsafeGuaranteedRef { reaches($0) }
    }

    /// The rule sets as this thread last saw them, read again when they changed. The lane keeps
    /// them alive; the request borrows them.
    private func snapshot(_ lane: EngineLane) -> Unmanaged<RuleSets> {
        let current = version.load(ordering: .acquiring)
        if lane.version == current, let borrowed = lane.borrowed { return borrowed }
        let (fresh, at) = sets.withLock { ($0, version.load(ordering: .relaxed)) }
        lane.sets = fresh
        lane.borrowed = Unmanaged.passUnretained(fresh)
        lane.version = at
        return lane.borrowed!
    }

    private func takeID(_ lane: EngineLane) -> Int {
        if lane.nextID > lane.lastID {
            lane.nextID = nextID.add(Self.idBlock, ordering: .relaxed).oldValue
            lane.lastID = lane.nextID + Self.idBlock - 1
        }
        defer { lane.nextID += 1 }
        return lane.nextID
    }

    func handle(_ request: MockRequest, _ sets: RuleSets, _ lane: EngineLane, _ started: UInt64) -> Exchange {
        if let batch = graphQLBatch(request), let exchange = handleBatch(request, batch, sets, lane, started) {
            return exchange
        }
        // A spec to keep (`--spec`, `mock.spec`): the request checked before a rule runs, and
        // refused unchecked when the spec is enforced.
        var contract: (any ContractChecking, ContractVerdict)?
        if checksContracts, let checked = contractVerdict(request) {
            contract = checked
            if checked.1.enforces && !checked.1.request.isEmpty {
                return finish(request, Self.refusal(checked.1), nil, [], nil, [], started, lane, contract: contract)
            }
        }
        // Chaos on everything, a path or a host: decided before a rule runs (an error, a fault
        // or a 429 answers instead; latency is added to the answer).
        var chaos: ChaosMark?
        if self.chaos.isActive, let outcome = self.chaos.decide(request) {
            if let answer = outcome.answer { return finish(request, answer, nil, [], nil, [], started, lane, chaos: outcome.mark) }
            chaos = outcome.mark
        }
        var fellThrough: Set<ObjectIdentifier> = []
        if let routed = route(request, sets, lane, &fellThrough) {
            let id = routed.rule._withUnsafeGuaranteedRef { $0.id }
            if traces { Self.noteSpanRule(lane, routed.rule) }
            if let ruleChaos = routed.chaos {
                if chaos == nil { chaos = ruleChaos } else { chaos!.add(ruleChaos) }
            }
            if routed.chaosAnswered {
                return finish(request, routed.response, id, routed.logs, routed.error, [], started, lane, chaos: chaos)
            }
            if contract != nil {
                let location = routed.rule._withUnsafeGuaranteedRef { $0.location ?? $0.id }
                return finish(request, routed.response, id, routed.logs, routed.error, [], started, lane, contract: contract, rule: location,
                              chaos: chaos)
            }
            // A stream: positioned for this request (its journal id, a Last-Event-ID).
            if case .stream(let plan)? = routed.response.fault {
                var response = routed.response
                response.fault = .stream(plan.serving(request))
                return finish(request, response, id, routed.logs, routed.error, [], started, lane, chaos: chaos)
            }
            if case .websocket(let route)? = routed.response.fault {
                var response = routed.response
                response.fault = .websocket(route.serving(request))
                return finish(request, response, id, routed.logs, routed.error, [], started, lane, chaos: chaos)
            }
            // A file or text answer offering ranges, to a request naming one: 206 or 416.
            if let ranged = ByteRanges.answer(routed.response, to: request) {
                return finish(request, ranged, id, routed.logs, routed.error, [], started, lane, chaos: chaos)
            }
            return finish(request, routed.response, id, routed.logs, routed.error, [], started, lane, chaos: chaos)
        }
        let rules = sets.runtime.rules + sets.script.rules
        let misses = NearMiss.closest(to: request, among: rules, fellThrough: fellThrough)
        var response = MockResponse.json(NearMiss.body(for: request, misses), status: 404)
        if let rpc = RPCProtocol(contentType: request.headers["content-type"], connectHeader: request.headers["connect-protocol-version"] != nil) {
            // A call of a method no rule answers: UNIMPLEMENTED in the call's own protocol, the near miss as its message.
            let path = String(request.path.dropFirst())
            let near = misses.first.map { "; closest: \($0.ruleID) (\($0.summary))" } ?? ""
            let status = RPCStatus(code: 12, message: "no rule answers \(path)\(near)")
            let answer = RPCFraming.answer(rpc, messages: [], status: status, headers: [], trailers: [])
            return finish(request, answer, nil, [], nil, misses, started, lane, contract: contract, chaos: chaos)
        }
        // A path rules answer, only not with this method: 405 with the methods they take.
        let allow = NearMiss.allowedMethods(for: request, among: rules)
        if !allow.isEmpty {
            response.status = 405
            response.headers["Allow"] = allow.joined(separator: ", ")
        }
        return finish(request, response, nil, [], nil, misses, started, lane, contract: contract, chaos: chaos)
    }

    struct Routed {
        /// Borrowed: the request's rule sets keep it alive.
        let rule: Unmanaged<Rule>
        let response: MockResponse
        let logs: [String]
        let error: String?
        /// The rule's own chaos (`chaos = {...}` in its options), and whether it answered.
        var chaos: ChaosMark? = nil
        var chaosAnswered = false
    }

    /// The two rule sets of one request: runtime rules first, then script rules.
    final class RuleSets: Sendable {
        let runtime: RuleSet
        let script: RuleSet
        /// The two again, borrowed while routing (no reference count every worker writes).
        let borrowedRuntime: Unmanaged<RuleSet>
        let borrowedScript: Unmanaged<RuleSet>
        init(runtime: RuleSet, script: RuleSet) {
            self.runtime = runtime
            self.script = script
            borrowedRuntime = Unmanaged.passUnretained(runtime)
            borrowedScript = Unmanaged.passUnretained(script)
        }
    }

    /// Finds the first rule that answers; `nil` when none does.
    func route(_ request: MockRequest, _ sets: RuleSets, _ lane: EngineLane, _ fellThrough: inout Set<ObjectIdentifier>) -> Routed? {
        // The closure captures only trivial values: capturing the engine, the sets or the lane
        // would retain them for its context, and the first two are shared by every worker.
        let engine = Unmanaged.passUnretained(self), runtime = sets.borrowedRuntime, script = sets.borrowedScript
        let borrowedLane = Unmanaged.passUnretained(lane)
        return request.withPathSegments { path in
            engine._withUnsafeGuaranteedRef { engine in
                borrowedLane._withUnsafeGuaranteedRef { lane in
                    if let routed = runtime._withUnsafeGuaranteedRef({ engine.route(request, path, in: $0, lane, &fellThrough) }) {
                        return routed
                    }
                    return script._withUnsafeGuaranteedRef { engine.route(request, path, in: $0, lane, &fellThrough) }
                }
            }
        }
    }

    private func route(_ request: MockRequest, _ path: PathSegments, in set: RuleSet, _ lane: EngineLane,
                       _ fellThrough: inout Set<ObjectIdentifier>) -> Routed? {
        if set.isEmpty { return nil }
        for index in set.candidates(for: request, path) {
            // Borrowed: the set keeps its rules alive while this request holds the set.
            let rule = set.borrowedRule(index)
            if let routed = rule._withUnsafeGuaranteedRef({ attempt($0, rule, request, path, lane, &fellThrough) }) {
                return routed
            }
        }
        return nil
    }

    /// Runs `rule` when it matches; `nil` when it does not, or when its responder fell through.
    private func attempt(_ rule: Rule, _ borrowed: Unmanaged<Rule>, _ request: MockRequest, _ path: PathSegments, _ lane: EngineLane,
                         _ fellThrough: inout Set<ObjectIdentifier>) -> Routed? {
        guard let captures = rule.pattern.match(request, path) else { return nil }
        if let failure = failedPredicate(rule, request, captures, lane) {
            if failure == Predicate.waitMarker, let pending = PendingCondition.take() {
                // A condition that waits (mock.fetch in `when`): routed again once it has decided.
                return Routed(rule: borrowed, response: .fault(.suspended(conditionWait(rule, pending, request, lane))), logs: [], error: nil)
            }
            guard failure.hasPrefix(Predicate.stoppedMarker) else { return nil }
            // A condition whose code was stopped (a runaway pattern): a 500, as for a handler.
            let message = "condition of rule '\(rule.id)' stopped: " + failure.dropFirst(Predicate.stoppedMarker.count)
            rule.recordHit(stripe: lane.stripe)
            return Routed(rule: borrowed, response: .text(message + "\n", status: 500), logs: [], error: message)
        }
        if rule.times != nil, let store {
            // A budget shared by every replica: counted in the store — on a loop with its own
            // connection without blocking it (the request is routed again with the count).
            if let claimed = lane.memo?.claims[ObjectIdentifier(rule)] {
                guard claimed else { return nil }
            } else if rule.storeWaits, let channel = StoreChannels.current {
                return Routed(rule: borrowed, response: .fault(.suspended(budgetWait(rule, request, channel, lane))), logs: [], error: nil)
            } else {
                do {
                    guard try rule.claim(in: store) else { return nil }
                } catch {
                    rule.recordHit(stripe: lane.stripe)
                    return Routed(rule: borrowed, response: StoreUnavailable.response(String(describing: error)), logs: [], error: String(describing: error))
                }
            }
        } else {
            guard rule.claim() else { return nil }
        }
        var ruleChaos: ChaosMark?
        if let runner = rule.chaos, chaos.rulesApply {
            let outcome = runner.decide(request)
            if let answer = outcome.answer {
                rule.recordHit(stripe: lane.stripe)
                return Routed(rule: borrowed, response: answer, logs: [], error: nil, chaos: outcome.mark, chaosAnswered: true)
            }
            ruleChaos = outcome.mark
        }
        // A kept answer (a resource list whose collection did not change): no responder runs.
        var kept: StateValue?
        if let cache = rule.answerCache {
            do {
                let (version, answer) = try cache.lookup(request, state)
                if let answer {
                    rule.recordHit(stripe: lane.stripe)
                    return Routed(rule: borrowed, response: answer, logs: [], error: nil, chaos: ruleChaos)
                }
                kept = version
            } catch {}   // the store is away: the responder says so
        }
        let context = RequestContext(request: request, captures: captures, rule: borrowed, engine: self)
        var error: String?
        let response: MockResponse
        do {
            guard let r = try rule.responder(context) else {
                rule.unclaim(in: store)
                fellThrough.insert(ObjectIdentifier(rule))
                return nil
            }
            if r.fault == nil && (r.status < 200 || r.status > 999) {
                // 1xx are interim answers a transport sends on its own; a final one is 200...999.
                let message = "rule '\(rule.id)' answered status \(r.status): a response's status must be 200...999 (1xx are interim, sent by the server itself)"
                error = message
                response = .text(message + "\n", status: 500)
            } else {
                response = r
                if let kept, context.logs.isEmpty { rule.answerCache?.store(r, for: request, at: kept) }
            }
        } catch let failure as HandlerFailure {
            error = failure.description
            // The shared store was away: a 503 that says so (raised through Lua as text).
            if failure.description.contains(StoreUnavailable.marker) {
                response = StoreUnavailable.response("rule '\(rule.id)': " + failure.description.split(separator: "\n")[0])
            } else {
                response = .text("handler error in rule '\(rule.id)': \(failure.description)\n", status: 500)
            }
        } catch let unavailable as StoreUnavailable {
            error = unavailable.description
            response = StoreUnavailable.response("rule '\(rule.id)': \(unavailable)")
        } catch let other {
            error = String(describing: other)
            response = .text("handler error in rule '\(rule.id)': \(other)\n", status: 500)
        }
        rule.recordHit(stripe: lane.stripe)
        return Routed(rule: borrowed, response: consume response, logs: context.logs, error: error, chaos: ruleChaos)
    }
}

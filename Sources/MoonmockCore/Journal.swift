
/// One request as the engine saw it, matched or not.
public struct JournalEntry: Sendable {
    /// The request itself (bodies beyond ``Journal/maxBodyBytes`` are cut).
    public let request: MockRequest
    /// Seconds since 1970 when the request arrived.
    public let timestamp: Double
    /// The status answered (for `mock.proxy`, the upstream's once it answered; 0 for a fault).
    public internal(set) var status: Int
    /// The id of the rule that answered, or `nil` when none did.
    public let ruleID: String?
    /// How long the engine took (not including delays), in microseconds.
    public let durationMicros: Int
    /// The delay the transport applies, in milliseconds.
    public let delayMilliseconds: Double
    public let fault: Fault?
    /// Lines the script logged while handling this request.
    public let logs: [String]
    /// A handler error, with its traceback.
    public let error: String?
    /// For unmatched requests: the closest rules and why each did not match.
    public let nearMisses: [NearMiss]
    /// A streamed answer's transcript: what was sent, when, and how it ended.
    public internal(set) var stream: StreamTranscript?
    /// The answer's header fields, as the rule gave them (the transport adds its own).
    public internal(set) var responseHeaders = HTTPHeaders()
    /// The answer's body, its first ``Journal/responseBodyLimit`` bytes.
    public internal(set) var responseBody: [UInt8] = []
    /// The answer's whole body length (more than `responseBody` holds when it was cut).
    public internal(set) var responseBodyLength = 0
    /// When it was recorded (monotonic nanoseconds): the journal's order across threads.
    var sequence: UInt64 = 0
    /// What the API's spec says of the exchange (`--spec`, `mock.spec`):
    /// `{"operation", "request": [violations], "response": [violations]}`; `nil` without a spec.
    public internal(set) var contract: JSONValue?
    /// What chaos did to it: `"error_rate"`, `"latency"`, `"fault"` or `"rate_limit"`.
    public internal(set) var chaos: String?
    /// The replica that served it, in a journal replicas share (`nil`: this server's own).
    public internal(set) var replica: String?
    /// The handler's outbound calls (`mock.fetch`, webhooks), in the order they ended.
    public internal(set) var outbound: [OutboundCall] = []

    public var id: Int { request.id }
    public var method: String { request.method }
    /// The absolute URL (built when asked for, not on the request path).
    public var url: String { request.url }
    public var path: String { request.path }
    public var headers: HTTPHeaders { request.headers }
    public var body: [UInt8] { request.body }
    public var matched: Bool { ruleID != nil }
}

/// A bounded, thread-safe record of the last ``capacity`` requests; memory stays flat under
/// load.
///
/// Each thread records into a ring of its own stripe (see ``StripedCounter``), so that workers
/// on different cores never write the same lock, slot or entry; readers merge the rings in
/// time order and keep the newest `capacity` entries, which every ring of that size holds.
///
/// ```swift
/// engine.journal.entries().filter { !$0.matched }
/// ```
public final class Journal: Sendable {
    public static let maxBodyBytes = 64 * 1024

    private struct Ring {
        var slots: [JournalRecord?]
        var next = 0
        var count = 0

        /// Records oldest first.
        var ordered: [JournalRecord] {
            let start = (next - count + slots.count) % slots.count
            return (0..<count).compactMap { slots[(start + $0) % slots.count] }
        }
    }

    /// One ring and its lock, padded so that neighbouring stripes share no cache line.
    private final class Stripe: Sendable {
        let ring: Locked<Ring>
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
        init(capacity: Int) { ring = Locked(Ring(slots: Array(repeating: nil, count: capacity))) }
    }

    public let capacity: Int
    private let stripes: Stripes<Stripe>
    /// Statuses that came later than the record: the upstream's answers to `mock.proxy` requests, by request id.
    private let lateStatuses = Locked<[Int: Int]>([:])
    private let streams = Locked<[Int: StreamTranscript]>([:])
    /// The outbound calls of each request (`mock.fetch`, webhooks), by request id.
    private let outboundByRequest = Locked<[Int: [OutboundCall]]>([:])
    private let hasOutbound = AtomicBool(false)

    private let responseLimit = AtomicInt(64 * 1024)

    /// How much of each answer's body the journal keeps (0: none); 64 KB unless set
    /// (`moonmock serve --journal-body BYTES`).
    public var responseBodyLimit: Int {
        get { responseLimit.load(ordering: .relaxed) }
        set { responseLimit.store(max(0, newValue), ordering: .relaxed) }
    }

    /// Where each entry also goes as it is recorded (a journal replicas share).
    let sink: (any JournalSink)?

    public init(capacity: Int = 1000, sink: (any JournalSink)? = nil) {
        self.capacity = max(1, capacity)
        self.sink = sink
        stripes = Stripes { Stripe(capacity: max(1, capacity)) }
    }

    /// Records `request` and its outcome in the ring of `stripe` (the recording thread's);
    /// `time` (monotonic nanoseconds, the caller's clock reading) orders it among the other
    /// rings' entries. The record is written into `spare` when it can be (see
    /// ``JournalRecord/make(_:reusing:sequence:timestamp:status:ruleID:durationMicros:delayMilliseconds:fault:logs:error:nearMisses:)``),
    /// and the record it replaces in the ring is left in `spare` for the thread's next request.
    func record(at time: UInt64, _ request: MockRequest, timestamp: Double, status: Int, ruleID: String?, durationMicros: Int,
                delayMilliseconds: Double, fault: Fault?, logs: [String], error: String?, nearMisses: [NearMiss], stripe: Int,
                response: MockResponse, contract: JSONValue? = nil, chaos: ChaosKind? = nil, spare: inout JournalRecord?) {
        // Copied into one block before the lock. The answer's header list and body are kept by
        // reference (a fixed answer's are shared with its rule); a body past the limit, cut.
        let limit = responseLimit.load(ordering: .relaxed)
        let body = response.body.count <= limit ? response.body : Array(response.body.prefix(limit))
        let record: JournalRecord? = JournalRecord.make(request, reusing: &spare, sequence: time, timestamp: timestamp, status: status, ruleID: ruleID,
                                                        durationMicros: durationMicros, delayMilliseconds: delayMilliseconds,
                                                        fault: fault, logs: logs, error: error, nearMisses: nearMisses,
                                                        response: (response.headers, body, response.body.count), contract: contract, chaos: chaos)
        if let sink, let record { sink.recorded(RecordedEntry(record: record)) }
        let replaced: JournalRecord? = stripes.with(stripe) { s in
            s.ring.withLock { r in
                var slot = record
                swap(&slot, &r.slots[r.next])
                r.next = r.next + 1 == r.slots.count ? 0 : r.next + 1
                r.count = min(r.count + 1, r.slots.count)
                return slot
            }
        }
        spare = replaced
    }

    /// Entries oldest first, their requests rebuilt from the records.
    public func entries() -> [JournalEntry] {
        var all: [JournalRecord] = []
        for stripe in stripes.all { all += stripe.ring.withLock { $0.ordered } }
        if stripes.all.count > 1 { all.sort { $0.sequence < $1.sequence } }
        let late = lateStatuses.withLock { $0 }
        let transcripts = streams.withLock { $0 }
        let outbound = hasOutbound.load(ordering: .relaxed) ? outboundByRequest.withLock { $0 } : [:]
        guard !late.isEmpty || !transcripts.isEmpty || !outbound.isEmpty else { return all.suffix(capacity).map(\.entry) }
        return all.suffix(capacity).map { record in
            var entry = record.entry
            if let calls = outbound[entry.id] { entry.outbound = calls }
            if let status = late[entry.id] {
                entry.status = status
                if status == 101 {
                    // Upgraded: the route's 426 (its text, its type) was never sent.
                    entry.responseBody = []
                    entry.responseBodyLength = 0
                    entry.responseHeaders = HTTPHeaders()
                }
            }
            if let transcript = transcripts[entry.id] { entry.stream = transcript }
            return entry
        }
    }

    /// What a streamed answer sent, and how it ended (the doors call this as it goes and when
    /// it ends).
    public func recordStream(_ transcript: StreamTranscript, for id: Int) {
        streams.withLock { kept in
            if kept.count >= 4 * capacity { kept.removeAll(keepingCapacity: true) }
            kept[id] = transcript
        }
    }

    /// The status a request's answer turned out to have after it was recorded: what the
    /// upstream of a `mock.proxy` answered (the doors call this when it arrives).
    public func recordUpstreamStatus(_ status: Int, for id: Int) {
        lateStatuses.withLock { late in
            // Bounded: statuses of entries long pushed out of the journal are let go.
            if late.count >= 4 * capacity { late.removeAll(keepingCapacity: true) }
            late[id] = status
        }
    }

    /// An outbound call of request `id` ended (`mock.fetch`, a webhook).
    public func recordOutbound(_ call: OutboundCall, for id: Int) {
        outboundByRequest.withLock { kept in
            if kept.count >= 4 * capacity { kept.removeAll(keepingCapacity: true) }
            kept[id, default: []].append(call)
        }
        hasOutbound.store(true, ordering: .relaxed)
    }

    /// Every outbound call the journal keeps, oldest request first.
    public func outboundCalls() -> [OutboundCall] {
        guard hasOutbound.load(ordering: .relaxed) else { return [] }
        return outboundByRequest.withLock { $0 }.sorted { $0.key < $1.key }.flatMap(\.value)
    }

    public func clear() {
        outboundByRequest.withLock { $0.removeAll() }
        lateStatuses.withLock { $0.removeAll() }
        streams.withLock { $0.removeAll() }
        for stripe in stripes.all {
            stripe.ring.withLock { r in
                r.slots = Array(repeating: nil, count: r.slots.count)
                r.next = 0
                r.count = 0
            }
        }
    }

    /// Requests no rule answered, oldest first.
    public func unmatched() -> [JournalEntry] { entries().filter { !$0.matched } }

    /// How many kept requests the rule with this id answered.
    public func count(rule id: String) -> Int { entries().count { $0.ruleID == id } }

    /// How many kept requests had this method (any when `nil`) and a path matching `pattern`.
    public func count(method: String?, pattern: RoutePattern) -> Int {
        let m = method?.asciiUppercased
        return entries().count { e in
            (m == nil || e.method == m) && pattern.match(e.request) != nil
        }
    }
}

/// What every replica of a mock server shares when several serve one mock environment
/// (`moonmock serve --store redis://…`): `mock.state`, the counters behind `times` budgets and
/// `mock.sequence` positions, the switches (variants, stub endpoints, Mock-Bundle folders), the
/// runtime rules, and the journal. One server alone needs none of it: the engine's in-memory
/// stores serve then, and the engine never asks which it has.
///
/// A store that cannot answer throws ``StoreUnavailable``; the engine answers such a request
/// `503` with the reason, never with local state in its place.
///
/// ```swift
/// let engine = Engine(store: try RedisStore(url: "redis://127.0.0.1:6379"))
/// engine.state.incr("hits")   // counted in Redis, seen by every replica
/// ```
public protocol SharedStore: AnyObject, Sendable {
    // mock.state: each one atomic operation of the store.
    func stateGet(_ key: String) throws -> StateValue?
    func stateSet(_ key: String, _ value: StateValue?, ttl: Double?) throws
    func stateAdd(_ key: String, _ value: StateValue, ttl: Double?) throws -> Bool
    func stateIncr(_ key: String, by: StateValue, initial: StateValue) throws -> StateValue
    func stateDelete(_ key: String) throws -> Bool
    func stateSnapshot() throws -> [String: StateValue]
    func stateFlush() throws

    /// Adds `by` to the counter `name` (a rule's `times` budget, a sequence's position) and
    /// returns the new value; a counter starts at 0.
    func count(_ name: String, by: Int64) throws -> Int64

    /// Sets (or, with `nil`, removes) one shared setting of `group` and tells every replica.
    func putSetting(_ group: SharedSettings, _ key: String, _ value: String?) throws
    /// Every setting of `group`.
    func settings(_ group: SharedSettings) throws -> [String: String]
    /// Calls `handler` with a group another replica changed, and with every group after the
    /// store came back from an outage (what changed meanwhile is unknown).
    func onSettingsChanged(_ handler: @escaping @Sendable (SharedSettings) -> Void)

    /// Where the engine's journal sends each entry (`nil`: the journal stays local).
    var journalSink: (any JournalSink)? { get }
    /// Every replica's journal, oldest first.
    func journalEntries() throws -> [JournalEntry]
    /// Empties the shared journal.
    func clearJournal() throws
    /// Counters and switches back to the start (`POST /__moonmock/reset`); state is flushed apart.
    func reset() throws

    /// Calls `handler` with the entries other replicas journal, soon after they are written,
    /// whenever `wanted` says someone is watching (the dashboard's live list).
    func onOtherReplicasEntries(wanted: @escaping @Sendable () -> Bool, _ handler: @escaping @Sendable ([JournalEntry]) -> Void)

    /// The store's status for `GET /__moonmock/health`.
    var health: JSONValue { get }
    /// This replica's name, as its journal entries carry it.
    var replicaName: String { get }
    /// The first request id this replica uses: ids stay unique across replicas.
    var firstRequestID: Int { get }

    /// A connection of its own for an event loop (``StoreChannel``), or `nil` when the store
    /// has none (the loop then hands requests that use the store to worker threads).
    func makeChannel() -> (any StoreChannel)?
    /// How long the event loops' channels waited for the store's replies, summed over the
    /// channels (`nil`: the store has none).
    var channelLatency: StoreLatency? { get }
}

extension SharedStore {
    public func makeChannel() -> (any StoreChannel)? { nil }

    /// A store without channels: no command times.
    public var channelLatency: StoreLatency? { nil }

    /// A store without replicas to hear from: nothing to do.
    public func onOtherReplicasEntries(wanted: @escaping @Sendable () -> Bool, _ handler: @escaping @Sendable ([JournalEntry]) -> Void) {}
}

/// The groups of switches replicas share.
public enum SharedSettings: String, Sendable, CaseIterable {
    /// Rule → active variant (`""`: a stub endpoint with none).
    case variants
    /// Mock-Bundle rule → folder.
    case bundles
    /// Runtime rule id → its JSON (with its position).
    case rules
    /// `runtime` → the chaos switched on at runtime (its settings, profile and end), or `{"stopped": true}`.
    case chaos
}

/// Receives each journal entry as it is recorded (a shared journal's writer).
public protocol JournalSink: Sendable {
    func recorded(_ entry: RecordedEntry)
}

/// A journal entry as recorded: cheap to pass on (one reference); its ``entry`` is built when read.
public struct RecordedEntry: Sendable {
    let record: JournalRecord
    /// The entry, rebuilt from the record.
    public var entry: JournalEntry { record.entry }
}

/// The shared store could not answer (Redis down, or slower than `--store-timeout`).
///
/// ```swift
/// do { try engine.state.set("k", .integer(1)) } catch let e as StoreUnavailable { print(e) }
/// ```
public struct StoreUnavailable: Error, CustomStringConvertible, Sendable {
    /// Begins the description: a handler error carrying it (through Lua) is this failure.
    public static let marker = "the shared store is unavailable"
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "\(Self.marker): \(reason)" }

    /// The answer to a request that needed the store while it was away.
    public static func response(_ message: String) -> MockResponse {
        var response = MockResponse.text("503 Service Unavailable: \(message). This request needs the shared store (moonmock serve --store); requests that do not keep working, and the server reconnects by itself.\n", status: 503)
        response.headers["Retry-After"] = "1"
        return response
    }
}

/// Replies timed, as a histogram over ``RequestMetrics/bounds`` (then +Inf), and the commands
/// that got none (the connection failed or the reply was overdue).
public struct StoreLatency: Sendable, Equatable {
    public var buckets = [Int](repeating: 0, count: RequestMetrics.bounds.count + 1)
    public var micros = 0, count = 0, failures = 0
    public init() {}

    public mutating func record(micros: Int) {
        let seconds = Double(micros) / 1e6
        var bucket = 0
        while bucket < RequestMetrics.bounds.count && seconds > RequestMetrics.bounds[bucket] { bucket += 1 }
        buckets[bucket] += 1
        self.micros += micros
        count += 1
    }

    public mutating func add(_ other: StoreLatency) {
        for i in buckets.indices { buckets[i] += other.buckets[i] }
        micros += other.micros
        count += other.count
        failures += other.failures
    }
}

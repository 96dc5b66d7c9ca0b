import Foundation
import MoonmockCore

/// ``SharedStore`` on Redis (hiredis): replicas started with the same `--store` URL share one
/// mock environment. Keys live under `PREFIX:` — `s:KEY` for `mock.state`, `c:NAME` for the
/// counters of `times` budgets and sequences, `h:GROUP` hashes for switches and runtime rules,
/// `journal:NUMBER` (each replica's capped stream, listed in `journals`) — and changes are announced on the channel `PREFIX:changes`.
///
/// Each operation is one command (or one pipelined round trip) on a pooled blocking
/// connection, bounded by the store timeout; a subscriber thread follows other replicas'
/// switches, a writer thread streams the journal, a health thread pings every 500 ms.
///
/// ```swift
/// let store = try RedisStore(url: RedisURL("redis://127.0.0.1:6379"), timeout: 1)
/// let engine = Engine(journalCapacity: 1000, store: store)
/// ```
public final class RedisStore: SharedStore, @unchecked Sendable {
    // @unchecked: every mutable part is behind a lock (Locked) or owned by one thread.
    public let url: RedisURL
    let pool: RedisPool
    let journalCapacity: Int
    public let replicaName: String
    public let firstRequestID: Int
    let writer: JournalWriter
    /// The event loops' channels (``makeChannel()``), whose reply times the metrics sum.
    let channels = Locked<[LatencyTable]>([])
    let subscriber = Locked<[@Sendable (SharedSettings) -> Void]>([])
    /// Why Redis refused the journal's last append, if it did.
    let journalError = Locked<String?>(nil)
    /// Who hears of other replicas' entries (``onOtherReplicasEntries(wanted:_:)``), and the
    /// queue that reads them, in the order they were announced.
    let entryWatcher = Locked<(wanted: @Sendable () -> Bool, handler: @Sendable ([JournalEntry]) -> Void)?>(nil)
    let entryReader = DispatchQueue(label: "moonmock-redis-entries")

    /// Connects (throws ``StoreUnavailable`` when Redis does not answer within `timeout`
    /// seconds) and takes this replica's number.
    public init(url: RedisURL, timeout: Double = 1, journalCapacity: Int = 1000, replica: String? = nil) throws {
        self.url = url
        self.journalCapacity = max(1, journalCapacity)
        pool = RedisPool(url: url, timeoutMilliseconds: Int(timeout * 1000))
        let number: Int64 = try pool.with { c in
            guard case .integer(let n) = try c.command(["INCR", url.prefix + ":replicas"]) else {
                throw RedisConnectionError(description: "INCR of the replica counter did not answer a number")
            }
            return n
        }
        replicaName = replica ?? "replica-\(number)"
        journalStream = "\(url.prefix):journal:\(number)"
        // Ids unique across replicas (and restarts): a billion per replica number.
        firstRequestID = Int(number % 8_000_000) * 1_000_000_000 + 1
        writer = JournalWriter(capacity: self.journalCapacity)
        writer.start(self)
        startSubscriber()
        startHealth()
    }

    func key(_ kind: String, _ name: String) -> String { "\(url.prefix):\(kind):\(name)" }
    var changesChannel: String { url.prefix + ":changes" }
    /// The set of the replicas' journal streams, and this replica's (by its unique number).
    var journalSet: String { url.prefix + ":journals" }
    let journalStream: String

    // MARK: counters

    public func count(_ name: String, by: Int64) throws -> Int64 {
        let reply = try pool.run(["INCRBY", key("c", name), String(by)])
        guard case .integer(let n) = reply else { throw StoreUnavailable("\(url.display): INCRBY answered \(reply)") }
        return n
    }

    public func reset() throws {
        let counters = try scan(key("c", "*"))
        try pool.with { c in
            var commands = [["DEL"] + SharedSettings.allCases.map { key("h", $0.rawValue) }]
            for chunk in stride(from: 0, to: counters.count, by: 500) { commands.append(["DEL"] + counters[chunk..<min(chunk + 500, counters.count)]) }
            commands += SharedSettings.allCases.map { ["PUBLISH", changesChannel, $0.rawValue] }
            _ = try c.pipeline(commands)
        }
    }

    /// Every key matching `pattern` (SCAN, never KEYS: Redis keeps serving meanwhile).
    func scan(_ pattern: String) throws -> [String] {
        try pool.with { c in
            var cursor = "0", keys: [String] = []
            repeat {
                guard case .array(let parts) = try c.command(["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"]), parts.count == 2,
                      let next = parts[0].text, case .array(let found) = parts[1] else { break }
                keys += found.compactMap(\.text)
                cursor = next
            } while cursor != "0"
            return keys
        }
    }

    // MARK: health

    /// Asked now, not from the last ping: one PING (failing at once while Redis is known away
    /// and not yet due for another try), so a stopped Redis shows at the first look.
    public var health: JSONValue {
        _ = pool.ping()
        let s = pool.status.withLock { $0 }
        var o: [String: JSONValue] = [
            "kind": .string("redis"), "url": .string(url.display), "replica": .string(replicaName),
            "status": .string(s.up ? "ok" : "unavailable"),
            "timeout_ms": .integer(Int64(pool.timeoutMilliseconds)),
            "journal_backlog": .integer(Int64(writer.backlog)),
            "errors": .integer(Int64(s.errors)), "outages": .integer(Int64(s.outages)),
        ]
        if let latency = s.latencyMilliseconds, s.up { o["latency_ms"] = .double(latency) }
        if let error = s.error { o["error"] = .string(error) }
        if let refused = journalError.withLock({ $0 }) { o["journal_error"] = .string(refused) }
        if let since = s.downSince { o["unavailable_since"] = .double(since.timeIntervalSince1970) }
        return .object(o)
    }

    public var isAvailable: Bool { pool.status.withLock { $0.up } }

    private func startHealth() {
        let pool = self.pool
        let thread = Thread {
            while true {
                _ = pool.ping()
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        thread.name = "moonmock-redis-health"
        thread.start()
    }
}

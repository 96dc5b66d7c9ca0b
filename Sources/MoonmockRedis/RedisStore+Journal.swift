import Foundation
import MoonmockCore

/// The journal every replica writes to: a Redis Stream (`PREFIX:journal`) capped near the
/// journal's capacity. Requests never wait for it: the engine hands each entry to a writer
/// thread (before the response leaves), which encodes and appends what has queued in one
/// pipelined round trip. A read (`GET /__moonmock/requests`, `verify`) first makes sure every
/// replica's writer has caught up (``syncJournal()``), so a request whose answer a client has
/// seen is in what it reads, whichever replica served it. Entries come back in the order the
/// requests arrived (their timestamps), not the order the writers appended them.
extension RedisStore {
    public var journalSink: (any JournalSink)? { writer }

    public func journalEntries() throws -> [JournalEntry] {
        try syncJournal()
        let reply = try pool.with { try $0.command(["XREVRANGE", journalKey, "+", "-", "COUNT", String(journalCapacity)]) }
        guard case .array(let items) = reply else { return [] }
        var entries: [JournalEntry] = []
        entries.reserveCapacity(items.count)
        for item in items.reversed() {
            guard case .array(let parts) = item, parts.count == 2, case .array(let fields) = parts[1], fields.count >= 2,
                  case .string(let json) = fields[1], let entry = try? JournalEntry(sharedJSON: json) else { continue }
            entries.append(entry)
        }
        // Stable: entries with one timestamp keep the stream's order.
        return entries.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }.map(\.element)
    }

    public func clearJournal() throws {
        try syncJournal()
        _ = try pool.with { try $0.command(["DEL", journalKey]) }
    }

    /// A barrier across replicas: `sync:TOKEN` on the changes channel reaches every subscribed
    /// replica (PUBLISH answers how many); each pushes its name onto `PREFIX:sync:TOKEN` once its
    /// writer has appended what it had queued (``answerSync(_:)``). This waits for them all,
    /// within the store timeout; a replica that does not answer by then is not waited for.
    func syncJournal() throws {
        let deadline = Date().addingTimeInterval(Double(pool.timeoutMilliseconds) / 1000)
        let token = UUID().uuidString
        let list = key("sync", token)
        guard case .integer(let receivers) = try pool.run(["PUBLISH", changesChannel, "sync:" + token]) else { return }
        while Date() < deadline {
            guard case .integer(let answered) = try pool.run(["LLEN", list]), answered < receivers else { break }
            Thread.sleep(forTimeInterval: 0.0005)
        }
        _ = try? pool.run(["DEL", list])
    }

    /// This replica's side of ``syncJournal()``: off the subscriber thread, so switches keep flowing.
    func answerSync(_ token: String) {
        let list = key("sync", token), name = replicaName, timeout = Double(pool.timeoutMilliseconds) / 1000
        DispatchQueue.global().async { [writer, pool] in
            writer.waitUntilWritten(timeout: timeout)
            _ = try? pool.run([["RPUSH", list, name], ["EXPIRE", list, "10"]])
        }
    }

    /// Appends a batch; `false` when Redis is away (the batch is kept for the next try).
    func append(_ batch: [RecordedEntry]) -> Bool {
        let cap = String(journalCapacity)
        let commands = batch.map { ["XADD", journalKey, "MAXLEN", "~", cap, "*", "e", $0.entry.sharedJSON(replica: replicaName)] }
        return (try? pool.with { try $0.pipeline(commands) }) != nil
    }
}

/// The queue between the request threads and the stream: a lock and a condition, one thread.
final class JournalWriter: JournalSink, @unchecked Sendable {
    // @unchecked: the queue and counts are read and written only under `condition`.
    private let condition = NSCondition()
    private var queue: [RecordedEntry] = []
    private var enqueued = 0
    private var written = 0
    /// The most entries kept while Redis is away (older ones are dropped from the shared journal).
    private let limit = 100_000

    func recorded(_ entry: RecordedEntry) {
        condition.lock()
        queue.append(entry)
        enqueued += 1
        if queue.count > limit { queue.removeFirst(queue.count - limit); written = enqueued - queue.count }
        condition.signal()
        condition.unlock()
    }

    var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    func start(_ store: RedisStore) {
        let thread = Thread { [weak store, self] in
            while true {
                self.condition.lock()
                while self.queue.isEmpty { self.condition.wait() }
                let batch = Array(self.queue.prefix(512))
                self.condition.unlock()
                guard let store else { return }
                if store.append(batch) {
                    self.condition.lock()
                    self.queue.removeFirst(min(batch.count, self.queue.count))
                    self.written += batch.count
                    self.condition.broadcast()
                    self.condition.unlock()
                } else {
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
        }
        thread.name = "moonmock-redis-journal"
        thread.start()
    }

    /// Waits until what was queued before this call is in the stream (or `timeout` passed).
    func waitUntilWritten(timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        let target = enqueued
        while written < target && condition.wait(until: deadline) {}
        condition.unlock()
    }
}

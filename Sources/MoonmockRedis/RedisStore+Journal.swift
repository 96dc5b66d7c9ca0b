import Foundation
import MoonmockCore

/// The journal every replica writes to: a Redis Stream per replica (`PREFIX:journal:NUMBER`,
/// listed in the set `PREFIX:journals`), each keeping that replica's newest `--journal N`
/// entries, so that together they hold the newest N of all. Requests never wait for it: the
/// engine hands each entry to a writer thread (``JournalWriter``), which appends what has
/// queued every 100 ms, or at once when a reader asks. A read (`GET /__moonmock/requests`,
/// `verify`) first makes sure every replica's writer has caught up (``syncJournal()``), so a
/// request whose answer a client has seen is in what it reads, whichever replica served it;
/// it merges the streams and lists the newest N in the order the requests arrived.
extension RedisStore {
    public var journalSink: (any JournalSink)? { writer }

    public func journalEntries() throws -> [JournalEntry] {
        try syncJournal()
        let streams = try journalStreams()
        // Each replica's newest N: together they hold the newest N of all.
        let count = String(journalCapacity)
        let replies = streams.isEmpty ? [] : try pool.with { c in try c.pipeline(streams.map { ["XREVRANGE", $0, "+", "-", "COUNT", count] }) }
        var entries: [JournalEntry] = []
        for case .array(let items) in replies { entries += Self.decode(items.reversed()) }
        // Stable: entries with one timestamp keep the streams' order.
        let sorted = entries.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }.map(\.element)
        return Array(sorted.suffix(journalCapacity))
    }

    /// The journal entries in stream items (`[id, [field, value, …]]`), in the items' order;
    /// what does not parse is skipped.
    static func decode<Items: Sequence<RedisReply>>(_ items: Items) -> [JournalEntry] {
        var entries: [JournalEntry] = []
        for case .array(let item) in items where item.count == 2 {
            guard case .array(let fields) = item[1] else { continue }
            for i in stride(from: 0, to: fields.count - 1, by: 2) where fields[i] == .string(Array("e".utf8)) {
                if case .string(let json) = fields[i + 1], let entry = try? JournalEntry(sharedJSON: json) { entries.append(entry) }
            }
        }
        return entries
    }

    public func clearJournal() throws {
        try syncJournal()
        let streams = try journalStreams()
        _ = try pool.with { try $0.command(["DEL", journalSet] + streams) }
    }

    /// Every replica's stream (those that have written since the last clear).
    private func journalStreams() throws -> [String] {
        guard case .array(let members) = try pool.run(["SMEMBERS", journalSet]) else { return [] }
        return members.compactMap(\.text).sorted()
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

    /// Appends a batch (oldest first, newer than any before) to this replica's stream, an entry
    /// each (field `e`: its shared JSON), in one pipelined round trip; the stream is capped at
    /// about `--journal N` (Redis's `MAXLEN ~`, which keeps at least N). `false` when Redis is
    /// away (the batch is kept for the next try).
    func append(_ batch: [RecordedEntry]) -> Bool {
        let cap = String(journalCapacity)
        var commands = [["SADD", journalSet, journalStream]]
        commands.reserveCapacity(batch.count + 1)
        for recorded in batch {
            commands.append(["XADD", journalStream, "MAXLEN", "~", cap, "*", "e", recorded.entry.sharedJSON(replica: replicaName)])
        }
        guard let replies = try? pool.with({ try $0.pipeline(commands) }) else { return false }
        // Refused (a key of another type, a read-only replica): said in health, not retried.
        let refused = replies.lazy.compactMap { reply -> String? in if case .error(let why) = reply { return why } else { return nil } }.first
        journalError.withLock { $0 = refused }
        // Other replicas' dashboards show these live: which ids, on the changes channel.
        if replies.count > 1, let first = replies[1].text, let last = replies[replies.count - 1].text {
            _ = try? pool.run(["PUBLISH", changesChannel, "journal:\(first) \(last) \(journalStream)"])
        }
        return true
    }

    public func onOtherReplicasEntries(wanted: @escaping @Sendable () -> Bool, _ handler: @escaping @Sendable ([JournalEntry]) -> Void) {
        entryWatcher.withLock { $0 = (wanted, handler) }
    }

    /// `FIRST LAST STREAM` from the changes channel: another replica appended those entries.
    /// Read (off the subscriber thread) only while someone here watches.
    func heardEntries(_ message: String) {
        let parts = message.split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count == 3, parts[2] != journalStream, let watcher = entryWatcher.withLock({ $0 }), watcher.wanted() else { return }
        entryReader.async { [pool] in
            guard case .array(let items)? = try? pool.run(["XRANGE", parts[2], parts[0], parts[1]]) else { return }
            let entries = Self.decode(items)
            if !entries.isEmpty { watcher.handler(entries) }
        }
    }
}

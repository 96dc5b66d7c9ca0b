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
        // Each stream holds at most the capacity plus one batch (``append(_:)`` trims exactly).
        let replies = streams.isEmpty ? [] : try pool.with { c in try c.pipeline(streams.map { ["XRANGE", $0, "-", "+"] }) }
        var entries: [JournalEntry] = []
        for case .array(let items) in replies {
            for case .array(let parts) in items where parts.count == 2 {
                guard case .array(let fields) = parts[1] else { continue }
                for i in stride(from: 0, to: fields.count - 1, by: 2) where fields[i] == .string(Array("e".utf8)) {
                    guard case .string(let lines) = fields[i + 1] else { continue }
                    for line in lines.split(separator: UInt8(ascii: "\n")) {
                        if let entry = try? JournalEntry(sharedJSON: Array(line)) { entries.append(entry) }
                    }
                }
            }
        }
        // Stable: entries with one timestamp keep the streams' order.
        let sorted = entries.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }.map(\.element)
        return Array(sorted.suffix(journalCapacity))
    }

    public func clearJournal() throws {
        try syncJournal()
        let streams = try journalStreams()
        _ = try pool.with { try $0.command(["DEL", journalSet] + streams.flatMap { [$0, $0 + ":sizes", $0 + ":total"] }) }
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

    /// Appends a batch (oldest first, newer than any before) to this replica's stream as one
    /// entry (`n`: how many, `e`: their shared JSON, a line each), then drops the oldest
    /// entries while the rest still hold the journal's capacity: the stream keeps this
    /// replica's newest `--journal N` entries and at most one batch more.
    /// `false` when Redis is away (the batch is kept for the next try).
    func append(_ batch: [RecordedEntry]) -> Bool {
        var lines: [UInt8] = []
        for (i, recorded) in batch.enumerated() {
            if i > 0 { lines.append(UInt8(ascii: "\n")) }
            lines.append(contentsOf: recorded.entry.sharedJSON(replica: replicaName).utf8)
        }
        let command = ["EVAL", Self.appendScript, "4", journalStream, journalStream + ":sizes", journalStream + ":total", journalSet,
                       String(journalCapacity), String(batch.count), String(decoding: lines, as: UTF8.self)]
        guard let reply = try? pool.with({ try $0.command(command) }) else { return false }
        // Refused (a Redis without scripting, a key of another type): said in health, not retried.
        journalError.withLock { e in if case .error(let why) = reply { e = why } else { e = nil } }
        return true
    }

    /// KEYS: the stream, a list of its entries' ids and sizes (oldest first), their total, the set of streams.
    /// ARGV: capacity, this batch's size, its lines.
    static let appendScript = """
        if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('DEL', KEYS[2], KEYS[3]) end
        redis.call('SADD', KEYS[4], KEYS[1])
        local id = redis.call('XADD', KEYS[1], '*', 'n', ARGV[2], 'e', ARGV[3])
        redis.call('RPUSH', KEYS[2], id .. ' ' .. ARGV[2])
        local total = redis.call('INCRBY', KEYS[3], ARGV[2])
        local cap = tonumber(ARGV[1])
        while true do
          local oldest = redis.call('LINDEX', KEYS[2], 0)
          if not oldest then break end
          local at = string.find(oldest, ' ', 1, true)
          local n = tonumber(string.sub(oldest, at + 1))
          if total - n < cap then break end
          redis.call('XDEL', KEYS[1], string.sub(oldest, 1, at - 1))
          redis.call('LPOP', KEYS[2])
          total = redis.call('DECRBY', KEYS[3], n)
        end
        return total
        """
}

import Foundation
import MoonmockCore

/// The queue between the request threads and the shared journal: a lock, a condition, one thread.
///
/// Requests only append to the queue (no wake-up, no encoding). The writer thread wakes every
/// ``interval``, or at once when a reader waits (``waitUntilWritten(timeout:)``), and appends
/// what queued since — only its newest `capacity` entries: older ones would be trimmed from the
/// stream anyway, as the stream keeps the newest `capacity` of all replicas. So under load a
/// replica encodes at most `capacity` entries per interval, not one per request. A replica
/// that crashes loses at most its last interval's entries from the shared journal.
final class JournalWriter: JournalSink, @unchecked Sendable {
    // @unchecked: the queue, the counts and the flag are read and written only under `condition`.
    private let condition = NSCondition()
    private var queue: [RecordedEntry] = []
    /// The number (counting from 0) of `queue.first`: every entry before it is written or dropped.
    private var written = 0
    private var enqueued: Int { written + queue.count }
    private var flushNow = false
    private let capacity: Int
    /// How long entries wait when nobody reads; under load (more than `capacity` entries came
    /// in one interval: the older ones would never be read), the longer one: each round writes
    /// `capacity` entries, so writing them less often is what saves Redis and this replica work.
    static let interval = 0.1
    static let loadedInterval = 0.5
    /// The most entries one pipelined append carries.
    static let batchLimit = 512

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        queue.reserveCapacity(2 * self.capacity)
    }

    func recorded(_ entry: RecordedEntry) {
        condition.lock()
        queue.append(entry)
        // Past twice the capacity, the older half could never be read: dropped in one go.
        if queue.count >= 2 * capacity { drop(queue.count - capacity) }
        condition.unlock()
    }

    /// Under `condition`: forgets the oldest `n` queued entries as if written.
    private func drop(_ n: Int) {
        queue.removeFirst(n)
        written += n
    }

    var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    func start(_ store: RedisStore) {
        let thread = Thread { [weak store, self] in
            var loaded = false
            while true {
                self.condition.lock()
                let due = Date().addingTimeInterval(loaded ? Self.loadedInterval : Self.interval)
                while !self.flushNow && self.condition.wait(until: due) {}
                self.flushNow = false
                loaded = self.queue.count > self.capacity
                if loaded { self.drop(self.queue.count - self.capacity) }
                let pending = self.queue, first = self.written
                self.condition.unlock()
                guard let store else { return }
                var done = 0
                while done < pending.count, store.append(Array(pending[done..<min(done + Self.batchLimit, pending.count)])) {
                    done = min(done + Self.batchLimit, pending.count)
                }
                self.condition.lock()
                // Meanwhile `recorded` may have dropped some of them already.
                if first + done > self.written { self.drop(first + done - self.written) }
                self.condition.broadcast()
                self.condition.unlock()
                // Redis away: the rest waits for the next round (the health thread reconnects).
            }
        }
        thread.name = "moonmock-redis-journal"
        thread.start()
    }

    /// Has the writer append now, and waits until what was queued before this call is in the
    /// stream (or `timeout` passed).
    func waitUntilWritten(timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        let target = enqueued
        if written < target {
            flushNow = true
            condition.broadcast()
        }
        while written < target && condition.wait(until: deadline) {}
        condition.unlock()
    }
}

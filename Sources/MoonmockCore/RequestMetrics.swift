import Foundation

/// The counts behind `GET /__moonmock/metrics`: answers by rule, method, status and door, and
/// the server time of each as a histogram. Each thread counts into its own table (one per
/// ``EngineLane``, under a lock no other thread takes but a scrape), so counting costs a table
/// slot found (the last one, usually) and a few additions; a scrape sums the tables.
///
/// ```swift
/// engine.requestMetrics.samples()   // [(rule: "GET /users/:id", method: "GET", status: 200, door: "socket", …)]
/// ```
public final class RequestMetrics: Sendable {
    /// Histogram bounds in seconds (Prometheus `le`), then +Inf.
    public static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    /// One rule, method, status and door's counts.
    public struct Sample: Sendable {
        public let rule: String?
        public let method: String
        public let status: Int
        public let door: String
        public var count: Int
        public var errors: Int
        public var buckets: [Int]
        public var micros: Int
    }

    private let tables = Locked<[Table]>([])

    public init() {}

    /// A table for one thread's counts.
    func table(door: String) -> Table {
        let table = Table(door: door)
        tables.withLock { $0.append(table) }
        return table
    }

    /// Every thread's counts, summed by rule, method, status and door.
    public func samples() -> [Sample] {
        var merged: [Table.Key: Sample] = [:]
        for table in tables.withLock({ $0 }) {
            for (key, slot) in table.snapshot() {
                if var sample = merged[key] {
                    sample.count += slot.count
                    sample.errors += slot.errors
                    sample.micros += slot.micros
                    for i in sample.buckets.indices { sample.buckets[i] += slot.buckets[i] }
                    merged[key] = sample
                } else {
                    merged[key] = Sample(rule: key.rule, method: key.method, status: key.status, door: key.door, count: slot.count,
                                         errors: slot.errors, buckets: slot.buckets, micros: slot.micros)
                }
            }
        }
        return merged.values.sorted { ($0.rule ?? "", $0.method, $0.status, $0.door) < ($1.rule ?? "", $1.method, $1.status, $1.door) }
    }

    /// One thread's counts. Written by its thread; read by a scrape, under the same lock.
    final class Table: @unchecked Sendable {
        struct Key: Hashable {
            let rule: String?
            let method: String
            let status: Int
            let door: String
        }
        struct Slot {
            var count = 0, errors = 0, micros = 0
            var buckets = [Int](repeating: 0, count: RequestMetrics.bounds.count + 1)
        }
        let door: String
        private struct State {
            var slots: [Key: Int] = [:]
            var counts: [Slot] = []
            var last: (rule: String?, method: String, status: Int, index: Int)?
        }
        private let state = Locked(State())

        init(door: String) { self.door = door }

        func record(rule: String?, method: String, status: Int, micros: Int, error: Bool) {
            let seconds = Double(micros) / 1e6
            var bucket = 0
            while bucket < RequestMetrics.bounds.count && seconds > RequestMetrics.bounds[bucket] { bucket += 1 }
            state.withLock { s in
                let index: Int
                if let last = s.last, last.status == status, last.rule == rule, last.method == method {
                    index = last.index
                } else {
                    let key = Key(rule: rule, method: method, status: status, door: door)
                    if let found = s.slots[key] {
                        index = found
                    } else {
                        index = s.counts.count
                        s.slots[key] = index
                        s.counts.append(Slot())
                    }
                    s.last = (rule, method, status, index)
                }
                s.counts[index].count += 1
                s.counts[index].micros += micros
                if error { s.counts[index].errors += 1 }
                s.counts[index].buckets[bucket] += 1
            }
        }

        func snapshot() -> [(Key, Slot)] {
            state.withLock { s in s.slots.map { ($0.key, s.counts[$0.value]) } }
        }
    }
}

/// Which door the current thread serves (the server's event loops say `socket`; any other
/// thread is the in-process door's), read once when a thread's lane is made.
public enum ThreadDoor {
    private static let key = "moonmock.door"
    public static var current: String { Thread.current.threadDictionary[key] as? String ?? "in-process" }
    public static func mark(_ door: String) { Thread.current.threadDictionary[key] = door }
}

import Synchronization

/// One request as the engine saw it, matched or not.
public struct JournalEntry: Sendable {
    /// The request itself (bodies beyond ``Journal/maxBodyBytes`` are cut).
    public let request: MockRequest
    /// Seconds since 1970 when the request arrived.
    public let timestamp: Double
    public let status: Int
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

    public var id: Int { request.id }
    public var method: String { request.method }
    /// The absolute URL (built when asked for, not on the request path).
    public var url: String { request.url }
    public var path: String { request.path }
    public var headers: HTTPHeaders { request.headers }
    public var body: [UInt8] { request.body }
    public var matched: Bool { ruleID != nil }
}

/// A bounded, thread-safe ring of ``JournalEntry`` values; memory stays flat under load.
///
/// ```swift
/// engine.journal.entries().filter { !$0.matched }
/// ```
public final class Journal: Sendable {
    public static let maxBodyBytes = 64 * 1024

    private struct Ring {
        var slots: [JournalEntry?]
        var next = 0
        var count = 0
    }

    public let capacity: Int
    private let ring: Mutex<Ring>

    public init(capacity: Int = 1000) {
        self.capacity = max(1, capacity)
        ring = Mutex(Ring(slots: Array(repeating: nil, count: max(1, capacity))))
    }

    func record(_ entry: JournalEntry) {
        // The entry it replaces (a request from `capacity` requests ago, cold in every cache) is
        // released after the lock, so that other threads do not wait for its deallocation.
        let replaced: JournalEntry? = ring.withLock { r in
            var slot: JournalEntry? = entry
            swap(&slot, &r.slots[r.next])
            r.next = r.next + 1 == r.slots.count ? 0 : r.next + 1
            r.count = min(r.count + 1, r.slots.count)
            return slot
        }
        _ = consume replaced
    }

    /// Entries oldest first.
    public func entries() -> [JournalEntry] {
        ring.withLock { r in
            let start = (r.next - r.count + r.slots.count) % r.slots.count
            return (0..<r.count).compactMap { r.slots[(start + $0) % r.slots.count] }
        }
    }

    public func clear() {
        ring.withLock { r in
            r.slots = Array(repeating: nil, count: r.slots.count)
            r.next = 0
            r.count = 0
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

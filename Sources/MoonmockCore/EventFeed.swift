
/// What happened in an engine, for watchers (the dashboard's `GET /__moonmock/events`): a
/// request was recorded, the script reloaded, a switch moved, the state changed. Publishing
/// costs one atomic load while nobody watches; each watcher has a bounded queue of its own.
///
/// ```swift
/// let watch = engine.feed.subscribe()
/// defer { watch.cancel() }
/// watch.take()   // the events since the last take, oldest first
/// ```
public final class EventFeed: Sendable {
    public enum Event: Sendable, Equatable {
        /// A journal entry, by id (read from the journal when sent: late statuses included).
        case request(id: Int)
        /// A reload, with its outcome (the script's status).
        case reload(JSONValue)
        /// A variant, stub or bundle switch.
        case switched(JSONValue)
        /// `mock.state` changed: the key (`nil`: all of it).
        case state(key: String?)
        /// The rules changed: a runtime rule was added or removed, or a script loaded.
        case rules
        /// The journal was cleared (or the engine reset).
        case journalCleared
        /// Entries other replicas journaled (with a shared store), as they were written.
        case otherReplicas(ReplicaEntries)
    }

    /// Journal entries of other replicas, passed on as they are (equal when their ids are).
    public struct ReplicaEntries: Sendable, Equatable {
        public let entries: [JournalEntry]
        public init(_ entries: [JournalEntry]) { self.entries = entries }
        public static func == (a: Self, b: Self) -> Bool { a.entries.map(\.id) == b.entries.map(\.id) }
    }

    /// One watcher's queue.
    public final class Subscription: Sendable {
        fileprivate let queue = Locked<(events: [Event], dropped: Int)>(([], 0))
        fileprivate let feed: EventFeed
        fileprivate init(feed: EventFeed) { self.feed = feed }
        /// The events since the last call, and how many were dropped (a watcher that fell behind).
        public func take() -> (events: [Event], dropped: Int) {
            queue.withLock { q in defer { q = ([], 0) }; return q }
        }
        public func cancel() { feed.remove(self) }
    }

    /// The most a watcher's queue holds; older events are dropped (and counted).
    public static let queueLimit = 10_000

    private let watchers = AtomicInt(0)
    private let subscriptions = Locked<[ObjectIdentifier: Subscription]>([:])

    public init() {}

    /// Whether anyone watches (publishers skip building events otherwise).
    @inline(__always)
    public var isWatched: Bool { watchers.load(ordering: .relaxed) > 0 }

    public func publish(_ event: Event) {
        guard isWatched else { return }
        for subscription in subscriptions.withLock({ Array($0.values) }) {
            subscription.queue.withLock { q in
                if q.events.count >= Self.queueLimit {
                    q.events.removeFirst()
                    q.dropped += 1
                }
                q.events.append(event)
            }
        }
    }

    public func subscribe() -> Subscription {
        let subscription = Subscription(feed: self)
        subscriptions.withLock { $0[ObjectIdentifier(subscription)] = subscription }
        watchers.add(1, ordering: .relaxed)
        return subscription
    }

    fileprivate func remove(_ subscription: Subscription) {
        if subscriptions.withLock({ $0.removeValue(forKey: ObjectIdentifier(subscription)) }) != nil {
            watchers.subtract(1, ordering: .relaxed)
        }
    }
}

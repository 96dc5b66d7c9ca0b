/// The hit counts of `mock.sequence` answers, by key (a script generation's own key and the
/// sequence's number): the next hit's 0-based number, rewound by ``Engine/reset()``.
///
/// ```swift
/// engine.sequenceCounts.next("g1#3")   // 0, then 1, 2, …
/// ```
public final class SequenceCounts: Sendable {
    private let hits = Locked<[String: Int]>([:])

    public init() {}

    /// This hit's number for `key`, counting it.
    public func next(_ key: String) -> Int {
        hits.withLock { h in
            defer { h[key, default: 0] += 1 }
            return h[key, default: 0]
        }
    }

    /// Every sequence back to its first answer.
    public func reset() { hits.withLock { $0.removeAll() } }
}

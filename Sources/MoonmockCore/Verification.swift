/// "Was this called N times?" over the journal, with the closest requests when it was not:
/// what the admin API's `POST /__moonmock/verify` answers.
///
/// ```swift
/// let v = Verification(target: .pattern(method: "GET", try RoutePattern("/users/:id")), expected: .exactly(2))
/// let result = v.run(on: engine.journal.entries())
/// result.ok      // false
/// result.nearMisses.first?.reasons   // ["path: expected /users/:id, got /userz"]
/// ```
public struct Verification: Sendable {
    /// Which requests count.
    public enum Target: Sendable {
        /// Those a rule answered (by its id: a `name` or `"METHOD pattern"`).
        case rule(String)
        /// Those with the method (any when `nil`) and a path the pattern matches.
        case pattern(method: String?, RoutePattern)
        /// Those with exactly this path and query (`/users/7?full=1`), any host.
        case url(String)
    }

    /// How many there must be.
    public enum Expected: Sendable, Equatable {
        case exactly(Int), atLeast(Int), atMost(Int)

        public func holds(_ n: Int) -> Bool {
            switch self {
            case .exactly(let k): return n == k
            case .atLeast(let k): return n >= k
            case .atMost(let k): return n <= k
            }
        }

        /// `"exactly 2"`, `"at least 1"`, `"at most 0"`.
        public var description: String {
            switch self {
            case .exactly(let k): return "exactly \(k)"
            case .atLeast(let k): return "at least \(k)"
            case .atMost(let k): return "at most \(k)"
            }
        }
    }

    /// A request that did not count, and why.
    public struct Miss: Sendable {
        public let entry: JournalEntry
        public let reasons: [String]
        let distance: Int
    }

    public struct Result: Sendable {
        public let ok: Bool
        public let count: Int
        /// The requests that counted (oldest first).
        public let matching: [JournalEntry]
        /// When too few counted: the closest of the others, closest first.
        public let nearMisses: [Miss]
    }

    public let target: Target
    public let expected: Expected
    /// The rules of the engine (to explain a `.rule` target by its method and pattern).
    public let rules: [Rule]

    public init(target: Target, expected: Expected = .atLeast(1), rules: [Rule] = []) {
        self.target = target
        self.expected = expected
        self.rules = rules
    }

    /// Counts over `entries`; near misses (at most `limit`) only when the count falls short.
    public func run(on entries: [JournalEntry], limit: Int = 5) -> Result {
        var matching: [JournalEntry] = [], misses: [Miss] = []
        for entry in entries {
            if let miss = explain(entry) { misses.append(miss) } else { matching.append(entry) }
        }
        let ok = expected.holds(matching.count)
        let short: Bool
        switch expected {
        case .exactly(let k), .atLeast(let k): short = matching.count < k
        case .atMost: short = false
        }
        let closest = short ? misses.enumerated().sorted { a, b in
            a.element.distance != b.element.distance ? a.element.distance < b.element.distance : a.offset > b.offset
        }.prefix(limit).map(\.element) : []
        return Result(ok: ok, count: matching.count, matching: matching, nearMisses: closest)
    }

    /// `nil` when the entry counts, else why not.
    private func explain(_ entry: JournalEntry) -> Miss? {
        switch target {
        case .rule(let id):
            if entry.ruleID == id { return nil }
            let answered = entry.ruleID.map { "answered by rule '\($0)'" } ?? "matched no rule"
            guard let rule = rules.first(where: { $0.id == id }) else { return Miss(entry: entry, reasons: [answered], distance: 9) }
            let why = NearMiss.explain(rule, entry.request, false)
            let reasons = why.mismatches.filter { $0 != "not reached" }
            return Miss(entry: entry, reasons: reasons.isEmpty ? [answered] : reasons + [answered], distance: why.distance)
        case .pattern(let method, let pattern):
            let probe = Rule(method: method, pattern: pattern) { _ in nil }
            let why = NearMiss.explain(probe, entry.request, false)
            if why.mismatches == ["not reached"] { return nil }
            return Miss(entry: entry, reasons: why.mismatches, distance: why.distance)
        case .url(let url):
            let have = entry.path + (entry.request.rawQuery.map { "?" + $0 } ?? "")
            if have == url { return nil }
            // An absolute URL, as the journal shows it: that request exactly.
            if url.contains("://") && entry.url == url { return nil }
            let samePath = url.split(separator: "?", maxSplits: 1).first.map(String.init) == entry.path
                || (url.contains("://") && url.split(separator: "?", maxSplits: 1).first.map(String.init) == entry.url.split(separator: "?", maxSplits: 1).first.map(String.init))
            return Miss(entry: entry, reasons: ["url: expected \(url), got \(url.contains("://") ? entry.url : have)"], distance: samePath ? 1 : 4)
        }
    }
}

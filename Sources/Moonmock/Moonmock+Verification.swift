import Foundation
import MoonmockCore

extension Moonmock {
    /// Rules that have `mock.variants`, with their variant names and the active one.
    public var variants: [VariantStore.Variants] { engine.variants.list() }

    /// Switches a rule (by id: its name or `"METHOD pattern"`) to another variant — the way a
    /// QA person flips an endpoint to "server error" without touching the script.
    ///
    /// ```swift
    /// try moonmock.activateVariant("server_error", for: "GET /users/:id")
    /// ```
    public func activateVariant(_ name: String, for rule: String) throws {
        try engine.variants.activate(name, for: rule)
        publishSwitch(rule)
    }

    /// Tells watchers (`GET /__moonmock/events` of a server on this engine) of a switch.
    private func publishSwitch(_ rule: String) {
        engine.feed.publish(.switched(.object(["rule": .string(rule), "active": engine.variants.active(for: rule).map(JSONValue.string) ?? .null])))
    }

    /// Every rule back to its default variant, and every stub endpoint back to none.
    public func resetVariants() { engine.variants.reset() }

    /// Activates a stub of a stub-folder endpoint, by file name (`ok.200.json`) or short name
    /// (`ok`) when unambiguous.
    ///
    /// ```swift
    /// try moonmock.activateStub("missing", for: "getUser")
    /// ```
    public func activateStub(_ name: String, for endpoint: String) throws {
        try engine.variants.activate(name, for: endpoint)
        publishSwitch(endpoint)
    }

    /// Leaves an endpoint without an active stub: its requests fall through to later rules.
    public func deactivateStub(for endpoint: String) throws {
        try engine.variants.deactivate(endpoint)
        publishSwitch(endpoint)
    }

    /// Every endpoint without an active stub, every rule on its default variant.
    public func resetStubs() { engine.variants.reset() }

    /// The one delay added to every stub-folder response, in seconds.
    public var stubDelay: TimeInterval {
        get { engine.variants.stubDelayMilliseconds / 1000 }
        set { engine.variants.stubDelayMilliseconds = newValue * 1000 }
    }

    /// Serves another Mock-Bundle folder (relative to the script) from now on: the whole set
    /// changes at once. `rule` picks a bundle when the script declares several.
    ///
    /// ```swift
    /// try moonmock.switchBundle(to: "Bundles/empty-cart")
    /// ```
    public func switchBundle(to path: String, rule: String? = nil) throws {
        try engine.bundles.switchTo(path, rule: rule)
    }

    /// Serves the Mock-Bundle in `directory` — any folder, an absolute path included (it is
    /// the test's own) — for a bundle the script declares; `nil` serves none (its requests
    /// fall through, or get `501` with `handle_all`).
    ///
    /// ```swift
    /// try moonmock.switchBundle(to: fixtures.appendingPathComponent("bundles/empty-cart"))
    /// try moonmock.switchBundle(to: nil)
    /// ```
    public func switchBundle(to directory: URL?, rule: String? = nil) throws {
        try engine.bundles.serve(try directory.map { try MockBundle(directory: $0) }, rule: rule)
    }

    /// Every request this instance saw (oldest first, up to the journal's capacity).
    public var requests: [JournalEntry] { engine.journal.entries() }

    /// Requests no rule answered, with their near-miss reports.
    public var unmatchedRequests: [JournalEntry] { engine.journal.unmatched() }

    /// How many requests the rule or stub with this id answered (`"GET /users/:id"`, a `name`).
    public func count(rule id: String) -> Int { engine.journal.count(rule: id) }

    /// How many requests had `method` (any when `nil`) and a path matching `pattern`.
    ///
    /// ```swift
    /// try moonmock.count(.get, "/users/:id")   // 2
    /// ```
    public func count(_ method: HTTPMethod?, _ pattern: String) throws -> Int {
        engine.journal.count(method: method?.rawValue, pattern: try RoutePattern(pattern))
    }

    /// Throws a readable ``MoonmockError`` unless `method pattern` was requested `times` times
    /// (at least once when `times` is `nil`). Reads well in Swift Testing and XCTest alike:
    ///
    /// ```swift
    /// try moonmock.verify(.post, "/orders", times: 1)
    /// ```
    public func verify(_ method: HTTPMethod?, _ pattern: String, times: Int? = nil) throws {
        let n = try count(method, pattern)
        let label = "\(method?.rawValue ?? "ANY") \(pattern)"
        try check(label, n, times)
    }

    /// Like ``verify(_:_:times:)`` for a rule or stub id.
    public func verify(rule id: String, times: Int? = nil) throws {
        try check("rule '\(id)'", count(rule: id), times)
    }

    /// Throws when any request went unanswered, listing them with their near-miss reports.
    public func verifyNoUnmatchedRequests() throws {
        let unmatched = unmatchedRequests
        guard !unmatched.isEmpty else { return }
        var text = "Moonmock: \(unmatched.count) request(s) matched no rule:"
        for e in unmatched {
            text += "\n  \(e.method) \(e.url)"
            for miss in e.nearMisses { text += "\n    - \(miss.ruleID): \(miss.summary)" }
        }
        throw MoonmockError.verification(text)
    }

    private func check(_ label: String, _ n: Int, _ times: Int?) throws {
        let ok = times.map { n == $0 } ?? (n > 0)
        guard !ok else { return }
        let expected = times.map { "\($0) time\($0 == 1 ? "" : "s")" } ?? "at least once"
        var text = "Moonmock: expected \(label) \(expected), got \(n)."
        let seen = requests.suffix(10)
        text += seen.isEmpty ? " No requests were made." : " Last requests:"
        for e in seen { text += "\n  \(e.method) \(e.url) → \(e.status == 0 ? "fault" : String(e.status)) \(e.ruleID.map { "(\($0))" } ?? "(unmatched)")" }
        throw MoonmockError.verification(text)
    }
}

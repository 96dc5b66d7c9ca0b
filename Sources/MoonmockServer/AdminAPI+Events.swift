import Foundation
import MoonmockCore

/// `GET /__moonmock/events`: a Server-Sent Events stream of what happens — `request` (a journal
/// entry, as `GET /requests` shows it), `reload` (the script's status after a reload, failed or
/// not), `switch` (a variant, stub or bundle switch), `state` (the key that changed; none: all),
/// `rules` (the rules changed: read `GET /rules` again), `cleared` (the journal was emptied).
/// It is an ordinary stream answer (``StreamPlan``): the door sends what has happened every
/// 100 ms, from its timer, and a comment line every 15 s keeps proxies from closing it.
extension AdminAPI {
    func events() -> MockResponse {
        let subscription = engine.feed.subscribe()
        let hello = Self.sse("hello", .object(["journal": .integer(Int64(engine.journal.entries().count))]))
        let plan = StreamPlan(chunks: [.init(bytes: hello)], closes: false,
                              heartbeat: (bytes: Array(": keep-alive\n\n".utf8), everyMilliseconds: 15_000), kind: "sse",
                              more: FeedStream(api: self, subscription: subscription))
        var headers = HTTPHeaders()
        headers["Content-Type"] = "text/event-stream"
        headers["Cache-Control"] = "no-cache"
        return MockResponse(status: 200, headers: headers, fault: .stream(plan))
    }

    static func sse(_ event: String, _ data: JSONValue) -> [UInt8] {
        Array("event: \(event)\ndata: ".utf8) + data.encoded() + Array("\n\n".utf8)
    }
}

/// One watcher of the feed, as a stream's continuation.
final class FeedStream: StreamContinuation, @unchecked Sendable {
    private let api: AdminAPI
    private let subscription: EventFeed.Subscription

    init(api: AdminAPI, subscription: EventFeed.Subscription) {
        self.api = api
        self.subscription = subscription
    }

    func next() -> StreamBatch {
        let (events, dropped) = subscription.take()
        var bytes: [UInt8] = []
        if dropped > 0 { bytes += AdminAPI.sse("dropped", .object(["events": .integer(Int64(dropped))])) }
        let ids = events.compactMap { if case .request(let id) = $0 { return id } else { return nil } }
        var entries: [Int: JournalEntry] = [:]
        if !ids.isEmpty {
            for entry in api.engine.journal.entries().suffix(ids.count + 256) { entries[entry.id] = entry }
        }
        for event in events {
            switch event {
            case .request(let id): if let entry = entries[id] { bytes += AdminAPI.sse("request", api.entryJSON(entry)) }
            case .reload(let status): bytes += AdminAPI.sse("reload", status)
            case .switched(let what): bytes += AdminAPI.sse("switch", what)
            case .state(let key): bytes += AdminAPI.sse("state", .object(["key": key.map(JSONValue.string) ?? .null]))
            case .rules: bytes += AdminAPI.sse("rules", .object([:]))
            case .journalCleared: bytes += AdminAPI.sse("cleared", .object([:]))
            case .otherReplicas(let shared):
                for entry in shared.entries { bytes += AdminAPI.sse("request", AdminAPI.json(entry)) }
            }
        }
        var chunks: [StreamPlan.Chunk] = []
        if !bytes.isEmpty { chunks.append(.init(bytes: bytes)) }
        chunks.append(.init(bytes: [], delayMilliseconds: 100))   // the next look, in 100 ms
        return StreamBatch(chunks: chunks, done: false)
    }

    func close() { subscription.cancel() }

    deinit { subscription.cancel() }
}

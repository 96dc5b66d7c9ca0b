import Foundation
import MoonmockCore

/// Switches and runtime rules: a hash per group (`PREFIX:h:GROUP`), and a message naming the
/// group on `PREFIX:changes` with every change. A subscriber thread with a connection of its
/// own hands each message to the engine's side (``onSettingsChanged(_:)``), answers journal
/// barriers (`sync:TOKEN`, see ``syncJournal()``) and passes on other replicas' new entries
/// (`journal:FIRST LAST STREAM`, see ``heardEntries(_:)``); after it lost
/// Redis, it reconnects with a backoff and reports every group (what changed meanwhile is
/// unknown).
extension RedisStore {
    public func putSetting(_ group: SharedSettings, _ key: String, _ value: String?) throws {
        let hash = self.key("h", group.rawValue)
        _ = try pool.with { c in
            try c.pipeline([value.map { ["HSET", hash, key, $0] } ?? ["HDEL", hash, key], ["PUBLISH", changesChannel, group.rawValue]])
        }
    }

    public func settings(_ group: SharedSettings) throws -> [String: String] {
        guard case .array(let flat) = try pool.with({ try $0.command(["HGETALL", self.key("h", group.rawValue)]) }) else { return [:] }
        var out: [String: String] = [:]
        var i = 0
        while i + 1 < flat.count {
            if let k = flat[i].text, let v = flat[i + 1].text { out[k] = v }
            i += 2
        }
        return out
    }

    public func onSettingsChanged(_ handler: @escaping @Sendable (SharedSettings) -> Void) {
        subscriber.withLock { $0.append(handler) }
    }

    func announce(_ group: SharedSettings) {
        for handler in subscriber.withLock({ $0 }) { handler(group) }
    }

    func startSubscriber() {
        let url = self.url, channel = changesChannel
        let thread = Thread { [weak self] in
            var backoff = 0.05
            var first = true
            while self != nil {
                do {
                    // No read timeout: a subscriber waits for messages as long as there are none
                    // (a dead Redis closes the socket; keepalive finds a vanished host).
                    let connection = try RedisConnection(url, timeoutMilliseconds: 1000)
                    try connection.setNoTimeout()
                    guard case .array = try connection.command(["SUBSCRIBE", channel]) else { throw RedisConnectionError(description: "SUBSCRIBE refused") }
                    backoff = 0.05
                    if !first { for group in SharedSettings.allCases { self?.announce(group) } }
                    first = false
                    while true {
                        guard case .array(let parts) = try connection.read(), parts.count == 3, parts[0].text == "message",
                              let name = parts[2].text else { continue }
                        if name.hasPrefix("sync:") { self?.answerSync(String(name.dropFirst(5))); continue }
                        if name.hasPrefix("journal:") { self?.heardEntries(String(name.dropFirst(8))); continue }
                        guard let group = SharedSettings(rawValue: name) else { continue }
                        self?.announce(group)
                    }
                } catch {
                    first = false
                    Thread.sleep(forTimeInterval: backoff)
                    backoff = min(2, backoff * 2)
                }
            }
        }
        thread.name = "moonmock-redis-subscriber"
        thread.start()
    }
}

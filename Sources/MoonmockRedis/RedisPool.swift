import Foundation
import MoonmockCore

/// Connections to one Redis, handed to one thread at a time, and whether Redis is there.
///
/// While Redis is away, a caller fails at once with ``StoreUnavailable`` (no request waits for
/// a store known to be down); one caller at a time tries to connect again, after a backoff that
/// doubles from 50 ms to 2 s. The health thread of ``RedisStore`` also tries, so recovery
/// needs no traffic.
final class RedisPool: @unchecked Sendable {
    // @unchecked: `idle` holds connections only under its lock; a connection is used by the
    // one thread that took it out.
    let url: RedisURL
    let timeoutMilliseconds: Int
    private let idle = Locked<[RedisConnection]>([])

    struct Status {
        var up = true
        var error: String?
        var downSince: Date?
        var nextAttempt = Date.distantPast
        var backoff = 0.05
        var latencyMilliseconds: Double?
        var attempting = false
        /// Connection errors and outages (up to away) since the start: the metrics' counters.
        var errors = 0, outages = 0
    }
    let status = Locked(Status())
    /// Called (on the thread that found it) when Redis answers again after an outage.
    let onRecovery = Locked<(@Sendable () -> Void)?>(nil)

    init(url: RedisURL, timeoutMilliseconds: Int) {
        self.url = url
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Runs `body` on a connection; a connection error marks Redis away and throws
    /// ``StoreUnavailable`` with the reason.
    func with<T>(_ body: (RedisConnection) throws -> T) throws -> T {
        let connection = try checkout()
        do {
            let result = try body(connection)
            idle.withLock { $0.append(connection) }
            return result
        } catch let broken as RedisConnectionError {
            markDown(broken.description)
            throw StoreUnavailable("\(url.display): \(broken.description)")
        }
    }

    private func checkout() throws -> RedisConnection {
        if let c = idle.withLock({ $0.popLast() }) { return c }
        // None idle: connect, unless Redis is away and it is not yet time to try again.
        let now = Date()
        let allowed: Bool = status.withLock { s in
            if s.up { return true }
            guard !s.attempting, now >= s.nextAttempt else { return false }
            s.attempting = true
            return true
        }
        guard allowed else {
            let reason = status.withLock { $0.error } ?? "unavailable"
            throw StoreUnavailable("\(url.display): \(reason) (reconnecting)")
        }
        do {
            let c = try RedisConnection(url, timeoutMilliseconds: timeoutMilliseconds)
            markUp()
            return c
        } catch {
            markDown(String(describing: error).replacingOccurrences(of: url.display + ": ", with: ""))
            throw StoreUnavailable(String(describing: error))
        }
    }

    private func markDown(_ reason: String) {
        // Every idle connection went with Redis (or soon finds out): drop them all.
        idle.withLock { $0.removeAll() }
        status.withLock { s in
            s.errors += 1
            if s.up { s.downSince = Date(); s.backoff = 0.05; s.outages += 1 } else { s.backoff = min(2, s.backoff * 2) }
            s.up = false
            s.error = reason
            s.attempting = false
            s.nextAttempt = Date().addingTimeInterval(s.backoff)
        }
    }

    private func markUp() {
        let recovered: Bool = status.withLock { s in
            defer { s.up = true; s.error = nil; s.downSince = nil; s.attempting = false }
            return !s.up
        }
        if recovered, let call = onRecovery.withLock({ $0 }) { call() }
    }

    // MARK: combining

    /// One request's commands, waiting to go out with others.
    private final class Pending: @unchecked Sendable {
        // @unchecked: `result` is written and read only under `combining`.
        let commands: [[String]]
        var result: Result<[RedisReply], any Error>?
        init(_ commands: [[String]]) { self.commands = commands }
    }
    private let combining = NSCondition()
    private var waiting: [Pending] = []
    private var leading = false

    /// Runs `commands` (kept together, in order) with those other threads send meanwhile: one
    /// thread at a time writes everything queued in one pipeline and hands out the replies, so
    /// concurrent requests share a round trip and Redis reads them in one go. Waits at most the
    /// store timeout for its turn.
    func run(_ commands: [[String]]) throws -> [RedisReply] {
        let mine = Pending(commands)
        let deadline = Date().addingTimeInterval(Double(timeoutMilliseconds) / 1000)
        combining.lock()
        defer { combining.unlock() }
        waiting.append(mine)
        while mine.result == nil {
            if !leading {
                leading = true
                let batch = waiting
                waiting = []
                combining.unlock()
                let outcome = Result { try with { c in try c.pipeline(batch.flatMap(\.commands)) } }
                combining.lock()
                var at = 0
                for p in batch {
                    p.result = outcome.map { replies in
                        defer { at += p.commands.count }
                        return Array(replies[at..<at + p.commands.count])
                    }
                }
                leading = false
                combining.broadcast()
            } else if !combining.wait(until: deadline) && mine.result == nil {
                waiting.removeAll { $0 === mine }
                throw StoreUnavailable("\(url.display): no answer within the store timeout (\(timeoutMilliseconds) ms)")
            }
        }
        return try mine.result!.get()
    }

    /// One command through ``run(_:)``.
    func run(_ command: [String]) throws -> RedisReply { try run([command])[0] }

    /// A PING's round trip, in milliseconds (the health thread's).
    func ping() -> Double? {
        let t0 = DispatchTime.now().uptimeNanoseconds
        guard (try? with { try $0.command(["PING"]) }) != nil else { return nil }
        let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
        status.withLock { $0.latencyMilliseconds = (ms * 1000).rounded() / 1000 }
        return ms
    }
}

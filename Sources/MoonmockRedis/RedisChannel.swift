import Foundation
import MoonmockCore

/// An event loop's own connection to Redis (``StoreChannel``): `mock.state` commands of the
/// loop's requests are appended as handlers ask, written together at the end of the turn, and
/// their replies — in the order sent, as Redis answers — complete the handlers' waits on the
/// loop. A connection error or an overdue reply fails every command in flight with
/// ``StoreUnavailable`` (the requests answer 503); the next command connects again, at most
/// once per timeout.
///
/// Used by its loop's thread only.
final class RedisChannel: StoreChannel {
    private let store: RedisStore
    private let timeout: UInt64
    private var connection: RedisConnection?
    private var lastAttempt: UInt64 = 0
    /// Replies awaited, oldest first: each command's completion (`nil` for a command whose
    /// reply is not wanted: the `SET NX` before an `INCRBY`) and its deadline.
    private var awaited: [(completion: ((Result<RedisReply, StoreUnavailable>) -> Void)?, deadline: UInt64)] = []
    /// Reply times and failures, for the metrics (the store sums its channels').
    let latency = LatencyTable()
    private var head = 0
    private(set) var descriptor: Int32 = -1

    init(store: RedisStore, timeoutMilliseconds: Int) {
        self.store = store
        timeout = UInt64(max(1, timeoutMilliseconds)) * 1_000_000
    }

    var hasUnsent: Bool { connection?.hasOutput ?? false }

    func submit(_ operation: StateOperation, _ completion: @escaping (Result<StateResult, StoreUnavailable>) -> Void) {
        guard let connection = connected() else {
            latency.failed(1)
            return completion(.failure(StoreUnavailable("Redis at \(store.url.display) cannot be reached")))
        }
        let k = store.key(operation.name == "count" ? "c" : "s", operation.key)
        let deadline = DispatchTime.now().uptimeNanoseconds + timeout
        do {
            switch operation {
            case .get:
                try send(connection, ["GET", k], deadline) { completion($0.map { .value(RedisStore.decode($0)) }) }
            case .set(_, let value, let ttl):
                try send(connection, value.map { ["SET", k, RedisStore.encode($0)] + RedisStore.expiry(ttl) } ?? ["DEL", k], deadline) {
                    completion($0.map { _ in .none })
                }
            case .add(_, let value, let ttl):
                try send(connection, ["SET", k, RedisStore.encode(value), "NX"] + RedisStore.expiry(ttl), deadline) {
                    completion($0.map { .flag($0 != .null) })
                }
            case .delete:
                try send(connection, ["DEL", k], deadline) { completion($0.map { .flag($0 == .integer(1)) }) }
            case .count(let name, let by):
                try send(connection, ["INCRBY", k, String(by)], deadline) { result in
                    completion(result.flatMap { reply in
                        guard case .integer(let n) = reply else { return .failure(StoreUnavailable("INCRBY of counter '\(name)' did not answer a number: \(reply)")) }
                        return .success(.value(.integer(n)))
                    })
                }
            case .incr(let key, let by, let initial):
                guard case .integer(let step) = by, case .integer(let start) = initial else {
                    // Doubles: the script of the blocking path (rare; one round trip on the loop).
                    return completion(Result { .value(try store.stateIncr(key, by: by, initial: initial)) }
                        .mapError { ($0 as? StoreUnavailable) ?? StoreUnavailable(String(describing: $0)) })
                }
                if start != 0 {   // INCRBY starts an absent key at 0 by itself
                    try connection.append(["SET", k, String(start), "NX"])
                    awaited.append((nil, deadline))
                }
                try send(connection, ["INCRBY", k, String(step)], deadline) { result in
                    completion(result.flatMap { reply in
                        guard case .integer(let n) = reply else { return .failure(StoreUnavailable("INCRBY of '\(key)' did not answer a number: \(reply)")) }
                        return .success(.value(.integer(n)))
                    })
                }
            }
        } catch {
            fail(String(describing: error))
            latency.failed(1)
            completion(.failure(StoreUnavailable("Redis at \(store.url.display): \(error)")))
        }
    }

    private func send(_ connection: RedisConnection, _ args: [String], _ deadline: UInt64,
                      _ completion: @escaping (Result<RedisReply, StoreUnavailable>) -> Void) throws {
        try connection.append(args)
        awaited.append((completion, deadline))
    }

    func flush() -> Bool {
        guard let connection, connection.hasOutput else { return false }
        do {
            return try !connection.writeSome()
        } catch {
            fail(String(describing: error))
            return false
        }
    }

    func readable() {
        guard let connection else { return }
        do {
            let replies = try connection.readAvailable()
            let now = DispatchTime.now().uptimeNanoseconds
            for reply in replies {
                guard head < awaited.count else { break }
                // Sent when its deadline was set: the time since is the reply's wait.
                let waited = Int((now &- (awaited[head].deadline &- timeout)) / 1000)
                latency.record(micros: waited)
                let completion = awaited[head].completion
                awaited[head].completion = nil
                head += 1
                if case .error(let e) = reply {
                    completion?(.failure(StoreUnavailable("Redis refused a command: \(e)")))
                } else {
                    completion?(.success(reply))
                }
            }
            if head == awaited.count { awaited.removeAll(keepingCapacity: true); head = 0 }
        } catch {
            fail(String(describing: error))
        }
    }

    var nextDeadline: UInt64? { head < awaited.count ? awaited[head].deadline : nil }

    func expire(now: UInt64) {
        if head < awaited.count, awaited[head].deadline < now { fail("no answer within the store timeout") }
    }

    /// The connection, made again when there is none (at most once per timeout).
    private func connected() -> RedisConnection? {
        if let connection { return connection }
        let now = DispatchTime.now().uptimeNanoseconds
        guard lastAttempt == 0 || now - lastAttempt > timeout else { return nil }
        lastAttempt = now
        guard let made = try? RedisConnection(store.url, timeoutMilliseconds: Int(timeout / 1_000_000)) else { return nil }
        descriptor = made.makeNonBlocking()
        connection = made
        return made
    }

    /// The connection is dropped and every command in flight fails.
    private func fail(_ reason: String) {
        connection = nil
        descriptor = -1
        let pending = awaited[head...].compactMap(\.completion)
        latency.failed(awaited.count - head)
        awaited.removeAll(keepingCapacity: true)
        head = 0
        for completion in pending { completion(.failure(StoreUnavailable("Redis at \(store.url.display): \(reason)"))) }
    }
}

extension RedisStore {
    public func makeChannel() -> (any StoreChannel)? {
        let channel = RedisChannel(store: self, timeoutMilliseconds: pool.timeoutMilliseconds)
        channels.withLock { $0.append(channel.latency) }
        return channel
    }

    public var channelLatency: StoreLatency? {
        channels.withLock { $0 }.reduce(into: StoreLatency()) { sum, table in sum.add(table.value) }
    }
}

/// One channel's reply times: written by its loop, read by a scrape.
final class LatencyTable: Sendable {
    private let state = Locked(StoreLatency())
    func record(micros: Int) { state.withLock { $0.record(micros: micros) } }
    func failed(_ n: Int) { state.withLock { $0.failures += n } }
    var value: StoreLatency { state.withLock { $0 } }
}

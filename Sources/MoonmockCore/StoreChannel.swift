import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `mock.state` operation, sent to a shared store without waiting for it.
public enum StateOperation: Sendable {
    case get(String)
    case set(String, StateValue?, ttl: Double?)
    case add(String, StateValue, ttl: Double?)
    case incr(String, by: StateValue, initial: StateValue)
    case delete(String)
    /// A counter of the engine's (a `times` budget, a sequence's position): ``SharedStore/count(_:by:)``.
    case count(String, by: Int64)

    public var key: String {
        switch self {
        case .get(let k), .set(let k, _, _), .add(let k, _, _), .incr(let k, _, _), .delete(let k), .count(let k, _): return k
        }
    }

    /// `get`, `set`, …: how messages name it (`mock.state:incr("hits")`).
    public var name: String {
        switch self {
        case .get: return "get"
        case .set: return "set"
        case .add: return "add"
        case .incr: return "incr"
        case .delete: return "delete"
        case .count: return "count"
        }
    }
}

/// What a ``StateOperation`` gave: a value (`get`, `incr`), a flag (`add`, `delete`), nothing (`set`).
public enum StateResult: Sendable, Equatable {
    case value(StateValue?)
    case flag(Bool)
    case none
}

/// A shared store's connection that belongs to one event loop (`--store redis://`): a request's
/// `mock.state` operations are queued while the loop's turn runs, sent together at its end, and
/// their replies read when the connection is readable — each completion runs on the loop, which
/// resumes the handler that waited. No thread stands between a request and the store.
///
/// A loop calls ``flush()`` at the end of each turn, ``readable()`` when ``descriptor`` is, and
/// ``expire(now:)`` now and then; it re-registers ``descriptor`` when it changes (a reconnection).
public protocol StoreChannel: AnyObject {
    /// The connection's descriptor, or -1 while there is none (the store is away).
    var descriptor: Int32 { get }
    /// Queues `operation`; `completion` runs on the loop's thread with the result, or with the
    /// store's unavailability (no answer within the store's timeout, a broken connection).
    func submit(_ operation: StateOperation, _ completion: @escaping (Result<StateResult, StoreUnavailable>) -> Void)
    /// Whether queued commands wait to be written.
    var hasUnsent: Bool { get }
    /// Writes what is queued; `true` when some of it is still unsent (wait until writable).
    func flush() -> Bool
    /// Reads what arrived and runs the completions of the replies.
    func readable()
    /// Fails the operations whose replies are overdue (monotonic nanoseconds now).
    func expire(now: UInt64)
    /// When the oldest reply awaited is overdue (monotonic nanoseconds); `nil` when none is awaited.
    var nextDeadline: UInt64? { get }
}

/// The store channel of the event loop running on this thread (set by the loop when it starts):
/// a handler's `mock.state` call sends through it and waits, instead of blocking the loop.
public enum StoreChannels {
    private final class Box { let channel: any StoreChannel; init(_ c: any StoreChannel) { channel = c } }
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)   // no destructor: the loop clears its slot when it ends
        return key
    }()

    /// This thread's channel, if its loop has one.
    public static var current: (any StoreChannel)? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<Box>.fromOpaque(raw).takeUnretainedValue().channel
    }

    /// Makes `channel` this thread's (`nil`: none); the previous one is released.
    public static func setCurrent(_ channel: (any StoreChannel)?) {
        if let raw = pthread_getspecific(key) { Unmanaged<Box>.fromOpaque(raw).release() }
        pthread_setspecific(key, channel.map { UnsafeRawPointer(Unmanaged.passRetained(Box($0)).toOpaque()) })
    }
}

extension StateStore {
    /// Throws ``LimitExceeded`` when `operation` would store an entry past the limit (as the
    /// blocking calls do); checked before it is sent.
    public func check(_ operation: StateOperation) throws {
        switch operation {
        case .set(let key, let value?, _), .add(let key, let value, _):
            if Self.size(key, value) > limitBytes { throw LimitExceeded(key: key, limitBytes: limitBytes) }
        default: break
        }
    }

    /// Sends a checked `operation` through a loop's channel to the shared store (``backend``);
    /// a change is published (to the dashboard) when its reply comes.
    public func submit(_ operation: StateOperation, through channel: any StoreChannel,
                       _ completion: @escaping (Result<StateResult, StoreUnavailable>) -> Void) {
        guard let feed, feed.isWatched else { return channel.submit(operation, completion) }
        channel.submit(operation) { [self] result in
            if case .success(let r) = result {
                switch operation {
                case .get, .count: break
                case .add, .delete: if r == .flag(true) { changed(operation.key) }
                default: changed(operation.key)
                }
            }
            completion(result)
        }
    }
}

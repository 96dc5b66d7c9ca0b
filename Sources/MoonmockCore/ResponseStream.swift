import Foundation

/// A body sent in pieces over time — Server-Sent Events (`mock.sse`), a chunked stream
/// (`mock.stream`), an LLM's tokens (`mock.llm`). A rule answers with the plan; each door walks
/// a ``StreamCursor`` of its own for each request, from its timers: no thread waits, and no Lua
/// VM is held while a stream does.
///
/// Kept in ``MockResponse/fault`` as ``Fault/stream(_:)`` (not a failure), as `mock.proxy` is.
///
/// ```swift
/// let plan = StreamPlan(chunks: [.init(bytes: Array("data: 1\n\n".utf8)), .init(bytes: Array("data: 2\n\n".utf8), delayMilliseconds: 500)])
/// let cursor = plan.start()
/// cursor.next()   // .send(...), then .wait(milliseconds: 500), .send(...), nil
/// ```
public final class StreamPlan: Sendable, Equatable, CustomStringConvertible {
    /// One piece and how long before it (after the piece before, or the head) it is sent.
    public struct Chunk: Sendable, Equatable {
        public let bytes: [UInt8]
        public let delayMilliseconds: Double
        /// An SSE event's `id`, for `Last-Event-ID` resumption.
        public let eventID: String?
        public init(bytes: [UInt8], delayMilliseconds: Double = 0, eventID: String? = nil) {
            self.bytes = bytes
            self.delayMilliseconds = delayMilliseconds
            self.eventID = eventID
        }
    }

    public let chunks: [Chunk]
    /// After the last chunk: end the body (`true`), or keep the stream open until the client leaves.
    public let closes: Bool
    /// Bytes sent every `everyMilliseconds` while nothing else is due (an SSE comment line).
    public let heartbeat: (bytes: [UInt8], everyMilliseconds: Double)?
    /// `sse`, `stream` or `llm`, for the journal and the log.
    public let kind: String

    /// The journal entry of the request this plan answers (set by the engine), whose transcript
    /// the doors record when the stream ends.
    public let journalID: Int?
    /// Chunks left out because the client resumed after an event id.
    public let resumedAfter: Int

    /// More chunks, computed as the stream goes (`nil`: the plan is all there is).
    public let more: (any StreamContinuation)?

    public init(chunks: [Chunk], closes: Bool = true, heartbeat: (bytes: [UInt8], everyMilliseconds: Double)? = nil, kind: String = "stream",
                journalID: Int? = nil, resumedAfter: Int = 0, more: (any StreamContinuation)? = nil) {
        self.more = more
        self.chunks = chunks
        self.closes = closes
        self.heartbeat = heartbeat.flatMap { $0.everyMilliseconds > 0 ? $0 : nil }
        self.kind = kind
        self.journalID = journalID
        self.resumedAfter = resumedAfter
    }

    /// The plan for one request: its journal id, and — when it names a `Last-Event-ID` one of
    /// the events has — the chunks after that event, the first of them at once (an unknown id
    /// starts from the first).
    public func serving(_ request: MockRequest) -> StreamPlan {
        var first = 0
        if let last = request.headers["last-event-id"], let index = chunks.lastIndex(where: { $0.eventID == last }) { first = index + 1 }
        var rest = Array(chunks[first...])
        // A client that reconnects gets the next event at once.
        if first > 0, let next = rest.first { rest[0] = Chunk(bytes: next.bytes, delayMilliseconds: 0, eventID: next.eventID) }
        return StreamPlan(chunks: rest, closes: closes, heartbeat: heartbeat, kind: kind, journalID: request.id, resumedAfter: first, more: more)
    }

    /// A cursor from the first chunk.
    public func start() -> StreamCursor { StreamCursor(plan: self) }

    public static func == (a: StreamPlan, b: StreamPlan) -> Bool { a === b }

    public var description: String { "\(kind)(\(chunks.count) chunks\(closes ? "" : ", kept open"))" }
}

/// The rest of a stream computed while it is sent (`mock.sse(function(req, stream) ... end)`):
/// each call runs the generator until it sleeps or ends, and returns what it sent meanwhile.
/// Called by one door at a time; ``close()`` lets the generator go (the client left, or it ended).
public protocol StreamContinuation: AnyObject, Sendable {
    func next() -> StreamBatch
    func close()
}

/// What a generator sent until it slept or ended.
public struct StreamBatch: Sendable {
    public let chunks: [StreamPlan.Chunk]
    /// It returned (or closed the stream): no more batches.
    public let done: Bool
    /// It failed (the error with its `file:line`); the stream ends.
    public let error: String?
    /// A generator waiting for the host (`mock.fetch`): ask again after this many milliseconds.
    public var pollMilliseconds: Double?
    public init(chunks: [StreamPlan.Chunk], done: Bool, error: String? = nil, pollMilliseconds: Double? = nil) {
        self.chunks = chunks
        self.done = done
        self.error = error
        self.pollMilliseconds = pollMilliseconds
    }
}

/// What a door does next for one streamed answer.
public enum StreamStep: Sendable, Equatable {
    /// Send these bytes now.
    case send([UInt8])
    /// Wait, then ask again.
    case wait(milliseconds: Double)
}

/// One request's walk through a ``StreamPlan``. Used by one door at a time (its loop thread,
/// or the task's queue), which also records the transcript the journal shows.
public final class StreamCursor: @unchecked Sendable {
    let plan: StreamPlan
    private var chunks: [StreamPlan.Chunk]
    private var more: (any StreamContinuation)?
    private var index: Int
    /// Planned time since the head, in ms: waits add up exactly, whatever the timers' lateness.
    private var elapsed = 0.0
    private var dueAt: Double
    private var nextHeartbeat: Double
    private let started = DispatchTime.now().uptimeNanoseconds
    public private(set) var transcript: StreamTranscript

    init(plan: StreamPlan) {
        self.plan = plan
        chunks = plan.chunks
        more = plan.more
        index = 0
        dueAt = plan.chunks.first?.delayMilliseconds ?? .infinity
        nextHeartbeat = plan.heartbeat?.everyMilliseconds ?? .infinity
        transcript = StreamTranscript(kind: plan.kind, resumedAt: plan.resumedAfter)
    }

    /// The journal entry this stream's transcript belongs to.
    public var journalID: Int? { plan.journalID }

    /// The next step; `nil` when the body is complete (never, for a stream kept open).
    public func next() -> StreamStep? {
        if index >= chunks.count, let source = more {
            // The generator's next stretch: what it sends until it sleeps again.
            let batch = source.next()
            if batch.done || batch.error != nil {
                more = nil
                source.close()
            }
            if let error = batch.error { transcript.error = error }
            if !batch.chunks.isEmpty {
                chunks += batch.chunks
                dueAt = elapsed + chunks[index].delayMilliseconds
            } else if batch.error != nil || batch.done {
                dueAt = .infinity
                if plan.closes { nextHeartbeat = .infinity }
            }
            if batch.error != nil { return nil }
            // A stretch that sent nothing and did not end: ask again shortly.
            if index >= chunks.count && more != nil { return .wait(milliseconds: batch.pollMilliseconds ?? 1) }
        }
        let due = min(dueAt, nextHeartbeat)
        if due == .infinity {
            if plan.closes { return nil }
            return .wait(milliseconds: 60_000)   // kept open, silent: until the client leaves
        }
        if elapsed < due {
            let wait = due - elapsed
            elapsed = due
            return .wait(milliseconds: wait)
        }
        if nextHeartbeat <= dueAt, let heartbeat = plan.heartbeat {
            nextHeartbeat += heartbeat.everyMilliseconds
            record(heartbeat.bytes, heartbeat: true)
            return .send(heartbeat.bytes)
        }
        let chunk = chunks[index]
        index += 1
        dueAt = index < chunks.count ? elapsed + chunks[index].delayMilliseconds : (more != nil ? elapsed : .infinity)
        if index >= chunks.count && more == nil && plan.closes { nextHeartbeat = .infinity }
        record(chunk.bytes, heartbeat: false)
        return .send(chunk.bytes)
    }

    /// Records how the stream ended: `"completed"`, `"client left"`, `"server stopped"`.
    public func end(_ reason: String) {
        if let source = more {
            more = nil
            source.close()
        }
        guard transcript.ended == nil else { return }
        transcript.ended = transcript.error != nil ? "error" : reason
        transcript.durationMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
    }

    private func record(_ bytes: [UInt8], heartbeat: Bool) {
        if bytes.isEmpty { return }   // a generator's sleep: a wait, not a piece
        let at = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        if heartbeat { transcript.heartbeats += 1 } else { transcript.chunks += 1 }
        transcript.bytes += bytes.count
        if !heartbeat && transcript.sent.count < StreamTranscript.keptChunks {
            // Text as text; other bytes (protobuf messages) as `base64:…`, which readers can decode.
            let text = String(validating: bytes, as: UTF8.self) != nil ? String(decoding: bytes.prefix(512), as: UTF8.self)
                : "base64:" + Data(bytes.prefix(1536)).base64EncodedString()
            transcript.sent.append(.init(atMilliseconds: at, text: text))
        }
    }
}

/// What a stream sent and how it ended, for the journal.
public struct StreamTranscript: Sendable, Equatable {
    public struct Sent: Sendable, Equatable {
        /// Since the head was sent.
        public let atMilliseconds: Double
        /// The chunk (its first 512 bytes, as text).
        public let text: String
        /// A WebSocket message's way: `in` (from the client) or `out`.
        public var direction: String? = nil
    }
    public static let keptChunks = 200

    public let kind: String
    /// Chunks skipped because the client resumed after an event id.
    public let resumedAt: Int
    public var chunks = 0
    public var heartbeats = 0
    public var bytes = 0
    /// The first ``keptChunks`` chunks.
    public var sent: [Sent] = []
    /// `nil` while the stream is open; `completed`, `client left`, `server stopped` or `error`.
    public var ended: String?
    /// A generator's error, with its `file:line`.
    public var error: String?
    public var durationMilliseconds: Double?

    init(kind: String, resumedAt: Int) {
        self.kind = kind
        self.resumedAt = resumedAt
    }

    /// The transcript as the admin API shows it.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "kind": .string(kind), "chunks": .integer(Int64(chunks)), "heartbeats": .integer(Int64(heartbeats)),
            "bytes": .integer(Int64(bytes)), "ended": ended.map { .string($0) } ?? .null,
            "sent": .array(sent.map { sent in
                var o: [String: JSONValue] = ["at_ms": .double((sent.atMilliseconds * 10).rounded() / 10), "text": .string(sent.text)]
                if let direction = sent.direction { o["direction"] = .string(direction) }
                return .object(o)
            }),
        ]
        if resumedAt > 0 { o["resumed_after"] = .integer(Int64(resumedAt)) }
        if let error { o["error"] = .string(error) }
        if let durationMilliseconds { o["duration_ms"] = .double((durationMilliseconds * 10).rounded() / 10) }
        return .object(o)
    }
}

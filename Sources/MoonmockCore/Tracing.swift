import Foundation

/// A W3C trace context (`traceparent`, `tracestate`): the trace a span belongs to, the span's
/// own id and whether the trace is sampled.
///
/// ```swift
/// let parent = SpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
/// parent?.sampled       // true
/// parent?.traceparent   // the same text back
/// ```
public struct SpanContext: Sendable, Equatable {
    /// The 16-byte trace id as two big-endian halves.
    public var traceHigh: UInt64, traceLow: UInt64
    public var spanID: UInt64
    public var sampled: Bool
    /// The `tracestate` that came with it, passed on unchanged.
    public var traceState: String?

    public init(traceHigh: UInt64, traceLow: UInt64, spanID: UInt64, sampled: Bool, traceState: String? = nil) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.spanID = spanID
        self.sampled = sampled
        self.traceState = traceState
    }

    /// Parses a `traceparent` field (W3C Trace Context, level 2 §3.2): `nil` when it is not a
    /// valid one (then the request starts a trace of its own).
    public init?(traceparent: String, tracestate: String? = nil) {
        let b = Array(traceparent.utf8)
        guard b.count >= 55, b[2] == 0x2D, b[35] == 0x2D, b[52] == 0x2D, let version = Self.hex(b[0..<2]), version != 0xFF else { return nil }
        // Version 00 is exactly 55 characters; a later version may add fields after a dash.
        guard version == 0 ? b.count == 55 : (b.count == 55 || b[55] == 0x2D) else { return nil }
        guard let high = Self.hex(b[3..<19]), let low = Self.hex(b[19..<35]), let span = Self.hex(b[36..<52]),
              let flags = Self.hex(b[53..<55]), high | low != 0, span != 0 else { return nil }
        self.init(traceHigh: high, traceLow: low, spanID: span, sampled: flags & 1 == 1,
                  traceState: tracestate.flatMap { $0.isEmpty || $0.utf8.count > 512 ? nil : $0 })
    }

    /// The `traceparent` field naming this span as the parent.
    public var traceparent: String {
        "00-" + Self.hex(traceHigh) + Self.hex(traceLow) + "-" + Self.hex(spanID) + (sampled ? "-01" : "-00")
    }

    /// The trace id as 32 lower-case hex digits.
    public var traceIDHex: String { Self.hex(traceHigh) + Self.hex(traceLow) }

    /// A non-zero random 64-bit id.
    public static func randomID() -> UInt64 {
        var g = SystemRandomNumberGenerator()
        while true { let n = g.next() as UInt64; if n != 0 { return n } }
    }

    public static func hex(_ n: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0x30, count: 16)
        for i in 0..<16 { out[15 - i] = digits[Int(n >> (4 * UInt64(i)) & 0xF)] }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lower-case hex only, as the specification requires.
    private static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        var n: UInt64 = 0
        for d in digits {
            switch d {
            case 0x30...0x39: n = n << 4 | UInt64(d - 0x30)
            case 0x61...0x66: n = n << 4 | UInt64(d - 0x61 + 10)
            default: return nil
            }
        }
        return n
    }
}

/// Non-zero 64-bit ids from SplitMix64, seeded once from the system's generator: a thread
/// keeps one (``EngineLane``), so an id costs a few multiplications, not a system call.
public struct TraceIDGenerator: Sendable {
    private var state: UInt64 = 0

    public init() {}

    public mutating func next() -> UInt64 {
        if state == 0 { state = SpanContext.randomID() }
        while true {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            if z != 0 { return z }
        }
    }
}

/// An attribute's value, as OTLP carries it.
public enum SpanValue: Sendable, Equatable {
    case string(String), int(Int64), bool(Bool), double(Double)
}

/// An attribute of a span: a key and its value.
public struct SpanAttribute: Sendable, Equatable {
    public let key: String
    public let value: SpanValue
    public init(_ key: String, _ value: SpanValue) {
        self.key = key
        self.value = value
    }
}

/// A finished span, as a ``SpanSink`` takes it.
public struct SpanRecord: Sendable {
    /// OTLP's `SpanKind` numbers.
    public enum Kind: Int, Sendable { case `internal` = 1, server = 2, client = 3 }

    public var context: SpanContext
    public var parentSpanID: UInt64?
    /// Whether the parent came from another process (a `traceparent` field).
    public var parentIsRemote: Bool
    public var name: String
    public var kind: Kind
    /// Nanoseconds since 1970.
    public var start: UInt64, end: UInt64
    public var attributes: [SpanAttribute]
    /// `nil`: unset (a success); else an error, with this message.
    public var error: String?

    public init(context: SpanContext, parentSpanID: UInt64?, parentIsRemote: Bool, name: String, kind: Kind, start: UInt64, end: UInt64,
                attributes: [SpanAttribute] = [], error: String? = nil) {
        self.context = context
        self.parentSpanID = parentSpanID
        self.parentIsRemote = parentIsRemote
        self.name = name
        self.kind = kind
        self.start = start
        self.end = end
        self.attributes = attributes
        self.error = error
    }

    /// Nanoseconds since 1970, now.
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// Where finished spans go: an exporter's queue. `submit` never blocks the caller.
public protocol SpanSink: Sendable {
    func submit(_ span: SpanRecord)
    /// What became of the spans so far (for `/__moonmock/metrics`).
    var statistics: SpanStatistics { get }
}

/// Spans exported and dropped, and failed exports.
public struct SpanStatistics: Sendable, Equatable {
    public var exported = 0
    /// Dropped because the queue was full (the collector slower than the traffic, or away).
    public var droppedQueueFull = 0
    /// Dropped with a batch the collector did not take.
    public var droppedExportFailed = 0
    public var failedExports = 0
    public var queued = 0
    public init() {}
}

/// Which traces are recorded (`OTEL_TRACES_SAMPLER`): always, never, a share of trace ids, or
/// as the incoming `traceparent` says with one of those for requests that start a trace.
public indirect enum TraceSampler: Sendable, Equatable {
    case alwaysOn, alwaysOff
    case ratio(Double)
    case parentBased(root: TraceSampler)

    /// Whether a span of `traceLow`'s trace is recorded, given its parent's context.
    func samples(_ parent: SpanContext?, traceLow: UInt64) -> Bool {
        switch self {
        case .alwaysOn: return true
        case .alwaysOff: return false
        case .ratio(let r):
            // The low 56 bits of the id (random by W3C's level 2) against the share of their range.
            return r >= 1 || Double(traceLow & 0x00FF_FFFF_FFFF_FFFF) < r * 72_057_594_037_927_936.0
        case .parentBased(let root):
            if let parent { return parent.sampled }
            return root.samples(nil, traceLow: traceLow)
        }
    }
}

/// Makes the spans of requests and of the calls their handlers send, and hands them to a
/// ``SpanSink``. `moonmock serve` makes one when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
///
/// ```swift
/// let engine = Engine(tracer: Tracer(sampler: .parentBased(root: .alwaysOn), sink: exporter))
/// ```
public final class Tracer: Sendable {
    public let sampler: TraceSampler
    public let sink: any SpanSink

    public init(sampler: TraceSampler = .parentBased(root: .alwaysOn), sink: any SpanSink) {
        self.sampler = sampler
        self.sink = sink
    }

    /// The span of a request arriving now: a child of its `traceparent` when it has a valid one.
    /// Its ids come from `random`, the thread's own generator (no system call per request).
    func serverSpan(for request: MockRequest, _ random: inout TraceIDGenerator) -> OpenSpan {
        let parent = request.headers["traceparent"].flatMap { SpanContext(traceparent: $0, tracestate: request.headers["tracestate"]) }
        return span(parent: parent, remote: parent != nil, &random)
    }

    /// A span starting now: a child of `parent` (of a new trace when `nil`).
    func span(parent: SpanContext?, remote: Bool) -> OpenSpan {
        var random = TraceIDGenerator()
        return span(parent: parent, remote: remote, &random)
    }

    private func span(parent: SpanContext?, remote: Bool, _ random: inout TraceIDGenerator) -> OpenSpan {
        var context: SpanContext
        if let parent {
            context = parent
            context.spanID = random.next()
        } else {
            context = SpanContext(traceHigh: random.next(), traceLow: random.next(), spanID: random.next(), sampled: true)
        }
        context.sampled = sampler.samples(parent, traceLow: context.traceLow)
        return OpenSpan(context: context, parentSpanID: parent?.spanID, remoteParent: remote, start: SpanRecord.now())
    }

    /// Hands `record` on when its trace is sampled.
    public func submit(_ record: SpanRecord) {
        if record.context.sampled { sink.submit(record) }
    }
}

/// A span not yet ended (a request's while it is answered, or a call's while it waits): its context (what the calls its handler sends name
/// as their parent), when it started, and whether it has ended (it ends once).
public final class OpenSpan: Sendable {
    public let context: SpanContext
    public let parentSpanID: UInt64?
    public let remoteParent: Bool
    public let start: UInt64
    private let ended = AtomicBool(false)
    /// A proxied request's span, finished when the upstream answers (``Engine/endProxiedSpan(_:status:error:)``).
    let pending = Locked<SpanRecord?>(nil)

    init(context: SpanContext, parentSpanID: UInt64?, remoteParent: Bool, start: UInt64) {
        self.context = context
        self.parentSpanID = parentSpanID
        self.remoteParent = remoteParent
        self.start = start
    }

    /// `true` the first time only.
    func end() -> Bool { ended.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged }

    func record(name: String, kind: SpanRecord.Kind, end: UInt64, attributes: [SpanAttribute], error: String?) -> SpanRecord {
        SpanRecord(context: context, parentSpanID: parentSpanID, parentIsRemote: remoteParent, name: name, kind: kind, start: start, end: end,
                   attributes: attributes, error: error)
    }
}

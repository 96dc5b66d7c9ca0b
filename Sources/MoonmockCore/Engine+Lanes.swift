import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one thread keeps of one ``Engine`` between requests, so that a request writes nothing
/// another core reads: the rule-set snapshot it routes with (held here, borrowed per request:
/// no lock, no reference count that every worker shares), its stripe of the engine's striped
/// counters, and a block of request ids.
///
/// Two workers that write the same cache line per request — a lock word, a reference count,
/// a counter — make it move between their cores every time, and each move costs about as much
/// as parsing a request. `MoonmockBench parallel` measures what is left of that.
final class EngineLane {
    let engineSerial: Int
    /// The engine version ``sets`` was read at.
    var version = -1
    var sets: Engine.RuleSets?
    /// `sets`, borrowed for the length of one request.
    var borrowed: Unmanaged<Engine.RuleSets>?
    /// This thread's index into striped counters (see ``StripedCounter``).
    let stripe: Int
    /// Request ids handed out in blocks: the engine's counter is written once per block.
    var nextID = 0
    var lastID = -1
    /// Requests of this engine running on this thread (more than one when a responder asks
    /// the engine again).
    var depth = 0
    /// While a request is routed again after a wait: what its routing learned (budgets claimed,
    /// conditions decided); and the index of the condition that asked to wait.
    var memo: RoutingMemo?
    var waitingPredicate = 0
    /// The journal record this thread's last request pushed out of its ring: the next one is
    /// written into it when nothing else holds it.
    var spareRecord: JournalRecord?
    /// This thread's counts for the metrics (made on first use).
    var metrics: RequestMetrics.Table?
    /// The rule the request being answered was routed to, while the engine traces (its span's name).
    var spanRule: Unmanaged<Rule>?
    /// The ids of this thread's spans.
    var traceIDs = TraceIDGenerator()
    /// Wall-clock seconds minus monotonic seconds, as of `offsetTakenAt` (monotonic ns).
    private var wallOffset = 0.0
    private var offsetTakenAt: UInt64 = 0

    /// Seconds since 1970 at the monotonic instant `now` (nanoseconds): the wall clock is read
    /// once a second per thread, not per request.
    func wallClock(at now: UInt64) -> Double {
        if offsetTakenAt == 0 || now &- offsetTakenAt > 1_000_000_000 {
            wallOffset = Date().timeIntervalSince1970 - Double(now) / 1e9
            offsetTakenAt = now
        }
        return wallOffset + Double(now) / 1e9
    }

    init(engineSerial: Int, stripe: Int) {
        self.engineSerial = engineSerial
        self.stripe = stripe
    }
}

/// The current thread's lanes, one per engine it served (a handful; the least recently used
/// goes when there are more).
enum EngineLanes {
    private final class Table {
        var lanes: [EngineLane] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // Glibc passes the destructor an optional pointer, Darwin a non-optional one: the
        // conversion to an optional compiles with both (and a non-nil value is all either passes).
        pthread_key_create(&key) { raw in
            if let raw = raw as UnsafeMutableRawPointer? { Unmanaged<Table>.fromOpaque(raw).release() }
        }
        return key
    }()

    private static let stripes = AtomicInt(0)
    private static let capacity = 4

    /// The lane of the engine numbered `serial` on this thread.
    static func lane(_ serial: Int) -> EngineLane {
        let table: Unmanaged<Table>
        if let raw = pthread_getspecific(key) {
            // Borrowed: the thread-specific slot keeps the table alive.
            table = Unmanaged<Table>.fromOpaque(raw)
            if let found = table._withUnsafeGuaranteedRef({ table -> EngineLane? in
                if let first = table.lanes.first, first.engineSerial == serial { return first }
                guard let i = table.lanes.firstIndex(where: { $0.engineSerial == serial }) else { return nil }
                let lane = table.lanes.remove(at: i)
                table.lanes.insert(lane, at: 0)
                return lane
            }) { return found }
        } else {
            table = Unmanaged.passRetained(Table())
            pthread_setspecific(key, table.toOpaque())
        }
        // One stripe per thread while there are enough; wrapping is harmless (the stripes are atomic).
        let lane = EngineLane(engineSerial: serial, stripe: stripes.add(1, ordering: .relaxed).oldValue % StripedCounter.stripes)
        table._withUnsafeGuaranteedRef { table in
            table.lanes.insert(lane, at: 0)
            if table.lanes.count > capacity { table.lanes.removeLast() }
        }
        return lane
    }
}

/// A counter that threads add to on stripes of their own (each on its own cache line) and that
/// readers sum: counting on a hot path without a cache line every worker writes.
///
/// ```swift
/// let hits = StripedCounter()
/// hits.add(1, stripe: lane.stripe)
/// hits.total   // the sum over the stripes
/// ```
final class StripedCounter: Sendable {
    /// A power of two at least the number of cores, at most 8.
    static let stripes: Int = {
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        var n = 1
        while n < min(max(cores, 1), 8) { n *= 2 }
        return n
    }()

    /// One counter and padding to fill a cache line (and the next: adjacent-line prefetch).
    private final class Stripe: Sendable {
        let value = AtomicInt(0)
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    private let slots = Stripes { Stripe() }

    func add(_ n: Int, stripe: Int) {
        slots.with(stripe) { _ = $0.value.add(n, ordering: .relaxed) }
    }

    var total: Int { slots.all.reduce(0) { $0 + $1.value.load(ordering: .relaxed) } }
}

/// One object per stripe (``StripedCounter/stripes`` of them), for the thread of that stripe to
/// use: a stripe is read borrowed, not retained and released around its use as one read from an
/// array of them would be (every request records into one).
///
/// ```swift
/// let rings = Stripes { Ring() }
/// rings.with(lane.stripe) { $0.append(entry) }
/// rings.all.count   // StripedCounter.stripes
/// ```
struct Stripes<Element: AnyObject & Sendable>: Sendable {
    /// The objects, which this keeps alive.
    let all: [Element]
    /// The same, unretained.
    private let borrowed: [Unmanaged<Element>]

    init(_ make: () -> Element) {
        all = (0..<StripedCounter.stripes).map { _ in make() }
        borrowed = all.map { Unmanaged.passUnretained($0) }
    }

    /// `body` with the object of `stripe` (any number: it wraps).
    func with<R>(_ stripe: Int, _ body: (Element) -> R) -> R {
        borrowed[stripe & (StripedCounter.stripes - 1)]._withUnsafeGuaranteedRef(body)
    }
}

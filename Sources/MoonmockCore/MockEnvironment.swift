import Foundation

/// Where time, ids and randomness come from, so tests can pin them.
///
/// ```swift
/// let env = MockEnvironment.fixed(now: 1_700_000_000, uuids: ["00000000-0000-0000-0000-000000000001"], seed: 42)
/// ```
public struct MockEnvironment: Sendable {
    /// Seconds since 1970.
    public var now: @Sendable () -> Double {
        didSet { usesSystemClock = false }
    }
    public var uuid: @Sendable () -> String
    public var random: RandomSource
    /// What `mock.fake` and chaos are seeded from (`--seed`, `Moonmock(seed:)`): 0 unless set, so
    /// fake data is the same from run to run, and chaos fails the same requests.
    public var seed: UInt64 = 0
    /// `now` is the real clock: the engine may derive journal timestamps from the monotonic
    /// clock reading it takes anyway, instead of reading the wall clock once more.
    var usesSystemClock = false
    /// Whether `now` is the real clock (the server then writes its `Date` field from `time()`).
    public var isSystemClock: Bool { usesSystemClock }

    public init(now: @escaping @Sendable () -> Double, uuid: @escaping @Sendable () -> String, random: RandomSource, seed: UInt64 = 0) {
        self.now = now
        self.uuid = uuid
        self.random = random
        self.seed = seed
    }

    /// The real clock, random UUIDs and a randomly seeded generator.
    public static var system: MockEnvironment {
        var environment = MockEnvironment(now: { Date().timeIntervalSince1970 },
                                          uuid: { UUID().uuidString.lowercased() },
                                          random: RandomSource(seed: UInt64.random(in: .min ... .max)))
        environment.usesSystemClock = true
        return environment
    }

    /// A pinned clock, UUIDs handed out in order (then counting on), and a seeded generator.
    public static func fixed(now: Double, uuids: [String] = [], seed: UInt64 = 1) -> MockEnvironment {
        let counter = Locked(0)
        return MockEnvironment(
            now: { now },
            uuid: {
                counter.withLock { n in
                    defer { n += 1 }
                    if n < uuids.count { return uuids[n] }
                    let tail = String(n + 1, radix: 16)
                    return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - tail.count)) + tail
                }
            },
            random: RandomSource(seed: seed), seed: seed)
    }

    /// This environment with `seed` for fake data and chaos, and `math.random` seeded by it too.
    public func seeded(_ seed: UInt64) -> MockEnvironment {
        var copy = self
        copy.seed = seed
        copy.random = RandomSource(seed: seed)
        return copy
    }

    /// `now` as an ISO 8601 UTC timestamp with milliseconds.
    public func nowISO8601() -> String {
        let t = now()
        var seconds = time_t(t.rounded(.down))
        let millis = Int((t - t.rounded(.down)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ v: Int32, _ n: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, n - s.count)) + s }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}

/// A thread-safe, seedable generator (SplitMix64): same seed, same sequence.
public final class RandomSource: Sendable {
    private let state: Locked<UInt64>

    public init(seed: UInt64) { state = Locked(seed) }

    public func next() -> UInt64 {
        state.withLock { s in
            s &+= 0x9E37_79B9_7F4A_7C15
            var z = s
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Uniform in [0, 1).
    public func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform integer in `range`.
    public func integer(in range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        if span == 0 { return Int64(bitPattern: next()) }
        return range.lowerBound &+ Int64(bitPattern: next() % span)
    }
}

/// SplitMix64: small, fast and the same everywhere (Swift's own generators are not seedable).
/// A value type: copy it to fork a stream, keep it in a `var` to advance it.
///
/// ```swift
/// var random = SeededRandom(seed: SeededRandom.seed("GET /users/7"))
/// random.below(10)   // the same number on every machine
/// ```
public struct SeededRandom: Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A seed from text (FNV-1a): the same text, the same seed, on every machine.
    public static func seed(_ text: String, _ base: UInt64 = 0) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ base
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    /// Two numbers mixed into one seed (a key's seed and a count, say).
    public static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var r = SeededRandom(seed: a ^ (b &* 0x9E37_79B9_7F4A_7C15))
        return r.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<n (0 when n is 0).
    public mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }

    /// Uniform in [0, 1): the top 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in `low...high` (the bounds in either order).
    public mutating func integer(_ low: Int64, _ high: Int64) -> Int64 {
        let (lo, hi) = low <= high ? (low, high) : (high, low)
        let span = UInt64(bitPattern: hi &- lo) &+ 1
        if span == 0 { return Int64(bitPattern: next()) }
        return lo &+ Int64(bitPattern: next() % span)
    }
}

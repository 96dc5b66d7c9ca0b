/// Percent-decoding for URL components.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`); malformed escapes stay as is.
    public static func decode<S: StringProtocol>(_ s: S, plusAsSpace: Bool = false) -> String {
        guard s.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) else { return String(s) }
        let u = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(u.count)
        var i = 0
        while i < u.count {
            let c = u[i]
            if c == UInt8(ascii: "%"), i + 2 < u.count, let h = hex(u[i + 1]), let l = hex(u[i + 2]) {
                out.append(h << 4 | l); i += 3; continue
            }
            out.append(plusAsSpace && c == UInt8(ascii: "+") ? 0x20 : c)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

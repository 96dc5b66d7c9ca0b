import Foundation

/// A request path split into percent-decoded segments, as byte ranges over one buffer: routing
/// reads it without building a `String` per segment (the trie walk and pattern matching run for
/// every request of both transports, usually with cold caches).
///
/// Only valid inside ``MockRequest/withPathSegments(_:)``.
struct PathSegments {
    let bytes: UnsafeBufferPointer<UInt8>
    /// `count` pairs of start and end offsets into `bytes`.
    let bounds: UnsafeBufferPointer<Int32>
    let count: Int

    /// The bytes of segment `i`.
    subscript(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[Int(bounds[2 * i])..<Int(bounds[2 * i + 1])])
    }

    func string(_ i: Int) -> String { String(decoding: self[i], as: UTF8.self) }

    /// Whether segment `i` is exactly the UTF-8 of `literal`.
    func segment(_ i: Int, equals literal: String) -> Bool {
        let segment = self[i]
        return literal.withUTF8Bytes { l in
            l.count == segment.count && (l.isEmpty || memcmp(l.baseAddress!, segment.baseAddress!, l.count) == 0)
        }
    }

    /// Segments `i...` joined with `/` (what a `*rest` parameter captures).
    func joined(from i: Int) -> String {
        var out: [UInt8] = []
        for j in i..<count {
            if j > i { out.append(UInt8(ascii: "/")) }
            out.append(contentsOf: self[j])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension MockRequest {
    /// Runs `body` with the path's segments. Paths without `%` escapes are read in place;
    /// others are decoded once (the same segments as ``pathSegments``).
    func withPathSegments<R>(_ body: (PathSegments) throws -> R) rethrows -> R {
        var path = self.path
        return try path.withUTF8 { raw in
            if raw.contains(UInt8(ascii: "%")) { return try withDecodedSegments(body) }
            // A segment takes at least one byte and one '/'.
            return try withUnsafeTemporaryAllocation(of: Int32.self, capacity: raw.count + 2) { bounds in
                var n = 0, i = 0
                while i < raw.count {
                    if raw[i] == UInt8(ascii: "/") { i += 1; continue }
                    let start = i
                    while i < raw.count && raw[i] != UInt8(ascii: "/") { i += 1 }
                    bounds[2 * n] = Int32(start)
                    bounds[2 * n + 1] = Int32(i)
                    n += 1
                }
                return try body(PathSegments(bytes: raw, bounds: UnsafeBufferPointer(bounds), count: n))
            }
        }
    }

    private func withDecodedSegments<R>(_ body: (PathSegments) throws -> R) rethrows -> R {
        let segments = pathSegments
        var bytes: [UInt8] = []
        var bounds: [Int32] = []
        for s in segments {
            bounds.append(Int32(bytes.count))
            bytes.append(contentsOf: s.utf8)
            bounds.append(Int32(bytes.count))
        }
        return try bytes.withUnsafeBufferPointer { b in
            try bounds.withUnsafeBufferPointer { try body(PathSegments(bytes: b, bounds: $0, count: segments.count)) }
        }
    }
}

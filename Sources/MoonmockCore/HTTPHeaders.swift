/// An ordered list of header fields; lookups ignore the case of names.
///
/// ```swift
/// var h = HTTPHeaders([("Content-Type", "application/json")])
/// h["content-type"]   // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// `Content-Type: application/json`, built once: copies share its storage.
    public static let json: HTTPHeaders = ["Content-Type": "application/json"]

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The first value for `name`, case-insensitively; setting replaces every field of that name.
    public subscript(name: String) -> String? {
        get {
            for f in fields where f.name.equalsIgnoringASCIICase(name) { return f.value }
            return nil
        }
        set {
            fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
            if let newValue { fields.append((name: name, value: newValue)) }
        }
    }

    /// Every value for `name`.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Appends a field. The strings are taken over (`consuming`): a transport that builds them
    /// for this call hands them on without a retain and a release each.
    public mutating func add(_ name: consuming String, _ value: consuming String) { fields.append((name: name, value: value)) }

    /// Reserves room for `count` fields (a transport that knows how many it will add).
    ///
    /// ```swift
    /// var headers = HTTPHeaders()
    /// headers.reserveCapacity(3)   // one allocation for the three fields that follow
    /// ```
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Sets `name` unless a field of that name exists.
    public mutating func setDefault(_ name: String, _ value: String) {
        if self[name] == nil { add(name, value) }
    }

    public var isEmpty: Bool { fields.isEmpty }
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

extension String {
    /// Runs `body` on the string's UTF-8 bytes without copying the string: `withUTF8` is
    /// `mutating`, so calling it on a `let` costs a copy (a retain and a release) first. Native
    /// strings, small ones included, are read in place; others are made contiguous.
    ///
    /// ```swift
    /// let n = "/users".withUTF8Bytes { $0.count }   // 6
    /// ```
    @inlinable
    public func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }

    /// ASCII case-insensitive comparison, enough for header names and hosts.
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        // Native strings are contiguous: compare the bytes in place (no iterator per byte).
        if let result = a.withContiguousStorageIfAvailable({ x in
            b.withContiguousStorageIfAvailable { y in Self.equalIgnoringASCIICase(x, y) }
        }), let result { return result }
        return zip(a, b).allSatisfy { x, y in Self.sameIgnoringASCIICase(x, y) }
    }

    private static func equalIgnoringASCIICase(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        for i in 0..<x.count where x[i] != y[i] && !sameIgnoringASCIICase(x[i], y[i]) { return false }
        return true
    }

    @inline(__always)
    private static func sameIgnoringASCIICase(_ x: UInt8, _ y: UInt8) -> Bool {
        x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A)
    }

    /// Lower-cases ASCII letters only (header names, hosts, methods).
    public var asciiLowercased: String {
        if !utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { return self }
        return String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Upper-cases ASCII letters only.
    public var asciiUppercased: String {
        if !utf8.contains(where: { $0 >= 0x61 && $0 <= 0x7A }) { return self }
        return String(decoding: utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 & ~0x20 : $0 }, as: UTF8.self)
    }
}

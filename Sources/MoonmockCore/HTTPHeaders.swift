/// An ordered list of header fields; lookups ignore the case of names.
///
/// ```swift
/// var h = HTTPHeaders([("Content-Type", "application/json")])
/// h["content-type"]   // "application/json"
/// ```
///
/// A server hands over a request's header section as it read it (``init(validatedLines:)``):
/// one copy of the bytes, no string per name and value, and one block to free. A lookup reads
/// those lines in place; iterating or changing the list makes the fields into strings first.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private enum Backing {
        case fields([(name: String, value: String)])
        /// Header lines a server has checked: `name:value`, spaces or tabs around the value,
        /// each ending in LF or CRLF; no empty line, no line folding, no CR or NUL in a value.
        case lines([UInt8])
    }
    private var backing: Backing

    public init(_ fields: [(String, String)] = []) {
        backing = .fields(fields.map { (name: $0.0, value: $0.1) })
    }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// A list over header lines a server has read and checked (see the type's description):
    /// made into fields only when iterated or changed.
    ///
    /// ```swift
    /// let h = HTTPHeaders(validatedLines: Array("Host: example.com\r\nAccept: */*\r\n".utf8))
    /// h["accept"]   // "*/*"
    /// ```
    package init(validatedLines: [UInt8]) { backing = .lines(validatedLines) }

    /// Makes the list the header lines in `bytes` (checked as for ``init(validatedLines:)``),
    /// copied into the lines it holds when nothing else shares them: a server that builds
    /// request after request in one ``MockRequest`` allocates no new block for them.
    ///
    /// ```swift
    /// var h = HTTPHeaders(validatedLines: Array("Host: a\r\n".utf8))
    /// Array("Host: b\r\n".utf8).withUnsafeBytes { h.replaceValidatedLines($0) }
    /// h["host"]   // "b"
    /// ```
    package mutating func replaceValidatedLines(_ bytes: UnsafeRawBufferPointer) {
        guard case .lines(var lines) = backing else { backing = .lines(Array(bytes)); return }
        backing = .fields([])   // the enum lets go of the lines: they are unique again if only it held them
        lines.removeAll(keepingCapacity: true)
        lines.append(contentsOf: bytes)
        backing = .lines(lines)
    }

    /// `Content-Type: application/json`, built once: copies share its storage.
    public static let json: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8"]

    /// The fields in order.
    public var fields: [(name: String, value: String)] {
        switch backing {
        case .fields(let fields): return fields
        case .lines(let bytes): return Self.fields(of: bytes)
        }
    }

    /// The lines the list was made from, while it is still those lines (the journal copies them whole).
    package var validatedLines: [UInt8]? {
        if case .lines(let bytes) = backing { return bytes }
        return nil
    }

    /// Whether the two lists share their storage (one is a copy of the other): then they are
    /// equal without a look at the fields. `false` says nothing.
    package func sharesStorage(with other: HTTPHeaders) -> Bool { storageIdentity == other.storageIdentity }

    /// Where the list's storage is, as a plain value: equal for two lists that share it. A holder
    /// that compares lists with one it keeps stores this beside it and compares the values: no
    /// reference to count. (It names the storage only while some list keeps that alive.)
    package var storageIdentity: StorageIdentity {
        switch backing {
        case .fields(let a): a.withUnsafeBufferPointer { StorageIdentity(base: UnsafeRawPointer($0.baseAddress), count: $0.count, lines: false) }
        case .lines(let a): a.withUnsafeBufferPointer { StorageIdentity(base: UnsafeRawPointer($0.baseAddress), count: $0.count, lines: true) }
        }
    }

    /// See ``storageIdentity``.
    package struct StorageIdentity: Equatable {
        let base: UnsafeRawPointer?
        let count: Int
        let lines: Bool
    }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The first value for `name`, case-insensitively; setting replaces every field of that name.
    public subscript(name: String) -> String? {
        get {
            switch backing {
            case .fields(let fields):
                for f in fields where f.name.equalsIgnoringASCIICase(name) { return f.value }
                return nil
            case .lines(let bytes):
                var found: String?
                Self.walk(bytes) { n, v in
                    guard Self.sameName(n, name) else { return false }
                    found = String(decoding: v, as: UTF8.self)
                    return true
                }
                return found
            }
        }
        set {
            var fields = takeFields()
            fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
            if let newValue { fields.append((name: name, value: newValue)) }
            backing = .fields(fields)
        }
    }

    /// Every value for `name`.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Appends a field. The strings are taken over (`consuming`): a transport that builds them
    /// for this call hands them on without a retain and a release each.
    public mutating func add(_ name: consuming String, _ value: consuming String) {
        var fields = takeFields()
        fields.append((name: name, value: value))
        backing = .fields(fields)
    }

    /// Reserves room for `count` fields (a transport that knows how many it will add).
    ///
    /// ```swift
    /// var headers = HTTPHeaders()
    /// headers.reserveCapacity(3)   // one allocation for the three fields that follow
    /// ```
    public mutating func reserveCapacity(_ count: Int) {
        var fields = takeFields()
        fields.reserveCapacity(count)
        backing = .fields(fields)
    }

    /// Sets `name` unless a field of that name exists.
    public mutating func setDefault(_ name: String, _ value: String) {
        if self[name] == nil { add(name, value) }
    }

    public var isEmpty: Bool {
        switch backing {
        case .fields(let fields): return fields.isEmpty
        case .lines(let bytes): return bytes.isEmpty
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// The fields, leaving the list empty for a moment: appending to them then needs no copy.
    private mutating func takeFields() -> [(name: String, value: String)] {
        let fields = self.fields
        backing = .fields([])
        return fields
    }

    private static func fields(of lines: [UInt8]) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        walk(lines) { n, v in
            fields.append((name: String(decoding: n, as: UTF8.self), value: String(decoding: v, as: UTF8.self)))
            return false
        }
        return fields
    }

    /// Each line's name and value bytes, in order, until `body` answers `true`.
    private static func walk(_ lines: [UInt8], _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool) {
        lines.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                var end = start
                while end < all.count && all[end] != 0x0A { end += 1 }
                let next = end + 1
                if end > start && all[end - 1] == 0x0D { end -= 1 }
                var colon = start
                while colon < end && all[colon] != 0x3A { colon += 1 }
                var valueStart = colon + 1, valueEnd = end
                while valueStart < valueEnd && (all[valueStart] == 0x20 || all[valueStart] == 0x09) { valueStart += 1 }
                while valueEnd > valueStart && (all[valueEnd - 1] == 0x20 || all[valueEnd - 1] == 0x09) { valueEnd -= 1 }
                if colon < end,
                   body(UnsafeRawBufferPointer(rebasing: all[start..<colon]),
                        UnsafeRawBufferPointer(rebasing: all[valueStart..<valueEnd])) {
                    return
                }
                start = next
            }
        }
    }

    private static func sameName(_ bytes: UnsafeRawBufferPointer, _ name: String) -> Bool {
        name.withUTF8Bytes { wanted in
            bytes.count == wanted.count && String.equalIgnoringASCIICase(bytes.assumingMemoryBound(to: UInt8.self), wanted)
        }
    }
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

    /// Bytes of equal count, equal but for the case of ASCII letters.
    fileprivate static func equalIgnoringASCIICase(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
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

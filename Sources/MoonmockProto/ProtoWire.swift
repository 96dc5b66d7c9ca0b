/// Protocol Buffers' wire format: varints, tags and the four wire types in use (groups are
/// skipped whole). Written here, fuzzed (`scripts/fuzz proto`), no dependency.
///
/// ```swift
/// var w = ProtoWriter()
/// w.tag(1, .varint); w.varint(150)          // 08 96 01
/// var r = ProtoReader(w.bytes)
/// let (field, type) = try r.tag()!          // (1, .varint)
/// try r.varint()                            // 150
/// ```
public enum WireType: UInt8, Sendable {
    case varint = 0, fixed64 = 1, lengthDelimited = 2, startGroup = 3, endGroup = 4, fixed32 = 5
}

/// Why bytes are not a message of the type they were read as.
public struct ProtoError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Reads fields off a message's bytes, bounds-checked.
public struct ProtoReader {
    let bytes: [UInt8]
    public private(set) var offset: Int
    let end: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
        end = bytes.count
    }

    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        offset = range.lowerBound
        end = range.upperBound
    }

    public var isAtEnd: Bool { offset >= end }

    /// The next field's number and wire type, or `nil` at the end.
    public mutating func tag() throws -> (Int, WireType)? {
        guard offset < end else { return nil }
        let key = try varint()
        guard let type = WireType(rawValue: UInt8(key & 7)) else { throw ProtoError("wire type \(key & 7) at byte \(offset)") }
        let number = key >> 3
        guard number >= 1, number <= 536_870_911 else { throw ProtoError("field number \(number) out of range") }
        return (Int(number), type)
    }

    public mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw ProtoError("a varint runs past the end") }
            let byte = bytes[offset]
            offset += 1
            if shift == 63 && byte > 1 { throw ProtoError("a varint longer than 64 bits") }
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { throw ProtoError("a varint longer than 10 bytes") }
        }
    }

    public mutating func fixed32() throws -> UInt32 {
        guard end - offset >= 4 else { throw ProtoError("a fixed32 runs past the end") }
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        offset += 4
        return value
    }

    public mutating func fixed64() throws -> UInt64 {
        guard end - offset >= 8 else { throw ProtoError("a fixed64 runs past the end") }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return value
    }

    /// A length-delimited field's range of bytes.
    public mutating func lengthDelimited() throws -> Range<Int> {
        let length = try varint()
        guard length <= UInt64(end - offset) else { throw ProtoError("a \(length)-byte field runs past the end") }
        let start = offset
        offset += Int(length)
        return start..<offset
    }

    public mutating func bytesField() throws -> [UInt8] { Array(bytes[try lengthDelimited()]) }

    /// A reader over a nested message's bytes.
    public func nested(_ range: Range<Int>) -> ProtoReader { ProtoReader(bytes, range: range) }

    /// Skips a field of `type` (a group up to its end, nested groups at most 64 deep).
    public mutating func skip(_ type: WireType, number: Int, depth: Int = 0) throws {
        switch type {
        case .varint: _ = try varint()
        case .fixed64: _ = try fixed64()
        case .fixed32: _ = try fixed32()
        case .lengthDelimited: _ = try lengthDelimited()
        case .startGroup:
            guard depth < 64 else { throw ProtoError("groups nested too deep") }
            while let (n, t) = try tag() {
                if t == .endGroup {
                    guard n == number else { throw ProtoError("group \(number) ended by \(n)") }
                    return
                }
                try skip(t, number: n, depth: depth + 1)
            }
            throw ProtoError("group \(number) has no end")
        case .endGroup: throw ProtoError("an end of group \(number) without its start")
        }
    }
}

/// Writes a message's fields.
public struct ProtoWriter {
    public var bytes: [UInt8] = []

    public init() {}

    public mutating func tag(_ number: Int, _ type: WireType) { varint(UInt64(number) << 3 | UInt64(type.rawValue)) }

    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    public mutating func fixed32(_ value: UInt32) {
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    public mutating func fixed64(_ value: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    public mutating func lengthDelimited(_ payload: [UInt8]) {
        varint(UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }

    /// ZigZag (sint32, sint64).
    public static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    public static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1) }
}

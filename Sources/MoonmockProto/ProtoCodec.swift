import Foundation
import MoonmockCore

/// Messages as JSON values in the proto3 JSON mapping, driven by a ``ProtoSchema``: fields by
/// their JSON names (the `.proto` names are read too), enums by name, 64-bit integers as
/// strings, `bytes` as base64, maps as objects, and the well-known types in their own forms
/// (``ProtoCodec+WellKnown``). Fields at their default are left out unless they have presence.
///
/// ```swift
/// let codec = ProtoCodec(schema)
/// let bytes = try codec.encode(.object(["id": .string("7")]), as: "shop.v1.GetOrderRequest")
/// try codec.decode(bytes, as: "shop.v1.GetOrderRequest")   // {"id":"7"}
/// ```
public struct ProtoCodec: Sendable {
    public let schema: ProtoSchema
    /// Nesting deeper than this is refused (a hostile message cannot exhaust the stack).
    static let maxDepth = 100

    public init(_ schema: ProtoSchema) { self.schema = schema }

    // MARK: decoding

    public func decode(_ bytes: [UInt8], as type: String) throws -> JSONValue {
        try decode(ProtoReader(bytes), type: type, depth: 0)
    }

    func decode(_ reader: ProtoReader, type: String, depth: Int) throws -> JSONValue {
        guard depth < Self.maxDepth else { throw ProtoError("messages nested more than \(Self.maxDepth) deep") }
        if let special = try decodeWellKnown(reader, type: type, depth: depth) { return special }
        guard let message = schema.messages[type] else { throw ProtoError("unknown message type \(type)") }
        var r = reader
        var object: [String: JSONValue] = [:]
        var lists: [String: [JSONValue]] = [:]
        var maps: [String: [String: JSONValue]] = [:]
        while let (number, wire) = try r.tag() {
            guard let field = message.field(number: number) else {
                try r.skip(wire, number: number)
                continue
            }
            if field.type == .message, let entry = schema.messages[field.typeName], entry.isMapEntry {
                guard wire == .lengthDelimited else { throw ProtoError("\(type).\(field.name): a map entry with wire type \(wire)") }
                let (key, value) = try decodeMapEntry(r.nested(try r.lengthDelimited()), entry, depth: depth)
                maps[field.jsonName, default: [:]][key] = value
                continue
            }
            if field.repeated && wire == .lengthDelimited && field.type.isPackable {
                // Packed: a run of values in one field (read whatever the descriptor prefers).
                var packed = r.nested(try r.lengthDelimited())
                while !packed.isAtEnd { lists[field.jsonName, default: []].append(try scalar(&packed, field, wire: field.type.wireType)) }
                continue
            }
            guard wire == field.type.wireType else {
                throw ProtoError("\(type).\(field.name) (\(field.type)) arrived with wire type \(wire)")
            }
            let value: JSONValue
            switch field.type {
            case .message:
                value = try decode(r.nested(try r.lengthDelimited()), type: field.typeName, depth: depth + 1)
            case .group:
                try r.skip(.startGroup, number: number)
                continue
            default:
                value = try scalar(&r, field, wire: wire)
            }
            if field.repeated {
                lists[field.jsonName, default: []].append(value)
            } else if field.type == .message, case .object(let earlier)? = object[field.jsonName], case .object(let later) = value {
                object[field.jsonName] = .object(earlier.merging(later) { _, b in b })   // a message sent in parts merges
            } else {
                if let oneof = field.oneof {   // the last member of a oneof wins
                    for other in message.fields where other.oneof == oneof && other.number != field.number { object[other.jsonName] = nil }
                }
                object[field.jsonName] = value
            }
        }
        for (name, list) in lists { object[name] = .array(list) }
        for (name, map) in maps { object[name] = .object(map) }
        // Defaults are left out (proto3 JSON), except where the field has presence.
        for field in message.fields where !field.repeated && !field.hasPresence {
            if let value = object[field.jsonName], isDefault(value, field) { object[field.jsonName] = nil }
        }
        return .object(object)
    }

    private func decodeMapEntry(_ reader: ProtoReader, _ entry: ProtoMessage, depth: Int) throws -> (String, JSONValue) {
        var r = reader
        var key: JSONValue?, value: JSONValue?
        let keyField = entry.field(number: 1), valueField = entry.field(number: 2)
        while let (number, wire) = try r.tag() {
            if number == 1, let keyField, wire == keyField.type.wireType {
                key = try scalar(&r, keyField, wire: wire)
            } else if number == 2, let valueField, wire == valueField.type.wireType {
                value = valueField.type == .message
                    ? try decode(r.nested(try r.lengthDelimited()), type: valueField.typeName, depth: depth + 1)
                    : try scalar(&r, valueField, wire: wire)
            } else {
                try r.skip(wire, number: number)
            }
        }
        let keyText: String
        switch key ?? keyField.map({ defaultValue($0) }) ?? .string("") {
        case .string(let s): keyText = s
        case .bool(let b): keyText = b ? "true" : "false"
        case .integer(let i): keyText = String(i)
        case let other: keyText = other.brief
        }
        return (keyText, value ?? valueField.map { defaultValue($0) } ?? .null)
    }

    /// One scalar (or enum) value of `field`.
    func scalar(_ r: inout ProtoReader, _ field: ProtoField, wire: WireType) throws -> JSONValue {
        switch field.type {
        case .int32: return .integer(Int64(Int32(truncatingIfNeeded: try r.varint())))
        case .int64: return .string(String(Int64(bitPattern: try r.varint())))
        case .uint32: return .integer(Int64(UInt32(truncatingIfNeeded: try r.varint())))
        case .uint64: return .string(String(try r.varint()))
        case .sint32: return .integer(Int64(Int32(truncatingIfNeeded: ProtoWriter.unzigzag(try r.varint()))))
        case .sint64: return .string(String(ProtoWriter.unzigzag(try r.varint())))
        case .fixed32: return .integer(Int64(try r.fixed32()))
        case .sfixed32: return .integer(Int64(Int32(bitPattern: try r.fixed32())))
        case .fixed64: return .string(String(try r.fixed64()))
        case .sfixed64: return .string(String(Int64(bitPattern: try r.fixed64())))
        case .bool: return .bool(try r.varint() != 0)
        case .float: return Self.number(Double(Float(bitPattern: try r.fixed32())))
        case .double: return Self.number(Double(bitPattern: try r.fixed64()))
        case .string:
            let bytes = try r.bytesField()
            guard let text = String(validating: bytes, as: UTF8.self) else { throw ProtoError("\(field.name): a string that is not UTF-8") }
            return .string(text)
        case .bytes: return .string(Data(try r.bytesField()).base64EncodedString())
        case .enum:
            let n = Int32(truncatingIfNeeded: try r.varint())
            if field.typeName == "google.protobuf.NullValue" { return .null }
            return schema.enums[field.typeName]?.name(of: n).map(JSONValue.string) ?? .integer(Int64(n))
        case .message, .group: throw ProtoError("\(field.name): not a scalar")
        }
    }

    static func number(_ d: Double) -> JSONValue {
        if d.isNaN { return .string("NaN") }
        if d.isInfinite { return .string(d > 0 ? "Infinity" : "-Infinity") }
        return .double(d)
    }

    func isDefault(_ value: JSONValue, _ field: ProtoField) -> Bool {
        switch value {
        case .integer(let i): return i == 0
        case .double(let d): return d == 0 && d.sign == .plus
        case .bool(let b): return !b
        case .string(let s):
            if field.type == .enum { return schema.enums[field.typeName]?.number(of: s) == 0 }
            return s.isEmpty || (s == "0" && [.int64, .uint64, .sint64, .fixed64, .sfixed64].contains(field.type))
        default: return false
        }
    }

    func defaultValue(_ field: ProtoField) -> JSONValue {
        switch field.type {
        case .int64, .uint64, .sint64, .fixed64, .sfixed64: return .string("0")
        case .bool: return .bool(false)
        case .string, .bytes: return .string("")
        case .double, .float: return .double(0)
        case .enum: return schema.enums[field.typeName]?.name(of: 0).map(JSONValue.string) ?? .integer(0)
        case .message, .group: return .object([:])
        default: return .integer(0)
        }
    }
}

import Foundation
import MoonmockCore

extension ProtoCodec {
    /// The message of `type` for a JSON value in the proto3 JSON mapping. A key that names no
    /// field, or a value of the wrong shape, throws an error naming its path
    /// (`order.items[2].price: expected a number, got "ten"`).
    public func encode(_ value: JSONValue, as type: String) throws -> [UInt8] {
        var w = ProtoWriter()
        try encode(value, type: type, into: &w, depth: 0, path: Self.shortName(type))
        return w.bytes
    }

    static func shortName(_ type: String) -> String { String(type.split(separator: ".").last ?? Substring(type)) }

    func encode(_ value: JSONValue, type: String, into w: inout ProtoWriter, depth: Int, path: String) throws {
        guard depth < Self.maxDepth else { throw ProtoError("\(path): nested more than \(Self.maxDepth) deep") }
        if try encodeWellKnown(value, type: type, into: &w, depth: depth, path: path) { return }
        guard let message = schema.messages[type] else { throw ProtoError("\(path): unknown message type \(type)") }
        guard case .object(let object) = value else { throw ProtoError("\(path): expected an object (\(type)), got \(value.brief)") }
        for key in object.keys where message.field(named: key) == nil {
            let names = message.fields.map(\.jsonName).joined(separator: ", ")
            throw ProtoError("\(path).\(key): \(type) has no such field (its fields: \(names.isEmpty ? "none" : names))")
        }
        for field in message.fields.sorted(by: { $0.number < $1.number }) {
            guard let value = object[field.jsonName] ?? object[field.name] else { continue }
            let at = path + "." + field.jsonName
            if case .null = value, field.typeName != "google.protobuf.Value" { continue }
            if field.type == .message, let entry = schema.messages[field.typeName], entry.isMapEntry {
                guard case .object(let map) = value else { throw ProtoError("\(at): expected an object (a map), got \(value.brief)") }
                guard let keyField = entry.field(number: 1), let valueField = entry.field(number: 2) else { continue }
                for key in map.keys.sorted() {
                    var e = ProtoWriter()
                    try encodeSingle(try mapKey(key, keyField, at), keyField, into: &e, depth: depth, path: at)
                    try encodeSingle(map[key]!, valueField, into: &e, depth: depth, path: "\(at).\(key)")
                    w.tag(field.number, .lengthDelimited)
                    w.lengthDelimited(e.bytes)
                }
                continue
            }
            if field.repeated {
                guard case .array(let items) = value else { throw ProtoError("\(at): expected an array, got \(value.brief)") }
                if field.packed == true && field.type.isPackable {
                    if items.isEmpty { continue }
                    var p = ProtoWriter()
                    for (i, item) in items.enumerated() { try writeScalar(item, field, into: &p, path: "\(at)[\(i)]") }
                    w.tag(field.number, .lengthDelimited)
                    w.lengthDelimited(p.bytes)
                } else {
                    for (i, item) in items.enumerated() {
                        try encodeSingle(item, field, into: &w, depth: depth, path: "\(at)[\(i)]", keepDefault: true)
                    }
                }
                continue
            }
            try encodeSingle(value, field, into: &w, depth: depth, path: at, keepDefault: field.hasPresence)
        }
    }

    /// A map key from its JSON text (keys of maps are strings in JSON).
    private func mapKey(_ key: String, _ field: ProtoField, _ path: String) throws -> JSONValue {
        switch field.type {
        case .string: return .string(key)
        case .bool:
            guard key == "true" || key == "false" else { throw ProtoError("\(path): map key \(key) is not a bool") }
            return .bool(key == "true")
        default: return .string(key)
        }
    }

    /// One value of `field` with its tag (a default value is left out unless `keepDefault`).
    private func encodeSingle(_ value: JSONValue, _ field: ProtoField, into w: inout ProtoWriter, depth: Int, path: String,
                              keepDefault: Bool = true) throws {
        switch field.type {
        case .message:
            var nested = ProtoWriter()
            try encode(value, type: field.typeName, into: &nested, depth: depth + 1, path: path)
            w.tag(field.number, .lengthDelimited)
            w.lengthDelimited(nested.bytes)
        case .group:
            throw ProtoError("\(path): groups (proto2) are not supported")
        default:
            var scalar = ProtoWriter()
            try writeScalar(value, field, into: &scalar, path: path)
            if !keepDefault && Self.isDefaultEncoding(scalar.bytes, field) { return }
            w.tag(field.number, field.type.wireType)
            w.bytes += scalar.bytes
        }
    }

    static func isDefaultEncoding(_ bytes: [UInt8], _ field: ProtoField) -> Bool {
        switch field.type {
        case .string, .bytes: return bytes == [0]
        default: return bytes.allSatisfy { $0 == 0 }
        }
    }

    /// A scalar's bytes without a tag (`string` and `bytes` with their length).
    func writeScalar(_ value: JSONValue, _ field: ProtoField, into w: inout ProtoWriter, path: String) throws {
        switch field.type {
        case .int32, .sint32, .sfixed32:
            let n = try integer(value, path, min: Int64(Int32.min), max: Int64(Int32.max))
            if field.type == .int32 { w.varint(UInt64(bitPattern: n)) }
            else if field.type == .sint32 { w.varint(UInt64(UInt32(truncatingIfNeeded: (Int32(n) << 1) ^ (Int32(n) >> 31)))) }
            else { w.fixed32(UInt32(bitPattern: Int32(n))) }
        case .uint32, .fixed32:
            let n = try integer(value, path, min: 0, max: Int64(UInt32.max))
            if field.type == .uint32 { w.varint(UInt64(n)) } else { w.fixed32(UInt32(n)) }
        case .int64, .sint64, .sfixed64:
            let n = try integer(value, path, min: Int64.min, max: Int64.max)
            if field.type == .int64 { w.varint(UInt64(bitPattern: n)) }
            else if field.type == .sint64 { w.varint(ProtoWriter.zigzag(n)) }
            else { w.fixed64(UInt64(bitPattern: n)) }
        case .uint64, .fixed64:
            let n = try unsigned64(value, path)
            if field.type == .uint64 { w.varint(n) } else { w.fixed64(n) }
        case .bool:
            guard case .bool(let b) = value else { throw ProtoError("\(path): expected true or false, got \(value.brief)") }
            w.varint(b ? 1 : 0)
        case .float: w.fixed32(Float(try double(value, path)).bitPattern)
        case .double: w.fixed64(try double(value, path).bitPattern)
        case .string:
            guard case .string(let s) = value else { throw ProtoError("\(path): expected a string, got \(value.brief)") }
            w.lengthDelimited(Array(s.utf8))
        case .bytes:
            guard case .string(let s) = value, let data = Self.base64(s) else {
                throw ProtoError("\(path): expected base64 text (bytes), got \(value.brief)")
            }
            w.lengthDelimited(data)
        case .enum:
            if field.typeName == "google.protobuf.NullValue" { return w.varint(0) }
            switch value {
            case .string(let name):
                guard let n = schema.enums[field.typeName]?.number(of: name) else {
                    let names = schema.enums[field.typeName]?.values.map(\.0).joined(separator: ", ") ?? ""
                    throw ProtoError("\(path): \(name) is not a value of \(field.typeName) (\(names))")
                }
                w.varint(UInt64(bitPattern: Int64(n)))
            case .integer(let n) where n >= Int64(Int32.min) && n <= Int64(Int32.max):
                w.varint(UInt64(bitPattern: n))
            default:
                throw ProtoError("\(path): expected an enum name of \(field.typeName), got \(value.brief)")
            }
        case .message, .group:
            throw ProtoError("\(path): not a scalar")
        }
    }

    func integer(_ value: JSONValue, _ path: String, min: Int64, max: Int64) throws -> Int64 {
        let n: Int64?
        switch value {
        case .integer(let i): n = i
        case .double(let d) where d == d.rounded() && abs(d) < 9.2e18: n = Int64(d)
        case .string(let s): n = Int64(s) ?? Double(s).flatMap { $0 == $0.rounded() && abs($0) < 9.2e18 ? Int64($0) : nil }
        default: n = nil
        }
        guard let n, n >= min, n <= max else { throw ProtoError("\(path): expected an integer from \(min) to \(max), got \(value.brief)") }
        return n
    }

    func unsigned64(_ value: JSONValue, _ path: String) throws -> UInt64 {
        switch value {
        case .integer(let i) where i >= 0: return UInt64(i)
        case .double(let d) where d >= 0 && d == d.rounded() && d < 1.8e19: return UInt64(d)
        case .string(let s): if let n = UInt64(s) { return n }
        default: break
        }
        throw ProtoError("\(path): expected an unsigned integer, got \(value.brief)")
    }

    func double(_ value: JSONValue, _ path: String) throws -> Double {
        switch value {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let s): if let d = Double(s) { return d }
        default: break
        }
        throw ProtoError("\(path): expected a number, got \(value.brief)")
    }

    /// Standard or URL-safe base64, padded or not.
    static func base64(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map { Array($0) }
    }
}

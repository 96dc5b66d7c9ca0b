import Foundation
import MoonmockCore

/// The well-known types' JSON forms (protobuf's JSON mapping): `Timestamp` as RFC 3339 text,
/// `Duration` as `"1.5s"`, `Struct`/`Value`/`ListValue` as plain JSON, the wrappers as their
/// value, `FieldMask` as `"a.b,c"`, `Any` as `{"@type": url, ...}`. Their field numbers are
/// fixed by protobuf, so they work whether or not the descriptor set carries them.
extension ProtoCodec {
    static let wrappers: [String: ProtoField.Kind] = [
        "google.protobuf.DoubleValue": .double, "google.protobuf.FloatValue": .float, "google.protobuf.Int64Value": .int64,
        "google.protobuf.UInt64Value": .uint64, "google.protobuf.Int32Value": .int32, "google.protobuf.UInt32Value": .uint32,
        "google.protobuf.BoolValue": .bool, "google.protobuf.StringValue": .string, "google.protobuf.BytesValue": .bytes,
    ]

    static func wrapperField(_ kind: ProtoField.Kind) -> ProtoField {
        ProtoField(name: "value", jsonName: "value", number: 1, type: kind, repeated: false, typeName: "", oneof: nil, packed: nil)
    }

    func decodeWellKnown(_ reader: ProtoReader, type: String, depth: Int) throws -> JSONValue? {
        guard type.hasPrefix("google.protobuf.") else { return nil }
        var r = reader
        switch type {
        case "google.protobuf.Timestamp", "google.protobuf.Duration":
            var seconds: Int64 = 0, nanos: Int32 = 0
            while let (n, t) = try r.tag() {
                if n == 1 && t == .varint { seconds = Int64(bitPattern: try r.varint()) }
                else if n == 2 && t == .varint { nanos = Int32(truncatingIfNeeded: try r.varint()) }
                else { try r.skip(t, number: n) }
            }
            return .string(type.hasSuffix("Timestamp") ? Self.timestamp(seconds, nanos) : Self.duration(seconds, nanos))
        case "google.protobuf.Struct":
            var object: [String: JSONValue] = [:]
            while let (n, t) = try r.tag() {
                guard n == 1 && t == .lengthDelimited else { try r.skip(t, number: n); continue }
                var entry = r.nested(try r.lengthDelimited())
                var key = "", value = JSONValue.null
                while let (en, et) = try entry.tag() {
                    if en == 1 && et == .lengthDelimited { key = String(decoding: try entry.bytesField(), as: UTF8.self) }
                    else if en == 2 && et == .lengthDelimited { value = try decode(entry.nested(try entry.lengthDelimited()), type: "google.protobuf.Value", depth: depth + 1) }
                    else { try entry.skip(et, number: en) }
                }
                object[key] = value
            }
            return .object(object)
        case "google.protobuf.ListValue":
            var list: [JSONValue] = []
            while let (n, t) = try r.tag() {
                if n == 1 && t == .lengthDelimited { list.append(try decode(r.nested(try r.lengthDelimited()), type: "google.protobuf.Value", depth: depth + 1)) }
                else { try r.skip(t, number: n) }
            }
            return .array(list)
        case "google.protobuf.Value":
            var value = JSONValue.null
            while let (n, t) = try r.tag() {
                switch (n, t) {
                case (1, .varint): _ = try r.varint(); value = .null
                case (2, .fixed64): value = Self.number(Double(bitPattern: try r.fixed64()))
                case (3, .lengthDelimited): value = .string(String(decoding: try r.bytesField(), as: UTF8.self))
                case (4, .varint): value = .bool(try r.varint() != 0)
                case (5, .lengthDelimited): value = try decode(r.nested(try r.lengthDelimited()), type: "google.protobuf.Struct", depth: depth + 1)
                case (6, .lengthDelimited): value = try decode(r.nested(try r.lengthDelimited()), type: "google.protobuf.ListValue", depth: depth + 1)
                default: try r.skip(t, number: n)
                }
            }
            if case .double(let d) = value, d == d.rounded(), abs(d) < 9e15 { value = .integer(Int64(d)) }
            return value
        case "google.protobuf.FieldMask":
            var paths: [String] = []
            while let (n, t) = try r.tag() {
                if n == 1 && t == .lengthDelimited { paths.append(ProtoField.camelCase(String(decoding: try r.bytesField(), as: UTF8.self))) }
                else { try r.skip(t, number: n) }
            }
            return .string(paths.joined(separator: ","))
        case "google.protobuf.Any":
            var url = "", payload: [UInt8] = []
            while let (n, t) = try r.tag() {
                if n == 1 && t == .lengthDelimited { url = String(decoding: try r.bytesField(), as: UTF8.self) }
                else if n == 2 && t == .lengthDelimited { payload = try r.bytesField() }
                else { try r.skip(t, number: n) }
            }
            if url.isEmpty { return .object([:]) }
            let inner = String(url.split(separator: "/").last ?? "")
            guard inner.hasPrefix("google.protobuf.") || schema.messages[inner] != nil else {
                return .object(["@type": .string(url), "value": .string(Data(payload).base64EncodedString())])
            }
            let decoded = try decode(ProtoReader(payload), type: inner, depth: depth + 1)
            if case .object(var fields) = decoded, !Self.hasSpecialJSON(inner) {
                fields["@type"] = .string(url)
                return .object(fields)
            }
            return .object(["@type": .string(url), "value": decoded])
        default:
            guard let kind = Self.wrappers[type] else { return nil }
            var value = defaultValue(Self.wrapperField(kind))
            let field = Self.wrapperField(kind)
            while let (n, t) = try r.tag() {
                if n == 1 && t == kind.wireType { value = try scalar(&r, field, wire: t) } else { try r.skip(t, number: n) }
            }
            return value
        }
    }

    /// Types whose JSON is not an object of their fields (inside `Any` they go under `value`).
    static func hasSpecialJSON(_ type: String) -> Bool {
        wrappers[type] != nil || ["google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.Struct",
                                  "google.protobuf.Value", "google.protobuf.ListValue", "google.protobuf.FieldMask"].contains(type)
    }

    func encodeWellKnown(_ value: JSONValue, type: String, into w: inout ProtoWriter, depth: Int, path: String) throws -> Bool {
        guard type.hasPrefix("google.protobuf.") else { return false }
        switch type {
        case "google.protobuf.Timestamp", "google.protobuf.Duration":
            guard case .string(let text) = value,
                  let (seconds, nanos) = type.hasSuffix("Timestamp") ? Self.parseTimestamp(text) : Self.parseDuration(text) else {
                let form = type.hasSuffix("Timestamp") ? "RFC 3339 text (\"2026-01-02T03:04:05Z\")" : "a duration (\"1.5s\")"
                throw ProtoError("\(path): expected \(form), got \(value.brief)")
            }
            if seconds != 0 { w.tag(1, .varint); w.varint(UInt64(bitPattern: seconds)) }
            if nanos != 0 { w.tag(2, .varint); w.varint(UInt64(bitPattern: Int64(nanos))) }
        case "google.protobuf.Struct":
            guard case .object(let object) = value else { throw ProtoError("\(path): expected an object (Struct), got \(value.brief)") }
            for key in object.keys.sorted() {
                var entry = ProtoWriter()
                entry.tag(1, .lengthDelimited)
                entry.lengthDelimited(Array(key.utf8))
                var inner = ProtoWriter()
                _ = try encodeWellKnown(object[key]!, type: "google.protobuf.Value", into: &inner, depth: depth + 1, path: "\(path).\(key)")
                entry.tag(2, .lengthDelimited)
                entry.lengthDelimited(inner.bytes)
                w.tag(1, .lengthDelimited)
                w.lengthDelimited(entry.bytes)
            }
        case "google.protobuf.ListValue":
            guard case .array(let items) = value else { throw ProtoError("\(path): expected an array (ListValue), got \(value.brief)") }
            for (i, item) in items.enumerated() {
                var inner = ProtoWriter()
                _ = try encodeWellKnown(item, type: "google.protobuf.Value", into: &inner, depth: depth + 1, path: "\(path)[\(i)]")
                w.tag(1, .lengthDelimited)
                w.lengthDelimited(inner.bytes)
            }
        case "google.protobuf.Value":
            guard depth < Self.maxDepth else { throw ProtoError("\(path): nested more than \(Self.maxDepth) deep") }
            switch value {
            case .null: w.tag(1, .varint); w.varint(0)
            case .integer(let i): w.tag(2, .fixed64); w.fixed64(Double(i).bitPattern)
            case .double(let d): w.tag(2, .fixed64); w.fixed64(d.bitPattern)
            case .string(let s): w.tag(3, .lengthDelimited); w.lengthDelimited(Array(s.utf8))
            case .bool(let b): w.tag(4, .varint); w.varint(b ? 1 : 0)
            case .object, .array:
                var inner = ProtoWriter()
                let isObject: Bool
                if case .object = value { isObject = true } else { isObject = false }
                _ = try encodeWellKnown(value, type: isObject ? "google.protobuf.Struct" : "google.protobuf.ListValue", into: &inner, depth: depth + 1, path: path)
                w.tag(isObject ? 5 : 6, .lengthDelimited)
                w.lengthDelimited(inner.bytes)
            }
        case "google.protobuf.FieldMask":
            guard case .string(let text) = value else { throw ProtoError("\(path): expected \"a.b,c\" (FieldMask), got \(value.brief)") }
            for p in text.split(separator: ",") where !p.isEmpty {
                let snake = p.map { $0.isUppercase ? "_" + $0.lowercased() : String($0) }.joined()
                w.tag(1, .lengthDelimited)
                w.lengthDelimited(Array(snake.utf8))
            }
        case "google.protobuf.Any":
            guard case .object(var fields) = value, case .string(let url)? = fields.removeValue(forKey: "@type") else {
                if case .object(let o) = value, o.isEmpty { return true }
                throw ProtoError("\(path): expected an object with \"@type\" (Any), got \(value.brief)")
            }
            let inner = String(url.split(separator: "/").last ?? "")
            let payload = try encode(Self.hasSpecialJSON(inner) ? (fields["value"] ?? .null) : .object(fields), as: inner)
            w.tag(1, .lengthDelimited)
            w.lengthDelimited(Array(url.utf8))
            w.tag(2, .lengthDelimited)
            w.lengthDelimited(payload)
        default:
            guard let kind = Self.wrappers[type] else { return false }
            var scalar = ProtoWriter()
            try writeScalar(value, Self.wrapperField(kind), into: &scalar, path: path)
            if !Self.isDefaultEncoding(scalar.bytes, Self.wrapperField(kind)) {
                w.tag(1, kind.wireType)
                w.bytes += scalar.bytes
            }
        }
        return true
    }
}

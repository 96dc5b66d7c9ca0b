import MoonmockCore

extension ProtoCodec {
    /// An example message of `type` in the proto3 JSON mapping, for `moonmock convert proto`:
    /// every field set to a value of its kind (the first member of each oneof only), nested
    /// messages three deep, lists and maps with one entry; it encodes as `type`.
    ///
    /// ```swift
    /// codec.example("shop.v1.Item")   // {"sku": "sku 1", "quantity": 1, "priceCents": "1"}
    /// ```
    public func example(_ type: String, depth: Int = 0) -> JSONValue {
        switch type {
        case "google.protobuf.Timestamp": return .string("2026-01-01T00:00:00Z")
        case "google.protobuf.Duration": return .string("1s")
        case "google.protobuf.Struct": return .object(["example": .string("value")])
        case "google.protobuf.Value": return .string("example")
        case "google.protobuf.ListValue": return .array([.string("example")])
        case "google.protobuf.FieldMask": return .string("example")
        case "google.protobuf.Any", "google.protobuf.Empty": return .object([:])
        default: break
        }
        if let kind = Self.wrappers[type] { return scalarExample(Self.wrapperField(kind), name: "value") }
        guard let message = schema.messages[type], depth < 3 else { return .object([:]) }
        var object: [String: JSONValue] = [:]
        var oneofs: Set<Int> = []
        for field in message.fields {
            if let oneof = field.oneof, !oneofs.insert(oneof).inserted { continue }
            if field.type == .message, let entry = schema.messages[field.typeName], entry.isMapEntry {
                let value = entry.field(number: 2).map { valueExample($0, depth: depth) } ?? .string("")
                object[field.jsonName] = .object(["key": value])
                continue
            }
            let value = valueExample(field, depth: depth)
            object[field.jsonName] = field.repeated ? .array([value]) : value
        }
        return .object(object)
    }

    private func valueExample(_ field: ProtoField, depth: Int) -> JSONValue {
        switch field.type {
        case .message, .group: return example(field.typeName, depth: depth + 1)
        case .enum:
            guard let e = schema.enums[field.typeName] else { return .integer(0) }
            return .string((e.values.first { $0.1 != 0 } ?? e.values.first)?.0 ?? "")
        default: return scalarExample(field, name: field.name)
        }
    }

    private func scalarExample(_ field: ProtoField, name: String) -> JSONValue {
        switch field.type {
        case .string: return .string(name.replacingOccurrences(of: "_", with: " ") + " 1")
        case .bytes: return .string("ZXhhbXBsZQ==")
        case .bool: return .bool(true)
        case .double, .float: return .double(1.5)
        case .int64, .uint64, .sint64, .fixed64, .sfixed64: return .string("1")
        default: return .integer(1)
        }
    }
}

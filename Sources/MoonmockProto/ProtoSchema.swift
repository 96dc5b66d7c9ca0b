/// Messages, enums and services read from descriptor sets (`protoc --descriptor_set_out`):
/// what the codec, `mock.grpc` and server reflection work from. Names are full names without
/// the leading dot (`shop.v1.Order`).
///
/// ```swift
/// let schema = try ProtoSchema(descriptorSet: bytes)
/// schema.method("shop.v1.Orders/Get")?.input     // "shop.v1.GetOrderRequest"
/// ```
public struct ProtoSchema: Sendable {
    public private(set) var messages: [String: ProtoMessage] = [:]
    public private(set) var enums: [String: ProtoEnum] = [:]
    public private(set) var services: [String: ProtoService] = [:]
    /// Each file as it came (its serialized `FileDescriptorProto`, for reflection), in order.
    public private(set) var files: [ProtoFile] = []

    public init() {}

    /// Reads a serialized `google.protobuf.FileDescriptorSet`.
    public init(descriptorSet bytes: [UInt8]) throws {
        var reader = ProtoReader(bytes)
        while let (number, type) = try reader.tag() {
            if number == 1 && type == .lengthDelimited {
                let range = try reader.lengthDelimited()
                try add(file: Array(bytes[range]))
            } else {
                try reader.skip(type, number: number)
            }
        }
    }

    /// Adds the definitions of another set (a later file of the same name is skipped).
    public mutating func merge(_ other: ProtoSchema) {
        for file in other.files where !files.contains(where: { $0.name == file.name }) { files.append(file) }
        messages.merge(other.messages) { a, _ in a }
        enums.merge(other.enums) { a, _ in a }
        services.merge(other.services) { a, _ in a }
    }

    /// `pkg.Service/Method` (or `/pkg.Service/Method`).
    public func method(_ path: String) -> ProtoMethod? {
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        return services[String(trimmed[..<slash])]?.methods.first { $0.name == trimmed[trimmed.index(after: slash)...] }
    }

    /// Every method, as `pkg.Service/Method`.
    public var methodPaths: [String] {
        services.keys.sorted().flatMap { s in services[s]!.methods.map { "\(s)/\($0.name)" } }
    }

    /// The file that defines `symbol` (a message, enum, service or method's full name).
    public func file(defining symbol: String) -> ProtoFile? {
        var name = symbol
        while !name.isEmpty {
            if let file = files.first(where: { $0.symbols.contains(name) }) { return file }
            guard let dot = name.lastIndex(of: ".") else { break }
            name = String(name[..<dot])   // a method or nested name: its parent
        }
        return nil
    }

    // MARK: reading descriptors

    private mutating func add(file bytes: [UInt8]) throws {
        var r = ProtoReader(bytes)
        var name = "", package = "", syntax = "proto2"
        var dependencies: [String] = []
        var messageRanges: [Range<Int>] = [], enumRanges: [Range<Int>] = [], serviceRanges: [Range<Int>] = []
        while let (number, type) = try r.tag() {
            switch (number, type) {
            case (1, .lengthDelimited): name = String(decoding: try r.bytesField(), as: UTF8.self)
            case (2, .lengthDelimited): package = String(decoding: try r.bytesField(), as: UTF8.self)
            case (3, .lengthDelimited): dependencies.append(String(decoding: try r.bytesField(), as: UTF8.self))
            case (4, .lengthDelimited): messageRanges.append(try r.lengthDelimited())
            case (5, .lengthDelimited): enumRanges.append(try r.lengthDelimited())
            case (6, .lengthDelimited): serviceRanges.append(try r.lengthDelimited())
            case (12, .lengthDelimited): syntax = String(decoding: try r.bytesField(), as: UTF8.self)
            default: try r.skip(type, number: number)
            }
        }
        let prefix = package.isEmpty ? "" : package + "."
        var symbols: Set<String> = []
        for range in messageRanges { try addMessage(r.nested(range), prefix: prefix, syntax: syntax, symbols: &symbols) }
        for range in enumRanges { try addEnum(r.nested(range), prefix: prefix, symbols: &symbols) }
        for range in serviceRanges {
            let service = try Self.service(r.nested(range), prefix: prefix)
            services[service.fullName] = service
            symbols.insert(service.fullName)
            for m in service.methods { symbols.insert(service.fullName + "." + m.name) }
        }
        if !files.contains(where: { $0.name == name }) {
            files.append(ProtoFile(name: name, package: package, dependencies: dependencies, symbols: symbols, descriptor: bytes))
        }
    }

    private mutating func addMessage(_ reader: ProtoReader, prefix: String, syntax: String, symbols: inout Set<String>) throws {
        var r = reader
        var name = ""
        var fields: [ProtoField] = []
        var nested: [ProtoReader] = [], nestedEnums: [ProtoReader] = []
        var oneofs: [String] = []
        var isMapEntry = false
        while let (number, type) = try r.tag() {
            switch (number, type) {
            case (1, .lengthDelimited): name = String(decoding: try r.bytesField(), as: UTF8.self)
            case (2, .lengthDelimited): fields.append(try Self.field(r.nested(try r.lengthDelimited()), syntax: syntax))
            case (3, .lengthDelimited): nested.append(r.nested(try r.lengthDelimited()))
            case (4, .lengthDelimited): nestedEnums.append(r.nested(try r.lengthDelimited()))
            case (7, .lengthDelimited):
                var options = r.nested(try r.lengthDelimited())
                while let (n, t) = try options.tag() {
                    if n == 7 && t == .varint { isMapEntry = try options.varint() != 0 } else { try options.skip(t, number: n) }
                }
            case (8, .lengthDelimited):
                var oneof = r.nested(try r.lengthDelimited())
                var oneofName = ""
                while let (n, t) = try oneof.tag() {
                    if n == 1 && t == .lengthDelimited { oneofName = String(decoding: try oneof.bytesField(), as: UTF8.self) } else { try oneof.skip(t, number: n) }
                }
                oneofs.append(oneofName)
            default: try r.skip(type, number: number)
            }
        }
        let fullName = prefix + name
        symbols.insert(fullName)
        messages[fullName] = ProtoMessage(fullName: fullName, fields: fields, oneofs: oneofs, isMapEntry: isMapEntry, proto3: syntax == "proto3")
        for n in nested { try addMessage(n, prefix: fullName + ".", syntax: syntax, symbols: &symbols) }
        for e in nestedEnums { try addEnum(e, prefix: fullName + ".", symbols: &symbols) }
    }

    private mutating func addEnum(_ reader: ProtoReader, prefix: String, symbols: inout Set<String>) throws {
        var r = reader
        var name = ""
        var values: [(String, Int32)] = []
        while let (number, type) = try r.tag() {
            switch (number, type) {
            case (1, .lengthDelimited): name = String(decoding: try r.bytesField(), as: UTF8.self)
            case (2, .lengthDelimited):
                var v = r.nested(try r.lengthDelimited())
                var valueName = "", valueNumber: Int32 = 0
                while let (n, t) = try v.tag() {
                    switch (n, t) {
                    case (1, .lengthDelimited): valueName = String(decoding: try v.bytesField(), as: UTF8.self)
                    case (2, .varint): valueNumber = Int32(truncatingIfNeeded: try v.varint())
                    default: try v.skip(t, number: n)
                    }
                }
                values.append((valueName, valueNumber))
            default: try r.skip(type, number: number)
            }
        }
        let fullName = prefix + name
        symbols.insert(fullName)
        enums[fullName] = ProtoEnum(fullName: fullName, values: values)
    }

    private static func field(_ reader: ProtoReader, syntax: String) throws -> ProtoField {
        var r = reader
        var f = ProtoField(name: "", jsonName: "", number: 0, type: .int32, repeated: false, typeName: "", oneof: nil, packed: nil)
        var proto3Optional = false
        while let (number, type) = try r.tag() {
            switch (number, type) {
            case (1, .lengthDelimited): f.name = String(decoding: try r.bytesField(), as: UTF8.self)
            case (3, .varint): f.number = Int(truncatingIfNeeded: try r.varint())
            case (4, .varint): f.repeated = try r.varint() == 3
            case (5, .varint):
                let raw = try r.varint()
                guard let t = ProtoField.Kind(rawValue: Int(truncatingIfNeeded: raw)) else { throw ProtoError("field type \(raw)") }
                f.type = t
            case (6, .lengthDelimited):
                let name = String(decoding: try r.bytesField(), as: UTF8.self)
                f.typeName = name.hasPrefix(".") ? String(name.dropFirst()) : name
            case (9, .varint): f.oneof = Int(truncatingIfNeeded: try r.varint())
            case (10, .lengthDelimited): f.jsonName = String(decoding: try r.bytesField(), as: UTF8.self)
            case (8, .lengthDelimited):
                var options = r.nested(try r.lengthDelimited())
                while let (n, t) = try options.tag() {
                    if n == 2 && t == .varint { f.packed = try options.varint() != 0 } else { try options.skip(t, number: n) }
                }
            case (17, .varint): proto3Optional = try r.varint() != 0
            default: try r.skip(type, number: number)
            }
        }
        if f.jsonName.isEmpty { f.jsonName = ProtoField.camelCase(f.name) }
        f.hasPresence = !f.repeated && (syntax != "proto3" || proto3Optional || f.oneof != nil || f.type == .message || f.type == .group)
        if proto3Optional { f.oneof = nil }   // a synthetic oneof: not one for the JSON mapping
        if f.packed == nil { f.packed = syntax == "proto3" && f.repeated && f.type.isPackable }
        return f
    }

    private static func service(_ reader: ProtoReader, prefix: String) throws -> ProtoService {
        var r = reader
        var name = ""
        var methods: [ProtoMethod] = []
        while let (number, type) = try r.tag() {
            switch (number, type) {
            case (1, .lengthDelimited): name = String(decoding: try r.bytesField(), as: UTF8.self)
            case (2, .lengthDelimited):
                var m = r.nested(try r.lengthDelimited())
                var method = ProtoMethod(name: "", input: "", output: "", clientStreaming: false, serverStreaming: false)
                while let (n, t) = try m.tag() {
                    switch (n, t) {
                    case (1, .lengthDelimited): method.name = String(decoding: try m.bytesField(), as: UTF8.self)
                    case (2, .lengthDelimited): method.input = String(String(decoding: try m.bytesField(), as: UTF8.self).drop { $0 == "." })
                    case (3, .lengthDelimited): method.output = String(String(decoding: try m.bytesField(), as: UTF8.self).drop { $0 == "." })
                    case (5, .varint): method.clientStreaming = try m.varint() != 0
                    case (6, .varint): method.serverStreaming = try m.varint() != 0
                    default: try m.skip(t, number: n)
                    }
                }
                methods.append(method)
            default: try r.skip(type, number: number)
            }
        }
        return ProtoService(fullName: prefix + name, methods: methods)
    }
}

/// One `.proto` file of a schema.
public struct ProtoFile: Sendable {
    public let name: String
    public let package: String
    public let dependencies: [String]
    /// The full names it defines (messages, enums, services and their methods).
    public let symbols: Set<String>
    /// Its serialized `FileDescriptorProto`.
    public let descriptor: [UInt8]
}

public struct ProtoField: Sendable {
    public enum Kind: Int, Sendable {
        case double = 1, float, int64, uint64, int32, fixed64, fixed32, bool, string, group, message, bytes, uint32, `enum`, sfixed32, sfixed64, sint32, sint64

        var isPackable: Bool { self != .string && self != .bytes && self != .message && self != .group }

        /// The wire type a single value of this kind is written with.
        var wireType: WireType {
            switch self {
            case .double, .fixed64, .sfixed64: return .fixed64
            case .float, .fixed32, .sfixed32: return .fixed32
            case .string, .bytes, .message: return .lengthDelimited
            case .group: return .startGroup
            default: return .varint
            }
        }
    }

    public var name: String
    public var jsonName: String
    public var number: Int
    public var type: Kind
    public var repeated: Bool
    /// The message or enum type's full name.
    public var typeName: String
    public var oneof: Int?
    public var packed: Bool?
    /// Whether a default value is still written (proto2, `optional`, oneof members, messages).
    public var hasPresence = false

    static func camelCase(_ name: String) -> String {
        var out = ""
        var upper = false
        for c in name {
            if c == "_" { upper = true; continue }
            out += upper ? c.uppercased() : String(c)
            upper = false
        }
        return out
    }
}

public struct ProtoMessage: Sendable {
    public let fullName: String
    public let fields: [ProtoField]
    public let oneofs: [String]
    public let isMapEntry: Bool
    public let proto3: Bool
    let byNumber: [Int: Int]
    let byName: [String: Int]

    init(fullName: String, fields: [ProtoField], oneofs: [String], isMapEntry: Bool, proto3: Bool) {
        self.fullName = fullName
        self.fields = fields
        self.oneofs = oneofs
        self.isMapEntry = isMapEntry
        self.proto3 = proto3
        var byNumber: [Int: Int] = [:], byName: [String: Int] = [:]
        for (i, f) in fields.enumerated() {
            byNumber[f.number] = i
            byName[f.jsonName] = i
            byName[f.name] = i
        }
        self.byNumber = byNumber
        self.byName = byName
    }

    public func field(number: Int) -> ProtoField? { byNumber[number].map { fields[$0] } }
    /// By its JSON name or its name in the `.proto` file.
    public func field(named name: String) -> ProtoField? { byName[name].map { fields[$0] } }
}

public struct ProtoEnum: Sendable {
    public let fullName: String
    public let values: [(String, Int32)]

    public func name(of number: Int32) -> String? { values.first { $0.1 == number }?.0 }
    public func number(of name: String) -> Int32? { values.first { $0.0 == name }?.1 }
}

public struct ProtoService: Sendable {
    public let fullName: String
    public let methods: [ProtoMethod]
}

public struct ProtoMethod: Sendable {
    public var name: String
    /// The request and answer message types' full names.
    public var input: String
    public var output: String
    public var clientStreaming: Bool
    public var serverStreaming: Bool

    /// `unary`, `server_streaming`, `client_streaming` or `bidi_streaming`.
    public var kind: String {
        switch (clientStreaming, serverStreaming) {
        case (false, false): return "unary"
        case (false, true): return "server_streaming"
        case (true, false): return "client_streaming"
        case (true, true): return "bidi_streaming"
        }
    }
}

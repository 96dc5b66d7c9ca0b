import MoonmockCore

/// The services every gRPC mock serves once a schema is loaded, below the script's own rules:
/// server reflection (`grpc.reflection.v1` and `v1alpha`, so that grpcurl, Postman and Evans
/// list and call the mocked services) and `grpc.health.v1.Health` (`Check`: SERVING for the
/// server and each mocked service, NOT_FOUND for others; `Watch` answers the same status once).
public enum GRPCBuiltins {
    public static let reflectionServices = ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]
    public static let healthService = "grpc.health.v1.Health"

    /// The rules, for `schema` (the reflection lists its services and the health service).
    public static func rules(schema: ProtoSchema) -> [Rule] {
        var rules: [Rule] = []
        for service in reflectionServices {
            let pattern = try! RoutePattern("/\(service)/ServerReflectionInfo")
            // Over HTTP/2 a live call: grpcurl and Evans keep one stream open and ask in turn.
            rules.append(Rule(id: "grpc reflection (\(service.contains("v1alpha") ? "v1alpha" : "v1"), live)", method: "POST", pattern: pattern,
                              predicates: [Predicate("a live call") { _, _ in LiveDispatch.isActive ? nil : "not a live call" }],
                              priority: -1_000_000, mayUseStore: false, liveStream: true) { _ in
                MockResponse(status: 200, fault: .websocket(WebSocketRoute(endpoint: ReflectionEndpoint(schema: schema))))
            })
            rules.append(Rule(id: "grpc reflection (\(service.contains("v1alpha") ? "v1alpha" : "v1"))", method: "POST", pattern: pattern,
                              priority: -1_000_000, mayUseStore: false) { context in
                call(context.request) { try reflect($0, schema) }
            })
        }
        for method in ["Check", "Watch"] {
            rules.append(Rule(id: "grpc health \(method)", method: "POST", pattern: try! RoutePattern("/\(healthService)/\(method)"),
                              priority: -1_000_000, mayUseStore: false) { context in
                call(context.request) { try health($0, schema) }
            })
        }
        return rules
    }

    /// Runs `answer` on each request message and answers what it returns, or its status error.
    static func call(_ request: MockRequest, _ answer: ([UInt8]) throws -> [UInt8]) -> MockResponse {
        guard let rpc = RPCProtocol(contentType: request.headers["content-type"], connectHeader: true), !rpc.usesJSON else {
            return RPCFraming.answer(.grpc(json: false), messages: [], status: RPCStatus(code: 3, message: "the built-in services take protobuf only"),
                                     headers: [], trailers: [])
        }
        do {
            let replies = try RPCFraming.requestMessages(rpc, request.body).map(answer)
            return RPCFraming.answer(rpc, messages: replies, status: .ok, headers: [], trailers: [])
        } catch let status as StatusError {
            return RPCFraming.answer(rpc, messages: [], status: status.status, headers: [], trailers: [])
        } catch {
            return RPCFraming.answer(rpc, messages: [], status: RPCStatus(code: 3, message: "\(error)"), headers: [], trailers: [])
        }
    }

    struct StatusError: Error { let status: RPCStatus }

    // MARK: reflection

    /// One `ServerReflectionRequest` answered with a `ServerReflectionResponse` (the same
    /// field numbers in v1 and v1alpha).
    static func reflect(_ bytes: [UInt8], _ schema: ProtoSchema) throws -> [UInt8] {
        var r = ProtoReader(bytes)
        var host = ""
        var question: (Int, String)?
        while let (n, t) = try r.tag() {
            switch (n, t) {
            case (1, .lengthDelimited): host = String(decoding: try r.bytesField(), as: UTF8.self)
            case (3, .lengthDelimited), (4, .lengthDelimited), (6, .lengthDelimited), (7, .lengthDelimited):
                question = (n, String(decoding: try r.bytesField(), as: UTF8.self))
            case (5, .lengthDelimited):
                var ext = r.nested(try r.lengthDelimited())
                var type = ""
                while let (en, et) = try ext.tag() { if en == 1 && et == .lengthDelimited { type = String(decoding: try ext.bytesField(), as: UTF8.self) } else { try ext.skip(et, number: en) } }
                question = (5, type)
            default: try r.skip(t, number: n)
            }
        }
        var w = ProtoWriter()
        w.tag(1, .lengthDelimited); w.lengthDelimited(Array(host.utf8))
        w.tag(2, .lengthDelimited); w.lengthDelimited(bytes)
        let full = schema.adding(healthSchema)
        switch question {
        case (7, _)?:
            var list = ProtoWriter()
            for name in (full.services.keys.sorted() + reflectionServices).sorted() {
                var service = ProtoWriter()
                service.tag(1, .lengthDelimited); service.lengthDelimited(Array(name.utf8))
                list.tag(1, .lengthDelimited); list.lengthDelimited(service.bytes)
            }
            w.tag(6, .lengthDelimited); w.lengthDelimited(list.bytes)
        case (3, let name)?:
            guard let file = full.files.first(where: { $0.name == name }) else { return error(&w, 5, "no file \(name)") }
            w.tag(4, .lengthDelimited); w.lengthDelimited(descriptors(file, full))
        case (4, let symbol)?:
            guard let file = full.file(defining: symbol) else { return error(&w, 5, "no symbol \(symbol)") }
            w.tag(4, .lengthDelimited); w.lengthDelimited(descriptors(file, full))
        case (6, let type)?:
            var numbers = ProtoWriter()
            numbers.tag(1, .lengthDelimited); numbers.lengthDelimited(Array(type.utf8))
            w.tag(5, .lengthDelimited); w.lengthDelimited(numbers.bytes)
        case (5, let type)?:
            return error(&w, 5, "no extensions of \(type)")
        default:
            return error(&w, 3, "an empty reflection request")
        }
        return w.bytes
    }

    private static func error(_ w: inout ProtoWriter, _ code: Int, _ message: String) -> [UInt8] {
        var e = ProtoWriter()
        e.tag(1, .varint); e.varint(UInt64(code))
        e.tag(2, .lengthDelimited); e.lengthDelimited(Array(message.utf8))
        w.tag(7, .lengthDelimited); w.lengthDelimited(e.bytes)
        return w.bytes
    }

    /// A `FileDescriptorResponse`: the file, then the files it imports, each once.
    private static func descriptors(_ file: ProtoFile, _ schema: ProtoSchema) -> [UInt8] {
        var w = ProtoWriter()
        var seen: Set<String> = []
        var queue = [file]
        while let next = queue.first {
            queue.removeFirst()
            guard seen.insert(next.name).inserted else { continue }
            w.tag(1, .lengthDelimited); w.lengthDelimited(next.descriptor)
            queue += next.dependencies.compactMap { name in schema.files.first { $0.name == name } }
        }
        return w.bytes
    }

    // MARK: health

    static func health(_ bytes: [UInt8], _ schema: ProtoSchema) throws -> [UInt8] {
        var r = ProtoReader(bytes)
        var service = ""
        while let (n, t) = try r.tag() {
            if n == 1 && t == .lengthDelimited { service = String(decoding: try r.bytesField(), as: UTF8.self) } else { try r.skip(t, number: n) }
        }
        guard service.isEmpty || schema.services[service] != nil || service == healthService else {
            throw StatusError(status: RPCStatus(code: 5, message: "unknown service \(service)"))
        }
        var w = ProtoWriter()
        w.tag(1, .varint); w.varint(1)   // SERVING
        return w.bytes
    }

    /// `grpc/health/v1/health.proto`'s descriptor, written out here (no file to compile).
    public static let healthSchema: ProtoSchema = {
        func message(_ name: String, _ fields: [(String, Int, Int, String)], enums: [[UInt8]] = []) -> [UInt8] {
            var m = ProtoWriter()
            m.tag(1, .lengthDelimited); m.lengthDelimited(Array(name.utf8))
            for (fieldName, number, type, typeName) in fields {
                var f = ProtoWriter()
                f.tag(1, .lengthDelimited); f.lengthDelimited(Array(fieldName.utf8))
                f.tag(3, .varint); f.varint(UInt64(number))
                f.tag(4, .varint); f.varint(1)
                f.tag(5, .varint); f.varint(UInt64(type))
                if !typeName.isEmpty { f.tag(6, .lengthDelimited); f.lengthDelimited(Array(typeName.utf8)) }
                f.tag(10, .lengthDelimited); f.lengthDelimited(Array(fieldName.utf8))
                m.tag(2, .lengthDelimited); m.lengthDelimited(f.bytes)
            }
            for e in enums { m.tag(4, .lengthDelimited); m.lengthDelimited(e) }
            return m.bytes
        }
        var status = ProtoWriter()
        status.tag(1, .lengthDelimited); status.lengthDelimited(Array("ServingStatus".utf8))
        for (i, name) in ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"].enumerated() {
            var v = ProtoWriter()
            v.tag(1, .lengthDelimited); v.lengthDelimited(Array(name.utf8))
            v.tag(2, .varint); v.varint(UInt64(i))
            status.tag(2, .lengthDelimited); status.lengthDelimited(v.bytes)
        }
        var file = ProtoWriter()
        file.tag(1, .lengthDelimited); file.lengthDelimited(Array("grpc/health/v1/health.proto".utf8))
        file.tag(2, .lengthDelimited); file.lengthDelimited(Array("grpc.health.v1".utf8))
        file.tag(4, .lengthDelimited); file.lengthDelimited(message("HealthCheckRequest", [("service", 1, 9, "")]))
        file.tag(4, .lengthDelimited)
        file.lengthDelimited(message("HealthCheckResponse", [("status", 1, 14, ".grpc.health.v1.HealthCheckResponse.ServingStatus")], enums: [status.bytes]))
        var service = ProtoWriter()
        service.tag(1, .lengthDelimited); service.lengthDelimited(Array("Health".utf8))
        for (name, streaming) in [("Check", false), ("Watch", true)] {
            var m = ProtoWriter()
            m.tag(1, .lengthDelimited); m.lengthDelimited(Array(name.utf8))
            m.tag(2, .lengthDelimited); m.lengthDelimited(Array(".grpc.health.v1.HealthCheckRequest".utf8))
            m.tag(3, .lengthDelimited); m.lengthDelimited(Array(".grpc.health.v1.HealthCheckResponse".utf8))
            if streaming { m.tag(6, .varint); m.varint(1) }
            service.tag(2, .lengthDelimited); service.lengthDelimited(m.bytes)
        }
        file.tag(6, .lengthDelimited); file.lengthDelimited(service.bytes)
        file.tag(12, .lengthDelimited); file.lengthDelimited(Array("proto3".utf8))
        var set = ProtoWriter()
        set.tag(1, .lengthDelimited); set.lengthDelimited(file.bytes)
        return try! ProtoSchema(descriptorSet: set.bytes)
    }()
}

/// Server reflection as a live call: each request message answered as it arrives.
final class ReflectionEndpoint: WebSocketEndpoint {
    let schema: ProtoSchema
    init(schema: ProtoSchema) { self.schema = schema }
    func opened(_ socket: WebSocketSession, _ request: MockRequest) {}
    func received(_ socket: WebSocketSession, _ message: WebSocketMessage) {
        guard case .binary(let bytes) = message else { return }
        do { socket.send(.binary(try GRPCBuiltins.reflect(bytes, schema))) } catch {
            socket.close(code: 3, reason: "\(error)")
        }
    }
    func fired(_ socket: WebSocketSession, timer token: Int) {}
    func closed(_ socket: WebSocketSession, code: Int, reason: String) {}
}

extension ProtoSchema {
    /// This schema with `other`'s definitions added.
    public func adding(_ other: ProtoSchema) -> ProtoSchema {
        var copy = self
        copy.merge(other)
        return copy
    }
}

import CLua
import Foundation
import LuaBridge
import MoonmockCodings
import MoonmockCore
import MoonmockProto

/// The host side of `mock.proto` and `mock.grpc` (Prelude+GRPC): schemas loaded with the
/// script, and a call's messages decoded from, and its answer encoded for, the protocol its
/// request came in (gRPC, gRPC-Web, Connect), as Lua tables in the proto3 JSON mapping.
extension ScriptGeneration {
    func installGRPCHost(_ H: Int32) {
        vm.setFunction("proto", in: H) { [unowned self] stack in
            reportingFailure(stack) {
                var files: [String] = []
                let list = stack.top >= 1 ? Int32(1) : 0
                for k in 1...max(1, stack.rawLength(list)) {
                    stack.getIndex(list, Int64(k))
                    defer { stack.pop() }
                    guard let path = stack.string(at: -1) else { throw LuaError.host("give .proto files (or descriptor sets) as strings") }
                    files.append(try self.existingFile(path))
                }
                var includes: [String] = []
                if stack.top >= 2 && !stack.isNil(at: 2) {
                    for k in 1...max(1, stack.rawLength(2)) {
                        stack.getIndex(2, Int64(k))
                        defer { stack.pop() }
                        if let dir = stack.string(at: -1) { includes.append(try self.resolve(dir)) }
                    }
                }
                for file in files { self.depend(on: file) }
                do {
                    self.protoSchema.merge(try ProtoLoader.load(files, includes: includes))
                    self.protoSchema.merge(GRPCBuiltins.healthSchema)   // mock.grpc may answer health itself
                } catch {
                    throw LuaError.host(String(describing: error))
                }
                self.protoCodec = ProtoCodec(self.protoSchema)
            }
        }
        vm.setFunction("grpc_method", in: H) { [unowned self] stack in
            let path = (try? stack.checkString(1, "method")) ?? ""
            if let method = self.protoSchema.method(path) { stack.push(method.kind); return 1 }
            stack.pushNil()
            stack.push(self.unknownMethod(path))
            return 2
        }
        vm.setFunction("grpc_code", in: H) { stack in
            if let n = stack.integer(at: 1), (0...16).contains(n) { stack.push(n); return 1 }
            if let name = stack.string(at: 1), let n = RPCStatus.code(named: name) { stack.push(n); return 1 }
            stack.pushNil()
            stack.push("a gRPC code is 0…16 or a name (\(RPCStatus.names.joined(separator: ", "))), got \(stack.string(at: 1) ?? "a \(stack.typeName(at: 1))")")
            return 2
        }
        // (method, content type, connect header present, body) -> messages | nil, error
        vm.setFunction("grpc_decode", in: H) { [unowned self] stack in
            do {
                let (method, rpc) = try self.call(stack)
                let body = stack.bytes(at: 4) ?? []
                let encoding = stack.string(at: 5).map { $0.lowercased() }.flatMap { $0 == "identity" ? nil : $0 }
                let inflate = encoding.map { name in { (bytes: [UInt8]) throws -> [UInt8] in
                    do { return try ContentDecoding.decode(bytes, contentEncodings: [name]) } catch {
                        throw LuaError.host("the request's \(name) compression: \(error)")
                    }
                } }
                let messages = try RPCFraming.requestMessages(rpc, body, inflate: inflate).map { try self.decodeMessage($0, method.input, rpc) }
                stack.newTable(array: Int32(messages.count))
                for (i, m) in messages.enumerated() {
                    self.push(json: m, stack)
                    stack.setIndex(-2, Int64(i + 1))
                }
                return 1
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        // (method, content type, connect header, messages, code, message, details, headers, trailers, streamed)
        // -> body or a list of pieces (streamed), HTTP status, response headers | nil, error
        vm.setFunction("grpc_encode", in: H) { [unowned self] stack in
            do { return try self.encodeAnswer(stack) } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        // Live calls (bidirectional streaming over HTTP/2): whether this routing is one; a message
        // of one call decoded; a message sent on one; the call ended with a status.
        vm.setFunction("grpc_live", in: H) { stack in stack.push(LiveDispatch.isActive); return 1 }
        vm.setFunction("grpc_decode_one", in: H) { [unowned self] stack in
            do {
                let (method, rpc) = try self.call(stack)
                self.push(json: try self.decodeMessage(stack.bytes(at: 3) ?? [], method.input, rpc), stack)
                return 1
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        vm.setFunction("grpc_live_send", in: H) { [unowned self] stack in
            reportingFailure(stack) {
                let id = Int(try stack.checkInteger(1, "call id"))
                let (method, rpc) = try self.call(stack, from: 2)
                let bytes = try self.encodeMessage(try self.json(at: 4, stack), method.output, rpc)
                guard let socket = self.engine.websockets.socket(id) else { throw LuaError.host("the call has ended") }
                socket.send(.binary(bytes))
            }
        }
        vm.setFunction("grpc_live_close", in: H) { [unowned self] stack in
            let id = Int(stack.integer(at: 1) ?? 0)
            self.engine.websockets.socket(id)?.close(code: Int(stack.integer(at: 2) ?? 2), reason: stack.string(at: 3) ?? "")
            return 0
        }
        // (value, pattern): the value holds every key of the pattern (mock.grpc's match)
        vm.setFunction("json_contains", in: H) { [unowned self] stack in
            let value = try self.json(at: 1, stack), pattern = try self.json(at: 2, stack)
            stack.push(value.contains(pattern))
            return 1
        }
        // grpc-timeout ("100m", "2S") in milliseconds, or nil
        vm.setFunction("grpc_timeout", in: H) { stack in
            guard let text = stack.string(at: 1), let unit = text.last, let n = Double(text.dropLast()) else { return 0 }
            let scale: [Character: Double] = ["H": 3_600_000, "M": 60_000, "S": 1000, "m": 1, "u": 0.001, "n": 0.000001]
            guard let s = scale[unit] else { return 0 }
            stack.push(n * s)
            return 1
        }
    }

    private func call(_ stack: LuaStack, from first: Int32 = 1) throws -> (ProtoMethod, RPCProtocol) {
        let path = try stack.checkString(first, "method")
        guard let method = protoSchema.method(path) else { throw LuaError.host(unknownMethod(path)) }
        let contentType = stack.string(at: first + 1)
        guard let rpc = RPCProtocol(contentType: contentType, connectHeader: true) else {
            throw LuaError.host("content-type \(contentType ?? "(none)") is not gRPC, gRPC-Web or Connect")
        }
        return (method, rpc)
    }

    private func decodeMessage(_ bytes: [UInt8], _ type: String, _ rpc: RPCProtocol) throws -> JSONValue {
        if rpc.usesJSON { return bytes.isEmpty ? .object([:]) : try JSONValue(parsing: bytes) }
        do { return try protoCodec.decode(bytes, as: type) } catch { throw LuaError.host("the request is not a \(type): \(error)") }
    }

    private func encodeMessage(_ value: JSONValue, _ type: String, _ rpc: RPCProtocol) throws -> [UInt8] {
        let bytes = try protoCodec.encode(value, as: type)   // checks the shape even for JSON codecs
        return rpc.usesJSON ? try protoCodec.decode(bytes, as: type).encoded() : bytes
    }

    private func encodeAnswer(_ stack: LuaStack) throws -> Int32 {
        let (method, rpc) = try call(stack)
        var messages: [[UInt8]] = []
        if stack.typeName(at: 4) == "table" {
            for k in 0..<stack.rawLength(4) {
                stack.getIndex(4, Int64(k + 1))
                defer { stack.pop() }
                do { messages.append(try encodeMessage(try json(at: stack.top, stack), method.output, rpc)) } catch {
                    throw LuaError.host("message \(k + 1) is not a \(method.output): \(error)")
                }
            }
        }
        var status = RPCStatus(code: Int(stack.integer(at: 5) ?? 0), message: stack.string(at: 6) ?? "")
        var connectDetails: [JSONValue] = []
        if stack.typeName(at: 7) == "table", case .array(let details) = try json(at: 7, stack), !details.isEmpty {
            let (bytes, connect) = try statusDetails(status, details)
            status.details = bytes
            connectDetails = connect
        }
        let headers = stack.typeName(at: 8) == "table" ? try stringPairs(at: 8, stack) : []
        let trailers = stack.typeName(at: 9) == "table" ? try stringPairs(at: 9, stack) : []
        let answer = RPCFraming.answer(rpc, messages: stack.bool(at: 10) ? [] : messages, status: status, headers: headers,
                                       trailers: trailers, connectDetails: connectDetails)
        if stack.bool(at: 10) {
            // Streamed: each message its own piece, then the status's.
            stack.newTable(array: Int32(messages.count + 1))
            for (i, m) in messages.enumerated() {
                stack.push(bytes: RPCFraming.streamedMessage(rpc, m))
                stack.setIndex(-2, Int64(i + 1))
            }
            stack.push(bytes: answer.body)
            stack.setIndex(-2, Int64(messages.count + 1))
        } else {
            stack.push(bytes: answer.body)
        }
        stack.push(answer.status)
        stack.newTable()
        for field in answer.headers {
            stack.push(field.value)
            stack.setField(-2, field.name.lowercased())
        }
        return 3
    }

    /// `grpc-status-details-bin`: a `google.rpc.Status` with the details as `Any`s; and the
    /// details as Connect lists them (`{"type": ..., "value": base64}`).
    private func statusDetails(_ status: RPCStatus, _ details: [JSONValue]) throws -> ([UInt8], [JSONValue]) {
        var w = ProtoWriter()
        if status.code != 0 { w.tag(1, .varint); w.varint(UInt64(status.code)) }
        if !status.message.isEmpty { w.tag(2, .lengthDelimited); w.lengthDelimited(Array(status.message.utf8)) }
        var connect: [JSONValue] = []
        for (i, detail) in details.enumerated() {
            guard case .object(var fields) = detail, case .string(let url)? = fields["@type"] else {
                throw LuaError.host("detail \(i + 1) needs an \"@type\" (type.googleapis.com/NAME) and the message's fields")
            }
            let type = String(url.split(separator: "/").last ?? "")
            let payload: [UInt8]
            if case .string(let base64)? = fields["value"], fields.count == 2, protoSchema.messages[type] == nil {
                payload = Array(Data(base64Encoded: base64) ?? Data())
            } else {
                fields["@type"] = nil
                do { payload = try protoCodec.encode(.object(fields), as: type) } catch {
                    throw LuaError.host("detail \(i + 1): \(error) (load the .proto that defines \(type) with mock.proto)")
                }
            }
            var any = ProtoWriter()
            any.tag(1, .lengthDelimited); any.lengthDelimited(Array(url.utf8))
            any.tag(2, .lengthDelimited); any.lengthDelimited(payload)
            w.tag(3, .lengthDelimited); w.lengthDelimited(any.bytes)
            connect.append(.object(["type": .string(type), "value": .string(Data(payload).base64EncodedString().replacingOccurrences(of: "=", with: ""))]))
        }
        return (w.bytes, connect)
    }

    private func stringPairs(at i: Int32, _ stack: LuaStack) throws -> [(String, String)] {
        guard case .object(let object) = try json(at: i, stack) else { return [] }
        return object.keys.sorted().flatMap { key -> [(String, String)] in
            switch object[key]! {
            case .array(let list): return list.map { (key.lowercased(), $0.stringValue ?? $0.brief) }
            case let value: return [(key.lowercased(), value.stringValue ?? value.brief)]
            }
        }
    }

    /// What to say about a method the loaded schemas do not have.
    func unknownMethod(_ path: String) -> String {
        let known = protoSchema.methodPaths
        if known.isEmpty { return "\(path) is not a method of any loaded schema: load its .proto first with mock.proto(\"api.proto\")" }
        let closest = known.min { EditDistance.between($0, path) < EditDistance.between($1, path) }!
        return "\(path) is not a method of the loaded schemas (did you mean \(closest)? methods: \(known.prefix(8).joined(separator: ", ")))"
    }
}

import Foundation
import MoonmockCore
import MoonmockProto

extension ScriptGeneration {
    /// How the journal shows a call of the gRPC family: `{"method", "protocol", "status":
    /// {"code", "name", "message"}, "request": [messages], "response": [messages]}`, decoded with
    /// this script's schemas (bodies the journal cut short decode as far as they go).
    static func describer(_ schema: ProtoSchema) -> @Sendable (JournalEntry) -> JSONValue? {
        let codec = ProtoCodec(schema)
        return { entry in
            let path = URL(string: entry.url)?.path ?? ""
            guard let method = schema.method(path),
                  let rpc = RPCProtocol(contentType: entry.headers["content-type"], connectHeader: entry.headers["connect-protocol-version"] != nil)
            else { return nil }
            func decode(_ payloads: [[UInt8]], _ type: String) -> [JSONValue] {
                payloads.map { bytes in
                    if rpc.usesJSON { return (try? JSONValue(parsing: bytes)) ?? .string(String(decoding: bytes, as: UTF8.self)) }
                    return (try? codec.decode(bytes, as: type)) ?? .object(["undecodable_base64": .string(Data(bytes).base64EncodedString())])
                }
            }
            var status = RPCStatus.ok
            var answers: [[UInt8]] = []
            var body = entry.responseBody
            if let stream = entry.stream, body.isEmpty {
                // A streamed answer: its pieces as the transcript kept them (binary ones in base64).
                body = stream.sent.flatMap { piece -> [UInt8] in
                    if piece.text.hasPrefix("base64:") { return Array(Data(base64Encoded: String(piece.text.dropFirst(7))) ?? Data()) }
                    if case .grpcWeb(true, _) = rpc { return Array(Data(base64Encoded: piece.text) ?? Data()) }
                    return Array(piece.text.utf8)
                }
                if case .grpcWeb(true, _) = rpc { body = Array(Data(body).base64EncodedString().utf8) }
            }
            if case .grpcWeb(true, _) = rpc { body = Array(Data(base64Encoded: String(decoding: body, as: UTF8.self)) ?? Data()) }
            switch rpc {
            case .connectUnary:
                if entry.status == 200 { answers = [body] } else if let error = try? JSONValue(parsing: body) {
                    status = RPCStatus(code: RPCStatus.code(named: error["code"]?.stringValue ?? "") ?? 2, message: error["message"]?.stringValue ?? "")
                }
            default:
                for e in (try? RPCFraming.envelopes(body)) ?? [] {
                    if e.flags & RPCFraming.webTrailers != 0 {
                        let fields = Dictionary(RPCFraming.trailerLines(e.payload), uniquingKeysWith: { a, _ in a })
                        status = RPCStatus(code: Int(fields["grpc-status"] ?? "") ?? 2, message: (fields["grpc-message"] ?? "").removingPercentEncoding ?? "")
                    } else if e.flags & RPCFraming.connectEnd != 0 {
                        if let error = (try? JSONValue(parsing: e.payload))?["error"] {
                            status = RPCStatus(code: RPCStatus.code(named: error["code"]?.stringValue ?? "") ?? 2, message: error["message"]?.stringValue ?? "")
                        }
                    } else {
                        answers.append(e.payload)
                    }
                }
            }
            let requests = (try? RPCFraming.requestMessages(rpc, entry.body)) ?? []
            return .object([
                "method": .string(String(path.dropFirst())), "protocol": .string(rpc.name), "kind": .string(method.kind),
                "status": .object(["code": .integer(Int64(status.code)), "name": .string(RPCStatus.names.indices.contains(status.code) ? RPCStatus.names[status.code] : "UNKNOWN"),
                                   "message": .string(status.message)]),
                "request": .array(decode(requests, method.input)), "response": .array(decode(answers, method.output)),
            ])
        }
    }
}

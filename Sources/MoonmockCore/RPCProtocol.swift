import Foundation

/// The gRPC family as encodings of one request and answer: gRPC (HTTP/2, trailers), gRPC-Web
/// (binary and base64 text, trailers in the body) and Connect (unary bodies, streaming
/// envelopes). The engine and the journal see ordinary requests and answers; this decides how
/// messages and a status are laid out for the protocol a request came in.
///
/// ```swift
/// let rpc = RPCProtocol(contentType: "application/grpc-web+proto")   // .grpcWeb(text: false, json: false)
/// rpc?.responseContentType                                          // "application/grpc-web+proto"
/// ```
public enum RPCProtocol: Sendable, Equatable {
    case grpc(json: Bool)
    case grpcWeb(text: Bool, json: Bool)
    case connectUnary(json: Bool)
    case connectStream(json: Bool)

    /// The protocol of a request's `Content-Type` (`nil`: not an RPC). Connect unary needs the
    /// `Connect-Protocol-Version` header or a POST of `application/proto`/`application/json` to a
    /// method path, which the caller judges.
    public init?(contentType: String?, connectHeader: Bool = true) {
        guard let full = contentType?.lowercased() else { return nil }
        let type = full.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        switch type {
        case "application/grpc", "application/grpc+proto": self = .grpc(json: false)
        case "application/grpc+json": self = .grpc(json: true)
        case "application/grpc-web", "application/grpc-web+proto": self = .grpcWeb(text: false, json: false)
        case "application/grpc-web+json": self = .grpcWeb(text: false, json: true)
        case "application/grpc-web-text", "application/grpc-web-text+proto": self = .grpcWeb(text: true, json: false)
        case "application/connect+proto": self = .connectStream(json: false)
        case "application/connect+json": self = .connectStream(json: true)
        case "application/proto" where connectHeader: self = .connectUnary(json: false)
        case "application/json" where connectHeader: self = .connectUnary(json: true)
        default: return nil
        }
    }

    public var usesJSON: Bool {
        switch self {
        case .grpc(let json), .grpcWeb(_, let json), .connectUnary(let json), .connectStream(let json): return json
        }
    }

    /// Whether several messages may travel (5-byte envelopes), rather than one bare body.
    public var isEnveloped: Bool { if case .connectUnary = self { return false }; return true }

    public var responseContentType: String {
        switch self {
        case .grpc(let json): return json ? "application/grpc+json" : "application/grpc"
        case .grpcWeb(let text, let json): return text ? "application/grpc-web-text+proto" : (json ? "application/grpc-web+json" : "application/grpc-web+proto")
        case .connectUnary(let json): return json ? "application/json" : "application/proto"
        case .connectStream(let json): return json ? "application/connect+json" : "application/connect+proto"
        }
    }

    /// The name used in the journal and the dashboard.
    public var name: String {
        switch self {
        case .grpc: return "grpc"
        case .grpcWeb(let text, _): return text ? "grpc-web-text" : "grpc-web"
        case .connectUnary, .connectStream: return "connect"
        }
    }
}

/// A gRPC status: its code (0…16), message and `grpc-status-details-bin` bytes (a serialized
/// `google.rpc.Status`).
public struct RPCStatus: Sendable, Equatable {
    public var code: Int
    public var message: String
    public var details: [UInt8]?

    public init(code: Int, message: String = "", details: [UInt8]? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    public static let ok = RPCStatus(code: 0)

    public static let names = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                               "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                               "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]

    /// A code from its number or name (`"NOT_FOUND"`, `"not_found"`, Connect's `"canceled"`).
    public static func code(named name: String) -> Int? {
        let upper = name.uppercased()
        if upper == "CANCELED" { return 1 }
        return names.firstIndex(of: upper)
    }

    /// Connect's name of the code (`not_found`).
    public var connectName: String { code == 1 ? "canceled" : (Self.names.indices.contains(code) ? Self.names[code].lowercased() : "unknown") }

    /// The HTTP status of a Connect unary error with this code.
    public var connectHTTPStatus: Int {
        [1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401][code] ?? 500
    }
}

/// Envelopes (a flag byte and a 4-byte big-endian length before each message) and the
/// answers of each protocol.
public enum RPCFraming {
    /// Flag bits: compressed, and the last envelope (gRPC-Web trailers 0x80, Connect end-stream 0x02).
    public static let compressed: UInt8 = 0x01, webTrailers: UInt8 = 0x80, connectEnd: UInt8 = 0x02

    public static func envelope(_ payload: [UInt8], flags: UInt8 = 0) -> [UInt8] {
        let n = UInt32(payload.count)
        return [flags, UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + payload
    }

    /// The envelopes of a body, in order; a body cut short throws.
    public static func envelopes(_ body: [UInt8]) throws -> [(flags: UInt8, payload: [UInt8])] {
        var out: [(UInt8, [UInt8])] = []
        var i = 0
        while i < body.count {
            guard body.count - i >= 5 else { throw ProtoFramingError("a message envelope cut short at byte \(i)") }
            let n = Int(body[i + 1]) << 24 | Int(body[i + 2]) << 16 | Int(body[i + 3]) << 8 | Int(body[i + 4])
            guard body.count - i - 5 >= n else { throw ProtoFramingError("a \(n)-byte message with \(body.count - i - 5) bytes left") }
            out.append((body[i], Array(body[(i + 5)..<(i + 5 + n)])))
            i += 5 + n
        }
        return out
    }

    /// The status and trailing metadata as header lines (gRPC's trailers; gRPC-Web's last envelope).
    public static func trailerFields(_ status: RPCStatus, _ trailers: [(String, String)]) -> [(String, String)] {
        var fields = [("grpc-status", String(status.code))]
        if !status.message.isEmpty { fields.append(("grpc-message", percentEncoded(status.message))) }
        if let details = status.details {
            fields.append(("grpc-status-details-bin", Data(details).base64EncodedString().replacingOccurrences(of: "=", with: "")))
        }
        return fields + trailers
    }

    /// gRPC-Web's trailers envelope.
    public static func webTrailerEnvelope(_ status: RPCStatus, _ trailers: [(String, String)]) -> [UInt8] {
        let text = trailerFields(status, trailers).map { "\($0.0.lowercased()): \($0.1)\r\n" }.joined()
        return envelope(Array(text.utf8), flags: webTrailers)
    }

    /// Reads a gRPC-Web trailers envelope's lines back (the door turns them into HTTP/2 trailers).
    public static func trailerLines(_ payload: [UInt8]) -> [(String, String)] {
        String(decoding: payload, as: UTF8.self).split(separator: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]).lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    /// grpc-message's percent-encoding (RFC 3986 unreserved and printable ASCII stay).
    public static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if byte >= 0x20 && byte <= 0x7e && byte != UInt8(ascii: "%") { out.append(Character(UnicodeScalar(byte))) }
            else { out += String(format: "%%%02X", byte) }
        }
        return out
    }

    /// Connect's error JSON: `{"code": "not_found", "message": ..., "details": [...]}`.
    public static func connectError(_ status: RPCStatus, details: [JSONValue] = []) -> JSONValue {
        var object: [String: JSONValue] = ["code": .string(status.connectName)]
        if !status.message.isEmpty { object["message"] = .string(status.message) }
        if !details.isEmpty { object["details"] = .array(details) }
        return .object(object)
    }

    /// The whole answer of a call for `rpc`: its messages (already encoded for the protocol's
    /// codec), then its status and trailing metadata; `headers` are the leading metadata.
    public static func answer(_ rpc: RPCProtocol, messages: [[UInt8]], status: RPCStatus, headers: [(String, String)],
                              trailers: [(String, String)], connectDetails: [JSONValue] = []) -> MockResponse {
        var response = MockResponse(status: 200)
        response.headers["Content-Type"] = rpc.responseContentType
        for (name, value) in headers { response.headers.add(name, value) }
        switch rpc {
        case .grpc, .grpcWeb:
            var body = messages.flatMap { envelope($0) }
            body += webTrailerEnvelope(status, trailers)
            if case .grpcWeb(true, _) = rpc { body = Array(Data(body).base64EncodedString().utf8) }
            response.body = body
        case .connectUnary:
            for (name, value) in trailers { response.headers.add("trailer-" + name, value) }
            if status.code != 0 {
                response.status = status.connectHTTPStatus
                response.headers["Content-Type"] = "application/json"
                response.body = connectError(status, details: connectDetails).encoded()
            } else {
                response.body = messages.first ?? []
            }
        case .connectStream:
            var end: [String: JSONValue] = [:]
            if status.code != 0 { end["error"] = connectError(status, details: connectDetails) }
            if !trailers.isEmpty {
                var metadata: [String: JSONValue] = [:]
                for (name, value) in trailers {
                    if case .array(let list)? = metadata[name] { metadata[name] = .array(list + [.string(value)]) } else { metadata[name] = .array([.string(value)]) }
                }
                end["metadata"] = .object(metadata)
            }
            response.body = messages.flatMap { envelope($0) } + envelope(JSONValue.object(end).encoded(), flags: connectEnd)
        }
        return response
    }

    /// The body of one message of a streamed answer (gRPC-Web text: its own base64 segment).
    public static func streamedMessage(_ rpc: RPCProtocol, _ message: [UInt8]) -> [UInt8] {
        let bytes = envelope(message)
        if case .grpcWeb(true, _) = rpc { return Array(Data(bytes).base64EncodedString().utf8) }
        return bytes
    }

    /// The request's messages: the envelopes of gRPC, gRPC-Web and Connect streaming (base64
    /// first for gRPC-Web text), or Connect unary's bare body. `inflate` undoes the call's
    /// compression (`grpc-encoding`, `connect-content-encoding`, or Connect unary's
    /// `content-encoding`), for the envelopes flagged compressed or for the unary body.
    public static func requestMessages(_ rpc: RPCProtocol, _ body: [UInt8], inflate: (([UInt8]) throws -> [UInt8])? = nil) throws -> [[UInt8]] {
        let checked = { (e: (flags: UInt8, payload: [UInt8])) throws -> [UInt8] in
            guard e.flags & compressed != 0 else { return e.payload }
            guard let inflate else { throw ProtoFramingError("a compressed message without grpc-encoding: send identity or gzip") }
            return try inflate(e.payload)
        }
        switch rpc {
        case .connectUnary: return [try inflate.map { try $0(body) } ?? body]
        case .grpcWeb(true, _):
            guard let decoded = Data(base64Encoded: String(decoding: body.filter { $0 > 32 }, as: UTF8.self)) else {
                throw ProtoFramingError("a grpc-web-text body that is not base64")
            }
            return try envelopes(Array(decoded)).filter { $0.flags & webTrailers == 0 }.map(checked)
        default:
            return try envelopes(body).filter { $0.flags & (webTrailers | connectEnd) == 0 }.map(checked)
        }
    }

}

/// A body that is not a sequence of envelopes.
public struct ProtoFramingError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

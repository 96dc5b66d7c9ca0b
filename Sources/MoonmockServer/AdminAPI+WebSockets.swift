import Foundation
import MoonmockCore

/// The admin API's WebSockets: a test pushes a server-side message, or closes a socket.
extension AdminAPI {
    /// `POST /websockets/{id}/send` with `{"text": "..."}`, `{"json": value}` or
    /// `{"binary_base64": "..."}`: queued for the socket, sent by its loop.
    func sendToSocket(_ request: MockRequest, _ id: Substring) -> MockResponse {
        guard let socket = Int(id).flatMap({ engine.websockets.socket($0) }) else {
            return Self.error("no open WebSocket \(id) (GET /__moonmock/websockets lists them)", 404)
        }
        guard case .object(let body)? = request.json else {
            return Self.error(#"the body must be {"text": "..."}, {"json": value} or {"binary_base64": "..."}"#, 400)
        }
        let message: WebSocketMessage
        if let text = body["text"]?.stringValue {
            message = .text(text)
        } else if let value = body["json"] {
            message = .text(String(decoding: value.encoded(), as: UTF8.self))
        } else if let encoded = body["binary_base64"]?.stringValue, let data = Data(base64Encoded: encoded) {
            message = .binary([UInt8](data))
        } else {
            return Self.error(#"the body must have "text", "json" or "binary_base64" (valid base64)"#, 400)
        }
        guard socket.send(message) else { return Self.error("WebSocket \(id) is closing", 409) }
        return .json(.object(["sent": .bool(true), "id": .integer(Int64(socket.id))]))
    }

    /// `POST /websockets/{id}/close` with an optional `{"code": 1000, "reason": "..."}`.
    func closeSocket(_ request: MockRequest, _ id: Substring) -> MockResponse {
        guard let socket = Int(id).flatMap({ engine.websockets.socket($0) }) else {
            return Self.error("no open WebSocket \(id) (GET /__moonmock/websockets lists them)", 404)
        }
        var code = 1000
        var reason = ""
        if case .object(let body)? = request.json {
            if case .integer(let c)? = body["code"] { code = Int(c) }
            reason = body["reason"]?.stringValue ?? ""
        }
        guard code == 1000 || (3000...4999).contains(code) || [1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014].contains(code) else {
            return Self.error("code must be 1000, 1001-1003, 1007-1014 or 3000-4999, got \(code)", 400)
        }
        socket.close(code: code, reason: reason)
        return .json(.object(["closing": .bool(true), "id": .integer(Int64(socket.id))]))
    }
}

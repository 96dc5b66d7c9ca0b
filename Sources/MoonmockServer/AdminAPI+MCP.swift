import Foundation
import MoonmockCore

/// `GET /__moonmock/script` (the script's path and text) and, with `moonmock serve --mcp`, MCP's
/// streamable HTTP transport at `POST /__moonmock/mcp`: JSON-RPC in, JSON out, behind the admin
/// API's guards and token (the tools' calls go to the admin API with the same credentials).
extension AdminAPI {
    func scriptText(_ server: MoonmockServer) -> MockResponse {
        guard let path = server.configuration.scriptPath else { return Self.error("this server serves no script file", 404) }
        guard let data = FileManager.default.contents(atPath: path) else { return Self.error("cannot read \(path)", 404) }
        return .json(.object(["path": .string(path), "text": .string(String(decoding: data, as: UTF8.self))]))
    }

    func mcp(_ request: MockRequest, _ server: MoonmockServer) -> MockResponse {
        guard server.configuration.mcp else {
            return Self.error("MCP is off on this server: start it with moonmock serve --mcp", 404)
        }
        guard let message = request.json else {
            return .json(MCPServer.error(id: .null, code: -32700, "the body is not JSON"), status: 400)
        }
        // The tools call the admin API as the MCP request came: its Host and its token.
        let forwarded = ["host", "authorization"].compactMap { name in request.headers[name].map { (name, $0) } }
        let api = self
        let mcp = MCPServer(admin: { method, path, body in
            let inner = MockRequest(method: method, url: "\(request.scheme)://\(request.headers["host"] ?? "127.0.0.1")\(Self.prefix)\(path)",
                                    headers: HTTPHeaders(forwarded + [("Content-Type", "application/json")]), body: body.map { $0.encoded() } ?? [])
            let answer = api.handle(inner, server: server)
            let json = (try? JSONValue(parsing: answer.body)) ?? .string(String(decoding: answer.body, as: UTF8.self))
            return (answer.status, json)
        })
        guard let answer = mcp.handle(message) else { return MockResponse(status: 202) }   // notifications only
        return .json(answer)
    }
}

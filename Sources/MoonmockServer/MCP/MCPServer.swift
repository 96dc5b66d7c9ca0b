import Foundation
import MoonmockCore

/// MCP (the Model Context Protocol, JSON-RPC 2.0) for coding agents: tools that mock and check an
/// API through a Moonmock server's admin API, and resources (the script, the language reference).
/// The same server answers over stdio (`moonmock mcp --url URL`, calls going to a running server)
/// and over MCP's streamable HTTP transport (`moonmock serve --mcp`: `POST /__moonmock/mcp`).
///
/// ```swift
/// let mcp = MCPServer(admin: { method, path, body in (200, .object([:])) })
/// mcp.handle(try JSONValue(parsing: Array(#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.utf8)))
/// ```
public final class MCPServer: Sendable {
    /// An admin API call: method, path under `/__moonmock` (`/rules`), JSON body; status and JSON answer.
    public typealias AdminCall = @Sendable (_ method: String, _ path: String, _ body: JSONValue?) throws -> (Int, JSONValue)

    let admin: AdminCall
    /// The language reference offered as a resource (`moonmock://docs/language.md`).
    let languageReference: String

    public init(admin: @escaping AdminCall, languageReference: String = MCPServer.bundledLanguageReference) {
        self.admin = admin
        self.languageReference = languageReference
    }

    /// The answer to one JSON-RPC message (or a batch); `nil` for notifications only.
    public func handle(_ message: JSONValue) -> JSONValue? {
        if case .array(let batch) = message {
            let answers = batch.compactMap(answer)
            return answers.isEmpty ? nil : .array(answers)
        }
        return answer(message)
    }

    private func answer(_ message: JSONValue) -> JSONValue? {
        guard case .object(let o) = message, let method = o["method"]?.stringValue else {
            return Self.error(id: .null, code: -32600, "not a JSON-RPC request")
        }
        let id = o["id"]
        guard let id else { return nil }   // a notification (notifications/initialized, cancelled…)
        let params = o["params"] ?? .object([:])
        do {
            return .object(["jsonrpc": .string("2.0"), "id": id, "result": try result(method, params)])
        } catch let failure as Failure {
            return Self.error(id: id, code: failure.code, failure.message)
        } catch {
            return Self.error(id: id, code: -32603, "\(error)")
        }
    }

    /// docs/language.md, embedded in the binary.
    public static let bundledLanguageReference = String(decoding: PackageResources.language_md, as: UTF8.self)

    struct Failure: Error {
        let code: Int
        let message: String
    }

    private func result(_ method: String, _ params: JSONValue) throws -> JSONValue {
        switch method {
        case "initialize":
            let version = params["protocolVersion"]?.stringValue ?? "2025-06-18"
            return .object([
                "protocolVersion": .string(version),
                "capabilities": .object(["tools": .object([:]), "resources": .object([:])]),
                "serverInfo": .object(["name": .string("moonmock"), "version": .string(MoonmockVersion.current)]),
                "instructions": .string("Moonmock serves mocks.lua: HTTP mocks written in Lua. Add rules (add_rule), check what the "
                                        + "app sent (list_requests, verify), switch variants, set state, reset between tests. "
                                        + "Read the resource moonmock://docs/language.md for the rule language."),
            ])
        case "ping":
            return .object([:])
        case "tools/list":
            return .object(["tools": .array(Self.tools.map(\.listing))])
        case "tools/call":
            guard let name = params["name"]?.stringValue else { throw Failure(code: -32602, message: "tools/call needs a name") }
            guard let tool = Self.tools.first(where: { $0.name == name }) else {
                throw Failure(code: -32602, message: "unknown tool '\(name)' (tools: \(Self.tools.map(\.name).joined(separator: ", ")))")
            }
            return call(tool, params["arguments"] ?? .object([:]))
        case "resources/list":
            return .object(["resources": .array([
                .object(["uri": .string("moonmock://script"), "name": .string("mocks.lua"), "mimeType": .string("text/x-lua"),
                         "description": .string("The script the server serves")]),
                .object(["uri": .string("moonmock://docs/language.md"), "name": .string("language.md"), "mimeType": .string("text/markdown"),
                         "description": .string("The mocks.lua language: rules, matching, responses, state, streams")]),
            ])])
        case "resources/read":
            let uri = params["uri"]?.stringValue ?? ""
            let text: String
            let type: String
            switch uri {
            case "moonmock://script":
                let (status, answer) = try admin("GET", "/script", nil)
                guard status < 400 else { throw Failure(code: -32002, message: answer["error"]?.stringValue ?? "no script") }
                text = answer["text"]?.stringValue ?? ""
                type = "text/x-lua"
            case "moonmock://docs/language.md":
                text = languageReference
                type = "text/markdown"
            default:
                throw Failure(code: -32002, message: "no resource '\(uri)' (resources: moonmock://script, moonmock://docs/language.md)")
            }
            return .object(["contents": .array([.object(["uri": .string(uri), "mimeType": .string(type), "text": .string(text)])])])
        case "resources/templates/list":
            return .object(["resourceTemplates": .array([])])
        case "prompts/list":
            return .object(["prompts": .array([])])
        default:
            throw Failure(code: -32601, message: "unknown method '\(method)'")
        }
    }

    /// A tool's result: its answer as JSON text, `isError` when the server refused it.
    private func call(_ tool: MCPTool, _ arguments: JSONValue) -> JSONValue {
        let (ok, value): (Bool, JSONValue)
        do {
            (ok, value) = try tool.run(self, arguments)
        } catch {
            (ok, value) = (false, .object(["error": .string("\(error)")]))
        }
        let text = String(decoding: value.encoded(), as: UTF8.self)
        return .object(["content": .array([.object(["type": .string("text"), "text": .string(text)])]),
                        "structuredContent": Self.structured(value), "isError": .bool(!ok)])
    }

    /// MCP's structured content is an object: arrays go under `items`.
    private static func structured(_ value: JSONValue) -> JSONValue {
        if case .object = value { return value }
        return .object(["items": value])
    }

    static func error(id: JSONValue, code: Int, _ message: String) -> JSONValue {
        .object(["jsonrpc": .string("2.0"), "id": id, "error": .object(["code": .integer(Int64(code)), "message": .string(message)])])
    }
}

import Foundation
import MoonmockCore
import MoonmockScript

/// One MCP tool: its name, what a model reads to use it, its input's JSON schema, and what it does.
struct MCPTool: Sendable {
    let name: String
    let description: String
    let schema: JSONValue
    /// `(ok, answer)`: ok is false when the server refused (the answer says why).
    let run: @Sendable (MCPServer, JSONValue) throws -> (Bool, JSONValue)

    var listing: JSONValue {
        .object(["name": .string(name), "description": .string(description), "inputSchema": schema])
    }
}

extension MCPServer {
    /// An object schema with these properties (`(name, schema)`) and required names.
    static func object(_ properties: [(String, JSONValue)], required: [String] = []) -> JSONValue {
        var o: [String: JSONValue] = ["type": .string("object"),
                                      "properties": .object(Dictionary(uniqueKeysWithValues: properties))]
        if !required.isEmpty { o["required"] = .array(required.map(JSONValue.string)) }
        return .object(o)
    }

    static func text(_ description: String) -> JSONValue { .object(["type": .string("string"), "description": .string(description)]) }
    static func integer(_ description: String) -> JSONValue { .object(["type": .string("integer"), "description": .string(description)]) }
    static func anything(_ description: String) -> JSONValue { .object(["description": .string(description)]) }

    /// The admin API call's answer as a tool result.
    func relay(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> (Bool, JSONValue) {
        let (status, answer) = try admin(method, path, body)
        return (status < 400, answer)
    }

    static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? s
    }

    static let tools: [MCPTool] = [
        MCPTool(name: "list_rules",
                description: "List the server's rules in the order they are tried (runtime rules first): id, method, pattern, hits, where it is defined.",
                schema: object([])) { mcp, _ in try mcp.relay("GET", "/rules") },
        MCPTool(name: "add_rule",
                description: "Add a rule that answers ahead of the script's, until removed or reset. The rule is the admin API's rule JSON: "
                    + #"{"method": "GET", "path": "/users/:id", "respond": {"status": 200, "json": {"id": 7}}}"# + ", or with "
                    + #""lua": "function(req) return {id = req.params.id} end""# + " instead of respond. Returns the rule's id.",
                schema: object([("rule", .object(["type": .string("object"),
                                                  "description": .string("method, path (a pattern like /users/:id), query, headers, json, body, graphql, times, name, priority, and respond {status, headers, json | text | base64 | file, delay, fault} or lua")]))],
                               required: ["rule"])) { mcp, arguments in
            try mcp.relay("POST", "/rules", arguments["rule"] ?? .null)
        },
        MCPTool(name: "remove_rule", description: "Remove a rule added at runtime, by its id.",
                schema: object([("id", text("the rule's id (add_rule's answer, or list_rules)"))], required: ["id"])) { mcp, arguments in
            try mcp.relay("DELETE", "/rules/" + escape(arguments["id"]?.stringValue ?? ""))
        },
        MCPTool(name: "list_requests",
                description: "The requests the server received, oldest first, with the rule that answered each (or none), status, headers and bodies. Filter by rule id, or by method and pattern; since gives only the entries after that id.",
                schema: object([("since", integer("only entries recorded after this id")), ("rule", text("a rule id")),
                                ("method", text("GET, POST, ...")), ("pattern", text("a path pattern such as /users/:id"))])) { mcp, arguments in
            var items: [URLQueryItem] = []
            for key in ["since", "rule", "method", "pattern"] {
                if let v = arguments[key] { items.append(URLQueryItem(name: key, value: v.stringValue ?? String(decoding: v.encoded(), as: UTF8.self))) }
            }
            var components = URLComponents()
            components.queryItems = items.isEmpty ? nil : items
            return try mcp.relay("GET", "/requests" + (components.percentEncodedQuery.map { "?" + $0 } ?? ""))
        },
        MCPTool(name: "verify",
                description: "Check how many requests matched (method and pattern, a rule id, or an exact url) against times, at_least or at_most. Answers ok and the count, or the closest requests and why each did not match.",
                schema: object([("method", text("GET, POST, ...")), ("pattern", text("a path pattern such as /users/:id")),
                                ("rule", text("a rule id")), ("url", text("a path and query, or the absolute URL the journal shows")),
                                ("times", integer("exactly this many")), ("at_least", integer("at least this many")),
                                ("at_most", integer("at most this many"))])) { mcp, arguments in
            let (status, answer) = try mcp.admin("POST", "/verify", arguments)
            return (status == 200, answer)
        },
        MCPTool(name: "get_state", description: "Read mock.state: one key, or the whole store when no key is given.",
                schema: object([("key", text("the key; omit for every key"))])) { mcp, arguments in
            guard let key = arguments["key"]?.stringValue else { return try mcp.relay("GET", "/state") }
            return try mcp.relay("GET", "/state/" + escape(key))
        },
        MCPTool(name: "set_state", description: "Set a mock.state key to a JSON value (a string, number or boolean).",
                schema: object([("key", text("the key")), ("value", anything("the value"))], required: ["key", "value"])) { mcp, arguments in
            try mcp.relay("PUT", "/state/" + escape(arguments["key"]?.stringValue ?? ""), arguments["value"] ?? .null)
        },
        MCPTool(name: "switch_variant",
                description: "Make one variant of a rule the answer (mock.variants, stub endpoints): for example the 404 variant of GET /users/:id.",
                schema: object([("rule", text("the rule's id")), ("variant", text("the variant's name; null for none (stub endpoints)"))],
                               required: ["rule"])) { mcp, arguments in
            try mcp.relay("PUT", "/variants/" + escape(arguments["rule"]?.stringValue ?? ""), .object(["active": arguments["variant"] ?? .null]))
        },
        MCPTool(name: "reset", description: "Back to the script alone: runtime rules removed, journal and state cleared, variants at their defaults.",
                schema: object([])) { mcp, _ in try mcp.relay("POST", "/reset") },
        MCPTool(name: "reload", description: "Read the script again from its file; answers the script's error with its line when it does not load.",
                schema: object([])) { mcp, _ in try mcp.relay("POST", "/reload") },
        MCPTool(name: "record_start",
                description: "Start recording: every request (but the admin API's) goes to the upstream, and what it answers is kept for a mocks.lua.",
                schema: object([("upstream", text("the real API: https://api.example.com")), ("out", text("a folder to write mocks.lua and fixtures to")),
                                ("redact_json", .object(["type": .string("array"), "items": .object(["type": .string("string")])]))],
                               required: ["upstream"])) { mcp, arguments in try mcp.relay("POST", "/recordings/start", arguments) },
        MCPTool(name: "record_stop", description: "Stop recording; answers the script written from what was recorded.",
                schema: object([])) { mcp, _ in try mcp.relay("POST", "/recordings/stop") },
        MCPTool(name: "check_script",
                description: "Load a mocks.lua text (without serving it) and answer its rules, or its first error with the line: check a script before writing it.",
                schema: object([("script", text("the Lua text of a mocks.lua"))], required: ["script"])) { _, arguments in
            checkScript(arguments["script"]?.stringValue ?? "")
        },
    ]

    /// A script text loaded in an engine of its own: its rules, or its error and line.
    static func checkScript(_ text: String) -> (Bool, JSONValue) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-mcp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("mocks.lua")
            try Data(text.utf8).write(to: file)
            let engine = Engine()
            try engine.loadScript(file: file.path)
            return (true, .object(["ok": .bool(true), "rules": .array(engine.allRules.map { .string($0.id) })]))
        } catch {
            let message = String(describing: error)
            var answer: [String: JSONValue] = ["ok": .bool(false), "error": .string(message)]
            if let range = message.range(of: #"mocks\.lua:(\d+):"#, options: .regularExpression),
               let line = Int(message[range].dropFirst("mocks.lua:".count).dropLast()) {
                answer["line"] = .integer(Int64(line))
            }
            return (false, .object(answer))
        }
    }
}

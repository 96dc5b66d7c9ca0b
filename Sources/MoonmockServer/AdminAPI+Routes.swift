import Foundation
import MoonmockCore

/// One call to the admin API: the request, the server, and the path's `{parameter}` (still
/// percent-encoded) when the route has one.
struct AdminCall {
    let request: MockRequest
    let server: MoonmockServer
    let parameter: Substring?
}

/// An admin endpoint: `METHOD /path` under `/__moonmock`, where a last segment `{name}` takes
/// the rest of the path. The table is the whole API: the server answers these and nothing
/// else, and docs/admin-api.yaml documents each (a test compares the two).
struct AdminRoute: Sendable {
    let method: String
    let path: String
    /// Answered without the admin token (the page, and signing in and out).
    let open: Bool
    /// Throws ``StoreUnavailable`` when it needs the shared store and that is away (a 503).
    let handle: @Sendable (AdminAPI, AdminCall) throws -> MockResponse

    init(_ method: String, _ path: String, open: Bool = false, _ handle: @escaping @Sendable (AdminAPI, AdminCall) throws -> MockResponse) {
        self.method = method
        self.path = path
        self.open = open
        self.handle = handle
    }

    /// The parameter (`""` when the route has none) if `method` (any when `nil`) and `path` are this route's.
    func match(_ method: String?, _ path: Substring) -> Substring?? {
        if let method, method != self.method { return nil }
        guard let brace = self.path.firstIndex(of: "{") else { return path == self.path ? .some(nil) : nil }
        let prefix = self.path[..<brace]
        // `/websockets/{id}/send`: the parameter is what lies between the prefix and the suffix.
        let suffix = self.path[self.path.index(after: self.path[brace...].firstIndex(of: "}") ?? brace)...]
        guard path.hasPrefix(prefix), path.count > prefix.count + suffix.count, path.hasSuffix(suffix) else { return nil }
        let parameter = path.dropFirst(prefix.count).dropLast(suffix.count)
        if !suffix.isEmpty && parameter.contains("/") { return nil }
        return .some(parameter)
    }
}

extension AdminAPI {
    static let routes: [AdminRoute] = [
        AdminRoute("GET", "/", open: true) { _, _ in
            // The page holds no data: it signs in (when there is a token) and reads the API.
            MockResponse(status: 200, headers: ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"],
                         body: Array(Dashboard.html.utf8))
        },
        AdminRoute("POST", "/login", open: true) { api, c in api.login(c.request) },
        AdminRoute("POST", "/logout", open: true) { api, c in api.logout(c.request) },
        AdminRoute("GET", "/health") { api, c in api.health(c.server) },
        AdminRoute("GET", "/metrics") { api, c in api.metrics(c.server) },
        AdminRoute("GET", "/rules") { api, _ in api.listRules() },
        AdminRoute("POST", "/rules") { api, c in try api.addRules(c.request) },
        AdminRoute("DELETE", "/rules") { api, c in try api.deleteRules(c.request) },
        AdminRoute("DELETE", "/rules/{id}") { api, c in try api.deleteRule(c.parameter ?? "") },
        AdminRoute("GET", "/requests") { api, c in try api.requests(c.request, count: false) },
        AdminRoute("DELETE", "/requests") { api, _ in
            try api.engine.clearJournal()
            return .json(.object(["cleared": .bool(true)]))
        },
        AdminRoute("GET", "/requests/count") { api, c in try api.requests(c.request, count: true) },
        AdminRoute("GET", "/requests/unmatched") { api, _ in .json(.array(try api.engine.journalEntries().filter { !$0.matched }.map(Self.json))) },
        AdminRoute("GET", "/requests/{id}/rule") { api, c in api.entryAsRule(c.parameter ?? "") },
        AdminRoute("GET", "/requests/{id}/curl") { api, c in api.entryAsCurl(c.parameter ?? "") },
        AdminRoute("POST", "/verify") { api, c in try api.verify(c.request) },
        AdminRoute("POST", "/webhooks/flush") { api, c in api.flushWebhooks(c.request) },
        AdminRoute("GET", "/contract") { api, _ in .json(api.engine.contractSummary()) },
        AdminRoute("GET", "/state") { api, _ in .json(.object(try api.engine.state.snapshot().mapValues(\.json))) },
        AdminRoute("PUT", "/state") { api, c in try api.replaceState(c.request) },
        AdminRoute("DELETE", "/state") { api, _ in
            try api.engine.state.flush()
            return .json(.object(["flushed": .bool(true)]))
        },
        AdminRoute("GET", "/state/{key}") { api, c in try api.stateKey(c.request, c.parameter ?? "") },
        AdminRoute("PUT", "/state/{key}") { api, c in try api.stateKey(c.request, c.parameter ?? "") },
        AdminRoute("DELETE", "/state/{key}") { api, c in try api.stateKey(c.request, c.parameter ?? "") },
        AdminRoute("GET", "/resources") { api, _ in try api.resourceCollections() },
        AdminRoute("DELETE", "/resources/{path}") { api, c in try api.resetResource(c.parameter ?? "") },
        AdminRoute("GET", "/chaos") { api, _ in .json(api.engine.chaos.json) },
        AdminRoute("PUT", "/chaos") { api, c in try api.startChaos(c.request) },
        AdminRoute("DELETE", "/chaos") { api, _ in try api.stopChaos() },
        AdminRoute("GET", "/variants") { api, _ in api.listVariants() },
        AdminRoute("PUT", "/variants/{rule}") { api, c in try api.switchVariant(c.request, c.parameter ?? "") },
        AdminRoute("GET", "/bundle") { api, _ in
            .json(.array(api.engine.bundles.list().map { .object(["rule": .string($0.rule), "path": .string($0.path)]) }))
        },
        AdminRoute("PUT", "/bundle") { api, c in try api.switchBundle(c.request) },
        AdminRoute("GET", "/events") { api, _ in api.events() },
        AdminRoute("GET", "/websockets") { api, _ in .json(.array(api.engine.websockets.list().map(\.json))) },
        AdminRoute("POST", "/websockets/{id}/send") { api, c in api.sendToSocket(c.request, c.parameter ?? "") },
        AdminRoute("POST", "/websockets/{id}/close") { api, c in api.closeSocket(c.request, c.parameter ?? "") },
        AdminRoute("POST", "/reset") { api, _ in
            try api.engine.reset()
            return .json(.object(["reset": .bool(true)]))
        },
        AdminRoute("POST", "/reload") { api, c in api.reload(c.server) },
        AdminRoute("GET", "/recordings") { _, c in .json(c.server.recorder.status) },
        AdminRoute("POST", "/recordings/start") { api, c in api.startRecording(c.request, c.server) },
        AdminRoute("POST", "/recordings/snapshot") { api, c in api.snapshotRecording(c.server, stop: false) },
        AdminRoute("POST", "/recordings/stop") { api, c in api.snapshotRecording(c.server, stop: true) },
        AdminRoute("GET", "/script") { api, c in api.scriptText(c.server) },
        AdminRoute("POST", "/mcp") { api, c in api.mcp(c.request, c.server) },
        // No GET /mcp: every answer comes with its request, and the 405 a GET gets is what MCP allows.
        AdminRoute("DELETE", "/mcp") { _, _ in MockResponse(status: 204) },
    ]
}

import Foundation
import MoonmockCore

/// The admin endpoints over the journal, switches and the script (the table is in AdminAPI+Routes).
extension AdminAPI {
    func health(_ server: MoonmockServer) -> MockResponse {
        var health: [String: JSONValue] = [
            "status": .string("ok"),
            "rules": .integer(Int64(engine.allRules.count)),
            "requests": .integer(Int64(engine.journal.entries().count)),
            "in_flight": .integer(Int64(server.requestsInFlight)),
            "connections_per_worker": .array(server.connectionsPerWorker.map { .integer(Int64($0)) }),
            "uptime_seconds": .double((Date().timeIntervalSince(startedAt) * 1000).rounded() / 1000),
            "token_required": .bool(token != nil),
            "poller": .string(server.poller ?? "none"),
        ]
        if let script = server.scriptStatus?() {
            health["script"] = script
            // Still serving the last good version, but the file on disk did not load: say so.
            if let error = script["last_error"], error != .null {
                health["status"] = .string("reload_failed")
                health["reload_error"] = error
            }
        }
        if let store = engine.store {
            health["store"] = store.health
            if store.health["status"]?.stringValue != "ok" { health["status"] = .string("store_unavailable") }
        }
        return .json(.object(health))
    }

    /// `GET /requests` and `/requests/count`: `?rule=ID`, `?method=GET&pattern=/users/:id`, `?since=ID`.
    func requests(_ request: MockRequest, count: Bool) throws -> MockResponse {
        let all = try engine.journalEntries()
        var entries = all
        if let rule = request.query("rule") { entries = entries.filter { $0.ruleID == rule } }
        if let pattern = request.query("pattern") {
            guard let p = try? RoutePattern(pattern) else { return Self.error("invalid pattern '\(pattern)'", 400) }
            entries = entries.filter { p.match($0.request) != nil }
        }
        if let method = request.query("method")?.asciiUppercased { entries = entries.filter { $0.method == method } }
        if let since = request.query("since") {
            guard let id = Int(since) else { return Self.error("since must be a request id (an integer)", 400) }
            // Ids are unique but not in time order across workers: "newer" is what the journal
            // recorded after that entry. An id no longer kept (cleared, or pushed out) gives all.
            if let at = all.lastIndex(where: { $0.id == id }) {
                let newer = Set(all[(at + 1)...].map(\.id))
                entries = entries.filter { newer.contains($0.id) }
            }
        }
        if count { return .json(.object(["count": .integer(Int64(entries.count))])) }
        return .json(.array(entries.map(entryJSON)))
    }

    func listVariants() -> MockResponse {
        .json(.array(engine.variants.list().map { v in
            .object(["rule": .string(v.rule), "variants": .array(v.names.map(JSONValue.string)), "active": v.active.map(JSONValue.string) ?? .null,
                     "none_allowed": .bool(engine.variants.allowsNone(v.rule))])
        }))
    }

    func switchVariant(_ request: MockRequest, _ encodedRule: Substring) throws -> MockResponse {
        let rule = PercentDecoding.decode(encodedRule)
        guard case .object(let body)? = request.json, let active = body["active"] else {
            return Self.error(#"send {"active": "variant name"}"#, 400)
        }
        do {
            if active == .null {
                try engine.variants.deactivate(rule)
            } else if let name = active.stringValue {
                try engine.variants.activate(name, for: rule)
            } else {
                return Self.error("active must be a name or null", 400)
            }
            let answer = JSONValue.object(["rule": .string(rule), "active": engine.variants.active(for: rule).map(JSONValue.string) ?? .null])
            engine.feed.publish(.switched(answer))
            try shareVariant(rule)
            return .json(answer)
        } catch let away as StoreUnavailable {
            throw away
        } catch {
            let known = engine.variants.list().contains { $0.rule == rule }
            return Self.error(String(describing: error), known ? 422 : 404)
        }
    }

    func switchBundle(_ request: MockRequest) throws -> MockResponse {
        guard case .object(let body)? = request.json, let path = body["path"]?.stringValue else {
            return Self.error(#"send {"path": "folder relative to the script"}"#, 400)
        }
        do {
            let rule = try engine.bundles.switchTo(path, rule: body["rule"]?.stringValue)
            let answer = JSONValue.object(["rule": .string(rule), "bundle": .string(path)])
            engine.feed.publish(.switched(answer))
            try shareBundle(rule, path)
            return .json(.object(["rule": .string(rule), "path": .string(path)]))
        } catch let away as StoreUnavailable {
            throw away
        } catch {
            return Self.error(String(describing: error), 422)
        }
    }

    func reload(_ server: MoonmockServer) -> MockResponse {
        guard let reload = server.reloader else { return Self.error("this server has no script to reload", 501) }
        do {
            let result = try reload()
            return .json(.object(["ok": .bool(result.ok), "message": .string(result.message), "rules": .integer(Int64(result.rules))]),
                         status: result.ok ? 200 : 422)
        } catch {
            return .json(.object(["ok": .bool(false), "message": .string(String(describing: error))]), status: 422)
        }
    }

    /// An entry as the journal lists it, with a gRPC call decoded (`grpc`) when the script loaded its schema.
    func entryJSON(_ e: JournalEntry) -> JSONValue {
        guard let describe = engine.rpcDescriber.withLock({ $0 }), case .object(var o) = Self.json(e), let rpc = describe(e) else { return Self.json(e) }
        o["grpc"] = rpc
        return .object(o)
    }
}

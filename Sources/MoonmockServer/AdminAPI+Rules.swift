import Foundation
import MoonmockCore
import MoonmockScript

/// `POST /__moonmock/rules` (rule JSON, one or an array), `GET /__moonmock/rules` (runtime rules
/// first, with their JSON), `DELETE /__moonmock/rules/{id}` and `DELETE /__moonmock/rules?source=runtime`.
extension AdminAPI {
    func addRules(_ request: MockRequest) throws -> MockResponse {
        let rules: RuntimeRules
        do { rules = try runtimeRules() } catch { return Self.error("cannot host runtime rules: \(error)", 500) }
        guard !request.body.isEmpty else {
            return Self.error(#"send a rule as JSON: {"method": "GET", "path": "/users/7", "respond": {"json": {...}}}"#, 400)
        }
        do {
            let ids = try rules.add(jsonText: request.body)
            try shareRules()
            if case .array = try? JSONValue(parsing: request.body) {
                return .json(.object(["ids": .array(ids.map(JSONValue.string))]), status: 201)
            }
            return .json(.object(["id": .string(ids.first ?? "")]), status: 201)
        } catch let away as StoreUnavailable {
            throw away
        } catch let error as RuleJSONError {
            return .json(.object(["error": .string(error.description), "field": .string(error.field)]), status: 400)
        } catch let error as RuntimeRuleError {
            return .json(.object(["error": .string(error.message), "field": .string(error.field)]), status: 400)
        } catch {
            return Self.error(String(describing: error), 400)
        }
    }

    func listRules() -> MockResponse {
        .json(.array(engine.allRules.map { rule in
            guard case .object(var o) = Self.json(rule) else { return Self.json(rule) }
            if let definition = rule.definition {
                if case .object(let given) = definition { for (k, v) in given where o[k] == nil { o[k] = v } }
                o["source"] = .string("runtime")
                o["definition"] = definition
            } else {
                o["source"] = .string(engine.runtimeRules.contains { $0 === rule } ? "swift" : "script")
            }
            return .object(o)
        }))
    }

    func deleteRule(_ encodedID: Substring) throws -> MockResponse {
        let id = PercentDecoding.decode(encodedID)
        if (try? runtimeRules().remove(id: id)) == true {
            try shareRules()
            return .json(.object(["deleted": .string(id)]))
        }
        if engine.scriptRuleSet.rules.contains(where: { $0.id == id }) {
            return Self.error("'\(id)' is a rule of the script: edit the script to remove it", 409)
        }
        return Self.error("no runtime rule '\(id)' (GET /__moonmock/rules lists them)", 404)
    }

    func deleteRules(_ request: MockRequest) throws -> MockResponse {
        let source = request.query("source") ?? "runtime"
        guard source == "runtime" else {
            return Self.error("only runtime rules can be deleted (?source=runtime); the script's come from the script", 400)
        }
        let n = (try? runtimeRules().removeAll()) ?? 0
        try shareRules()
        return .json(.object(["deleted": .integer(Int64(n))]))
    }

    static func error(_ message: String, _ status: Int) -> MockResponse {
        .json(.object(["error": .string(message)]), status: status)
    }
}

/// The runtime rules of a server, made on first use (a Lua VM that a server without any need not hold).
final class RuntimeRulesSlot: Sendable {
    private let rules: Locked<RuntimeRules?>
    private let make: @Sendable () throws -> RuntimeRules

    init(_ given: RuntimeRules?, make: @escaping @Sendable () throws -> RuntimeRules) {
        rules = Locked(given)
        self.make = make
    }

    func get() throws -> RuntimeRules {
        try rules.withLock { r in
            if let r { return r }
            let made = try make()
            r = made
            return made
        }
    }
}

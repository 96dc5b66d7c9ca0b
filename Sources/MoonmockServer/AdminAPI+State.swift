import Foundation
import MoonmockCore

/// `GET`/`PUT`/`DELETE /__moonmock/state/{key}` (a JSON value) and `PUT /__moonmock/state` (an
/// object that replaces the whole store): `mock.state` from any language.
extension AdminAPI {
    func stateKey(_ request: MockRequest, _ encodedKey: Substring) throws -> MockResponse {
        let key = PercentDecoding.decode(encodedKey)
        switch request.method {
        case "GET":
            guard let value = try engine.state.get(key) else { return Self.error("no state key '\(key)'", 404) }
            return .json(value.json)
        case "PUT":
            guard let json = try? JSONValue(parsing: request.body) else {
                return Self.error(#"send the value as JSON: 42, "text", true (null deletes the key)"#, 400)
            }
            do {
                if json == .null {
                    _ = try engine.state.delete(key)
                    return .json(.object(["key": .string(key), "value": .null]))
                }
                guard let value = Self.stateValue(json) else { throw StateRefusal(key: key) }
                try engine.state.set(key, value)
                return .json(.object(["key": .string(key), "value": json]))
            } catch let refusal as StateRefusal {
                return Self.error(refusal.description, 400)
            } catch let away as StoreUnavailable {
                throw away
            } catch {
                return Self.error(String(describing: error), 507)
            }
        case "DELETE":
            return .json(.object(["key": .string(key), "deleted": .bool(try engine.state.delete(key))]))
        default:
            return Self.error("\(request.method) is not allowed on a state key: GET, PUT or DELETE", 405)
        }
    }

    func replaceState(_ request: MockRequest) throws -> MockResponse {
        guard case .object(let o)? = try? JSONValue(parsing: request.body) else {
            return Self.error(#"send an object of keys to values: {"logged_in": true, "cart": 3}"#, 400)
        }
        var values: [(String, StateValue)] = []
        for (key, json) in o.sorted(by: { $0.key < $1.key }) where json != .null {
            guard let value = Self.stateValue(json) else { return Self.error(StateRefusal(key: key).description, 400) }
            values.append((key, value))
        }
        try engine.state.flush()
        do {
            for (key, value) in values { try engine.state.set(key, value) }
        } catch let away as StoreUnavailable {
            throw away
        } catch {
            return Self.error(String(describing: error), 507)
        }
        return .json(.object(try engine.state.snapshot().mapValues(\.json)))
    }

    /// A JSON scalar as a state value; `nil` for arrays and objects, which `mock.state` does not hold.
    static func stateValue(_ json: JSONValue) -> StateValue? {
        switch json {
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        default: return nil
        }
    }
}

private struct StateRefusal: Error, CustomStringConvertible {
    let key: String
    var description: String {
        "state key '\(key)': mock.state holds strings, numbers and booleans; store a table as a JSON string"
    }
}

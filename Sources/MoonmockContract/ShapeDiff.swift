import MoonmockCore

/// Where two JSON bodies differ in shape: keys one has and the other lacks, and types (an
/// object, an array, a string, a number, a boolean, null) at the same place. Values are not
/// compared unless asked (`values: true`). Arrays compare their first elements' shapes.
///
/// ```swift
/// ShapeDiff.compare(mock: .object(["id": .integer(1)]), real: .object(["id": .string("1")]))
/// // ["/id: a number in the mock, a string in the real API"]
/// ```
public enum ShapeDiff {
    public static func compare(mock: JSONValue, real: JSONValue, values: Bool = false) -> [String] {
        var out: [String] = []
        walk(mock, real, "", values, &out)
        return out
    }

    static func kind(_ v: JSONValue) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    private static func walk(_ mock: JSONValue, _ real: JSONValue, _ at: String, _ values: Bool, _ out: inout [String]) {
        guard out.count < 200 else { return }
        let place = at.isEmpty ? "/" : at
        switch (mock, real) {
        case (.object(let m), .object(let r)):
            for key in Set(m.keys).union(r.keys).sorted() {
                let sub = at + "/" + SpecDocuments.Located.escape(key)
                switch (m[key], r[key]) {
                case (let a?, let b?): walk(a, b, sub, values, &out)
                case (_?, nil): out.append("\(sub): in the mock, not in the real API")
                case (nil, _?): out.append("\(sub): in the real API, not in the mock")
                default: break
                }
            }
        case (.array(let m), .array(let r)):
            if let a = m.first, let b = r.first { walk(a, b, at + "/0", values, &out) }
            if values && m.count != r.count { out.append("\(place): \(m.count) items in the mock, \(r.count) in the real API") }
        default:
            if kind(mock) != kind(real) {
                // null where the other has a value: a nullable field, not a different shape.
                if mock == .null || real == .null {
                    if values { out.append("\(place): \(mock.brief) in the mock, \(real.brief) in the real API") }
                    return
                }
                out.append("\(place): \(kind(mock)) in the mock, \(kind(real)) in the real API")
            } else if values && !equal(mock, real) {
                out.append("\(place): \(mock.brief) in the mock, \(real.brief) in the real API")
            }
        }
    }

    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .double(let y)), (.double(let y), .integer(let x)): return Double(x) == y
        default: return a == b
        }
    }
}

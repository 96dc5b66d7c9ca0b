import Foundation
import MoonmockCore

extension JSONSchema {
    /// The keywords that look at the instance alone: type, enum, const, numbers, strings, sizes, required, format.
    func assertions(_ o: [String: JSONValue], _ mask: KeywordMask, _ instance: JSONValue, instancePath: String, schemaPath: String,
                    direction: Direction, _ out: inout Outcome) {
        func failHere(_ keyword: String, _ message: String) { fail(&out, instancePath, schemaPath + "/" + keyword, message) }
        if mask.contains(.type), let type = o["type"] {
            let names = type.arrayItems?.compactMap(\.stringValue) ?? type.stringValue.map { [$0] } ?? []
            if !names.isEmpty && !names.contains(where: { Self.hasType(instance, $0, draft: draft) }) {
                failHere("type", "expected \(names.joined(separator: " or ")), got \(Self.typeName(instance))")
            }
        }
        if mask.contains(.enumeration), let values = o["enum"]?.arrayItems, !values.contains(where: { jsonEqual($0, instance) }) {
            let listed = values.prefix(8).map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: ", ")
            failHere("enum", "\(String(decoding: instance.encoded(), as: UTF8.self).prefix(60)) is not one of \(listed)\(values.count > 8 ? ", …" : "")")
        }
        if mask.contains(.const), let value = o["const"], draft != .draft4, !jsonEqual(value, instance) { failHere("const", "not the constant value") }

        if mask.contains(.numbers), let x = number(instance) {
            let exclusiveFlags = draft == .draft4 || draft == .openAPI30
            if let max = o["maximum"].flatMap(number) {
                let exclusive = exclusiveFlags && o["exclusiveMaximum"] == .bool(true)
                if exclusive ? x >= max : x > max { failHere("maximum", "\(Self.show(instance)) is more than \(exclusive ? "or equal to " : "")\(Self.show(o["maximum"]!))") }
            }
            if let min = o["minimum"].flatMap(number) {
                let exclusive = exclusiveFlags && o["exclusiveMinimum"] == .bool(true)
                if exclusive ? x <= min : x < min { failHere("minimum", "\(Self.show(instance)) is less than \(exclusive ? "or equal to " : "")\(Self.show(o["minimum"]!))") }
            }
            if !exclusiveFlags, let max = o["exclusiveMaximum"].flatMap(number), x >= max { failHere("exclusiveMaximum", "\(Self.show(instance)) is not less than \(Self.show(o["exclusiveMaximum"]!))") }
            if !exclusiveFlags, let min = o["exclusiveMinimum"].flatMap(number), x <= min { failHere("exclusiveMinimum", "\(Self.show(instance)) is not more than \(Self.show(o["exclusiveMinimum"]!))") }
            if let m = o["multipleOf"].flatMap(number), m > 0, !Self.isMultiple(instance, of: o["multipleOf"]!, m) {
                failHere("multipleOf", "\(Self.show(instance)) is not a multiple of \(Self.show(o["multipleOf"]!))")
            }
        }
        if mask.contains(.strings) || mask.contains(.format), case .string(let s) = instance {
            let length = mask.contains(.strings) ? s.unicodeScalars.count : 0
            if mask.contains(.strings), let max = o["maxLength"].flatMap(number), Double(length) > max { failHere("maxLength", "longer than \(Int(max)) characters") }
            if mask.contains(.strings), let min = o["minLength"].flatMap(number), Double(length) < min { failHere("minLength", "shorter than \(Int(min)) characters") }
            if mask.contains(.strings), let pattern = o["pattern"]?.stringValue, let regex = Self.regex(pattern),
               regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil {
                failHere("pattern", "does not match \(pattern)")
            }
            if assertFormats, mask.contains(.format), let format = o["format"]?.stringValue, let valid = JSONSchemaFormats.check(format, s), !valid {
                failHere("format", "not a valid \(format)")
            }
            if mask.contains(.strings), let encoding = o["contentEncoding"]?.stringValue, assertFormats, encoding == "base64", Data(base64Encoded: s) == nil, draft == .openAPI30 {
                failHere("contentEncoding", "not base64")
            }
        }
        if assertFormats, mask.contains(.format), let format = o["format"]?.stringValue, draft == .openAPI30 || format == "int32" || format == "int64" {
            if let x = number(instance), let valid = JSONSchemaFormats.checkNumber(format, x), !valid { failHere("format", "not a valid \(format)") }
        }
        if mask.contains(.arrays), case .array(let items) = instance {
            if let max = o["maxItems"].flatMap(number), Double(items.count) > max { failHere("maxItems", "more than \(Int(max)) items") }
            if let min = o["minItems"].flatMap(number), Double(items.count) < min { failHere("minItems", "fewer than \(Int(min)) items") }
            if o["uniqueItems"] == .bool(true) {
                outer: for i in items.indices {
                    for j in items.indices where j > i && jsonEqual(items[i], items[j]) {
                        failHere("uniqueItems", "items \(i) and \(j) are equal")
                        break outer
                    }
                }
            }
        }
        if mask.contains(.objects), case .object(let members) = instance {
            if let max = o["maxProperties"].flatMap(number), Double(members.count) > max { failHere("maxProperties", "more than \(Int(max)) properties") }
            if let min = o["minProperties"].flatMap(number), Double(members.count) < min { failHere("minProperties", "fewer than \(Int(min)) properties") }
            for name in o["required"]?.arrayItems?.compactMap(\.stringValue) ?? [] where members[name] == nil {
                if direction != .none, let sub = o["properties"]?[name] {
                    // A read-only property is not required in a request, a write-only one not in a response.
                    if sub["readOnly"] == .bool(true) && direction == .request { continue }
                    if sub["writeOnly"] == .bool(true) && direction == .response { continue }
                }
                failHere("required", "\(name) is required")
            }
            if draft.modern, case .object(let dependent)? = o["dependentRequired"] {
                for (name, needed) in dependent where members[name] != nil {
                    for other in needed.arrayItems?.compactMap(\.stringValue) ?? [] where members[other] == nil {
                        failHere("dependentRequired/" + URIs.escape(name), "\(other) is required with \(name)")
                    }
                }
            }
        }
    }

    static func hasType(_ v: JSONValue, _ name: String, draft: Draft) -> Bool {
        switch (name, v) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("number", .integer), ("number", .double): return true
        case ("integer", .integer): return true
        case ("integer", .double(let d)): return draft != .draft4 && d.isFinite && d == d.rounded()
        default: return false
        }
    }

    static func typeName(_ v: JSONValue) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "boolean"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        case .integer: return "integer"
        case .double: return "number"
        }
    }

    static func show(_ v: JSONValue) -> String { String(decoding: v.encoded(), as: UTF8.self) }

    static func isMultiple(_ value: JSONValue, of divisor: JSONValue, _ m: Double) -> Bool {
        if case .integer(let x) = value, case .integer(let d) = divisor, d != 0 { return x % d == 0 }
        guard let x = number(value) else { return true }
        let q = x / m
        guard q.isFinite else { return false }
        return abs(q - q.rounded()) < 1e-9 * Swift.max(1, abs(q))
    }

    /// Compiled patterns by source (a schema's few, kept; bounded).
    private static let regexCache = Locked<[String: RegexBox]>([:])

    /// ECMA-262 as far as ICU's dialect agrees (Unicode-aware `\w`, `\d`: see docs).
    static func regex(_ pattern: String) -> NSRegularExpression? {
        if let known = regexCache.withLock({ $0[pattern] }) { return known.regex }
        guard let made = try? NSRegularExpression(pattern: pattern) else { return nil }
        regexCache.withLock { cache in
            if cache.count > 1024 { cache.removeAll() }
            cache[pattern] = RegexBox(regex: made)
        }
        return made
    }
}

/// An `NSRegularExpression` (immutable, thread-safe for matching) held in the shared cache.
struct RegexBox: @unchecked Sendable {
    let regex: NSRegularExpression
}

import Foundation
import MoonmockCore

/// A schema compiled once into a tree of nodes that answer "valid or not" without reading the
/// schema's JSON again: its bounds as numbers, its properties in a table, its `$ref`s linked.
/// Only the common vocabulary compiles (types, enum/const, numbers, strings, formats, arrays with
/// one `items` schema, objects with properties/required/additionalProperties, allOf/anyOf/
/// oneOf/not, static `$ref`s, OpenAPI's nullable/readOnly/writeOnly); a schema using anything
/// else (unevaluated*, dynamic references, if/then/else, pattern properties, `$id`s below the
/// root, …) is left to the interpreter. An instance the tree calls invalid is read again by the
/// interpreter for its errors, so the tree decides only "valid".
final class CompiledNode: @unchecked Sendable {   // built once, then only read
    var always: Bool?            // true: any instance (`{}` or `true`); false: none
    var types: [String] = []
    var nullable = false
    var enumValues: [JSONValue]?
    var constValue: JSONValue?
    var maximum: (Double, Bool)?, minimum: (Double, Bool)?   // (bound, exclusive)
    var multipleOf: (JSONValue, Double)?
    var maxLength: Double?, minLength: Double?
    var pattern: NSRegularExpression?
    var format: String?
    var maxItems: Double?, minItems: Double?
    var uniqueItems = false
    var items: CompiledNode?
    var properties: [String: CompiledNode] = [:]
    var required: [String] = []
    /// Required names with a property schema (counted while members are read: no second
    /// lookup), and those without one.
    var requiredProperties = 0
    var requiredOthers: [String] = []
    var isRequired = false
    var additional: CompiledNode?
    var maxProperties: Double?, minProperties: Double?
    var allOf: [CompiledNode] = [], anyOf: [CompiledNode] = [], oneOf: [CompiledNode] = []
    var not: CompiledNode?
    var ref: CompiledNode?
    var readOnly = false, writeOnly = false
    var hasStringChecks = false, hasNumberChecks = false

    /// Whether `v` is valid; `draft` for integers and formats, `direction` for OpenAPI's read/write-only.
    func valid(_ v: JSONValue, _ schema: JSONSchema, _ direction: JSONSchema.Direction) -> Bool {
        var overflow = false
        // Past the depth limit the tree cannot tell (a `not` would turn a cut-off into a pass):
        // "invalid", and the interpreter decides.
        return valid(v, schema, direction, depth: 0, &overflow) && !overflow
    }

    func valid(_ v: JSONValue, _ schema: JSONSchema, _ direction: JSONSchema.Direction, depth: Int, _ overflow: inout Bool) -> Bool {
        if let always { return always }
        // A schema that refers to itself without consuming the instance (`allOf: [{$ref: "#"}]`).
        guard depth < 200, !overflow else { overflow = true; return false }
        let depth = depth + 1
        if nullable && v == .null { return true }
        if let ref, !ref.valid(v, schema, direction, depth: depth, &overflow) { return false }
        if !types.isEmpty && !types.contains(where: { JSONSchema.hasType(v, $0, draft: schema.draft) }) { return false }
        if let enumValues, !enumValues.contains(where: { jsonEqual($0, v) }) { return false }
        if let constValue, !jsonEqual(constValue, v) { return false }
        switch v {
        case .integer, .double:
            guard hasNumberChecks, let x = number(v) else { break }
            if let (max, exclusive) = maximum, exclusive ? x >= max : x > max { return false }
            if let (min, exclusive) = minimum, exclusive ? x <= min : x < min { return false }
            if let (divisor, m) = multipleOf, !JSONSchema.isMultiple(v, of: divisor, m) { return false }
            if schema.assertFormats, let format, schema.draft == .openAPI30 || format == "int32" || format == "int64",
               let ok = JSONSchemaFormats.checkNumber(format, x), !ok { return false }
        case .string(let s):
            guard hasStringChecks else { break }
            if maxLength != nil || minLength != nil {
                let length = Double(s.unicodeScalars.count)
                if let maxLength, length > maxLength { return false }
                if let minLength, length < minLength { return false }
            }
            if let pattern, pattern.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil { return false }
            if schema.assertFormats, let format, let ok = JSONSchemaFormats.check(format, s), !ok { return false }
        case .array(let list):
            if let maxItems, Double(list.count) > maxItems { return false }
            if let minItems, Double(list.count) < minItems { return false }
            if uniqueItems {
                for i in list.indices { for j in list.indices where j > i && jsonEqual(list[i], list[j]) { return false } }
            }
            if let items { for item in list where !items.valid(item, schema, direction, depth: depth, &overflow) { return false } }
        case .object(let members):
            if let maxProperties, Double(members.count) > maxProperties { return false }
            if let minProperties, Double(members.count) < minProperties { return false }
            for name in requiredOthers where members[name] == nil { return false }
            var requiredSeen = 0
            for (name, value) in members {
                if let p = properties[name] {
                    if p.isRequired { requiredSeen += 1 }
                    if direction == .request && p.readOnly || direction == .response && p.writeOnly { return false }
                    if !p.valid(value, schema, direction, depth: depth, &overflow) { return false }
                } else if let additional, !additional.valid(value, schema, direction, depth: depth, &overflow) {
                    return false
                }
            }
            if requiredSeen < requiredProperties {
                for name in required where members[name] == nil {
                    if direction != .none, let p = properties[name], (p.readOnly && direction == .request) || (p.writeOnly && direction == .response) { continue }
                    return false
                }
            }
        default: break
        }
        for sub in allOf where !sub.valid(v, schema, direction, depth: depth, &overflow) { return false }
        if !anyOf.isEmpty {
            var any = false
            for sub in anyOf where sub.valid(v, schema, direction, depth: depth, &overflow) { any = true; break }
            if !any { return false }
        }
        if !oneOf.isEmpty {
            var passing = 0
            for sub in oneOf where sub.valid(v, schema, direction, depth: depth, &overflow) {
                passing += 1
                if passing > 1 { return false }
            }
            if passing != 1 { return false }
        }
        if let not, not.valid(v, schema, direction, depth: depth, &overflow) { return false }
        return true
    }
}

extension JSONSchema {
    /// Keywords a compiled node reads, and those it may ignore (annotations and containers).
    static let compiledKeywords: Set<String> = [
        "type", "enum", "const", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf", "maxLength", "minLength",
        "pattern", "format", "items", "maxItems", "minItems", "uniqueItems", "properties", "required", "additionalProperties",
        "maxProperties", "minProperties", "allOf", "anyOf", "oneOf", "not", "$ref", "nullable", "readOnly", "writeOnly",
        "title", "description", "example", "examples", "default", "deprecated", "$schema", "$comment", "$defs", "definitions",
        "xml", "externalDocs", "$anchor", "contentMediaType", "summary",
    ]

    /// The tree for the schema at `uri` (`nil`: it uses keywords only the interpreter reads).
    func compiled(at uri: String) -> CompiledNode? {
        lock.lock()
        if let hit = compiledEntries[uri] { lock.unlock(); return hit.node }
        lock.unlock()
        var building: [String: CompiledNode] = [:]
        var node: CompiledNode?
        if let (found, byID, base) = lookupResourceCached(uri), !(byID && uri != baseURI && found[draft.idKeyword] != nil) {
            node = compile(found, base: base, key: uri, &building, depth: 0)
        }
        lock.lock()
        compiledEntries[uri] = CompiledEntry(node: node)
        lock.unlock()
        return node
    }

    private func compile(_ schema: JSONValue, base: String, key: String?, _ building: inout [String: CompiledNode], depth: Int) -> CompiledNode? {
        guard depth < 64 else { return nil }
        if let key, let known = building[key] { return known }
        let node = CompiledNode()
        if let key { building[key] = node }
        switch schema {
        case .bool(let b): node.always = b; return node
        case .object(let o):
            if o.isEmpty { node.always = true; return node }
            for k in o.keys where !Self.compiledKeywords.contains(k) && !k.hasPrefix("x-") { return nil }
            if depth > 0, o[draft.idKeyword] != nil { return nil }
            if draft == .openAPI30, o["discriminator"] != nil { return nil }
            if o["discriminator"] != nil && draft != .openAPI30 { return nil }
            func sub(_ s: JSONValue) -> CompiledNode? { compile(s, base: base, key: nil, &building, depth: depth + 1) }
            if let ref = o["$ref"]?.stringValue {
                let target = resolveCached(ref, against: base)
                guard let (found, _, targetBase) = lookupResourceCached(target), found[draft.idKeyword] == nil || found == root,
                      let linked = compile(found, base: targetBase, key: target, &building, depth: depth + 1) else { return nil }
                node.ref = linked
                if draft.refAlone { return node }
            }
            switch o["type"] {
            case .string(let t)?: node.types = [t]
            case .array(let list)?: node.types = list.compactMap(\.stringValue)
            case nil: break
            default: return nil
            }
            if draft == .openAPI30 && o["nullable"] == .bool(true) { node.nullable = true }
            if let e = o["enum"] { guard case .array(let list) = e else { return nil }; node.enumValues = list }
            if let c = o["const"], draft != .draft4 { node.constValue = c }
            let flags = draft == .draft4 || draft == .openAPI30
            if let max = o["maximum"].flatMap(number) { node.maximum = (max, flags && o["exclusiveMaximum"] == .bool(true)) }
            if let min = o["minimum"].flatMap(number) { node.minimum = (min, flags && o["exclusiveMinimum"] == .bool(true)) }
            if !flags, let max = o["exclusiveMaximum"].flatMap(number), max <= (node.maximum?.0 ?? .infinity) { node.maximum = (max, true) }
            if !flags, let min = o["exclusiveMinimum"].flatMap(number), min >= (node.minimum?.0 ?? -.infinity) { node.minimum = (min, true) }
            if let m = o["multipleOf"], let d = number(m), d > 0 { node.multipleOf = (m, d) }
            node.maxLength = o["maxLength"].flatMap(number)
            node.minLength = o["minLength"].flatMap(number)
            if let p = o["pattern"]?.stringValue { guard let regex = Self.regex(p) else { return nil }; node.pattern = regex }
            node.format = o["format"]?.stringValue
            node.hasStringChecks = node.maxLength != nil || node.minLength != nil || node.pattern != nil || node.format != nil
            node.hasNumberChecks = node.maximum != nil || node.minimum != nil || node.multipleOf != nil || node.format != nil
            node.maxItems = o["maxItems"].flatMap(number)
            node.minItems = o["minItems"].flatMap(number)
            node.uniqueItems = o["uniqueItems"] == .bool(true)
            if let items = o["items"] {
                if case .array = items { return nil }   // the tuple form (draft 4–2019-09)
                guard let n = sub(items) else { return nil }
                node.items = n
            }
            if case .object(let props)? = o["properties"] {
                for (name, s) in props {
                    guard let n = sub(s) else { return nil }
                    node.properties[name] = n
                    if case .object(let p) = s { n.readOnly = p["readOnly"] == .bool(true); n.writeOnly = p["writeOnly"] == .bool(true) }
                }
            } else if o["properties"] != nil { return nil }
            if let r = o["required"] {
                guard case .array(let list) = r else { return nil }
                node.required = Array(Set(list.compactMap(\.stringValue))).sorted()
                for name in node.required {
                    if let p = node.properties[name] { p.isRequired = true; node.requiredProperties += 1 } else { node.requiredOthers.append(name) }
                }
            }
            if let a = o["additionalProperties"] { guard let n = sub(a) else { return nil }; node.additional = n }
            node.maxProperties = o["maxProperties"].flatMap(number)
            node.minProperties = o["minProperties"].flatMap(number)
            for (keyword, keep) in [("allOf", 0), ("anyOf", 1), ("oneOf", 2)] {
                guard let list = o[keyword] else { continue }
                guard case .array(let schemas) = list, !schemas.isEmpty else { return nil }
                var nodes: [CompiledNode] = []
                for s in schemas { guard let n = sub(s) else { return nil }; nodes.append(n) }
                switch keep { case 0: node.allOf = nodes; case 1: node.anyOf = nodes; default: node.oneOf = nodes }
            }
            if let n = o["not"] { guard let c = sub(n) else { return nil }; node.not = c }
            node.readOnly = o["readOnly"] == .bool(true)
            node.writeOnly = o["writeOnly"] == .bool(true)
            return node
        default:
            return nil
        }
    }
}

/// A compiled entry point, or the knowledge that there is none (both remembered).
struct CompiledEntry {
    let node: CompiledNode?
}

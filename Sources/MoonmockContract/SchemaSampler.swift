import MoonmockCore
import MoonmockSchema

/// Values made from a spec's schemas that the schemas accept: lengths, bounds, patterns,
/// formats, required properties, `allOf`/`oneOf`, `readOnly`/`writeOnly` by direction. The same
/// seed gives the same value on every machine.
///
/// ```swift
/// var sampler = SchemaSampler(documents: docs, direction: .response, seed: 7)
/// sampler.sample(docs.lookup("#/components/schemas/Pet", from: docs.root.document)!)
/// ```
public struct SchemaSampler {
    let documents: SpecDocuments
    let direction: JSONSchema.Direction
    var random: SeededRandom
    /// Take a schema's own `example` (or first `examples` entry, or `default`) where it has one.
    public var useExamples: Bool
    /// Plausible values (`mock.schema`): formats and property names (`email`, `city`,
    /// `created_at` …) drawn from this generator instead of placeholders.
    public var fake: Fake?

    public init(documents: SpecDocuments, direction: JSONSchema.Direction, seed: UInt64, useExamples: Bool = true) {
        self.documents = documents
        self.direction = direction
        self.useExamples = useExamples
        random = SeededRandom(seed: seed)
    }

    /// A value `schema` accepts (as far as it can be made: a schema no finite value meets gets
    /// its closest attempt).
    public mutating func sample(_ schema: SpecDocuments.Located, depth: Int = 0, name: String? = nil) -> JSONValue {
        let s = documents.resolve(schema)
        guard case .object(let o) = s.value else { return s.value == .bool(false) ? .null : .string("value") }
        if let value = o["const"] { return value }
        if useExamples, let example = o["example"] ?? o["examples"]?[0] ?? o["default"] { return example }
        if case .array(let values)? = o["enum"], !values.isEmpty {
            let usable = values.filter { $0 != .null }
            return usable.isEmpty ? .null : usable[random.below(usable.count)]
        }
        let types = typeList(o)
        let nullable = types.contains("null") || o["nullable"] == .bool(true)
        if depth > 10 && nullable { return .null }
        if let all = s.child("allOf"), !all.elements.isEmpty { return sampleAllOf(s, all.elements, depth: depth) }
        for key in ["oneOf", "anyOf"] {
            if let options = s.child(key)?.elements, !options.isEmpty {
                let picked = options[depth > 6 ? 0 : random.below(options.count)]
                return sample(picked, depth: depth + 1)
            }
        }
        if !types.isEmpty && types.allSatisfy({ $0 == "null" }) { return .null }
        let type = types.first { $0 != "null" } ?? guessType(o)
        switch type {
        case "object": return sampleObject(s, depth: depth)
        case "array": return sampleArray(s, depth: depth)
        case "integer": return .integer(sampleInteger(o))
        case "number": return plausibleNumber(o, name: name) ?? sampleNumber(o)
        case "boolean": return .bool(random.below(2) == 0)
        case "null": return .null
        default: return .string(plausibleString(o, name: name) ?? sampleString(o))
        }
    }

    func typeList(_ o: [String: JSONValue]) -> [String] {
        switch o["type"] {
        case .string(let t)?: return [t]
        case .array(let list)?: return list.compactMap(\.stringValue)
        default: return []
        }
    }

    func guessType(_ o: [String: JSONValue]) -> String {
        if o["properties"] != nil || o["additionalProperties"] != nil || o["required"] != nil { return "object" }
        if o["items"] != nil || o["prefixItems"] != nil { return "array" }
        if o["minimum"] != nil || o["maximum"] != nil || o["multipleOf"] != nil { return "number" }
        return "string"
    }

    /// `allOf`: objects merged (every part's properties and required ones), else the first part
    /// that says what it is, with the others' bounds.
    mutating func sampleAllOf(_ s: SpecDocuments.Located, _ parts: [SpecDocuments.Located], depth: Int) -> JSONValue {
        var merged: [String: JSONValue] = [:]
        var properties: [String: JSONValue] = [:]
        var required: [JSONValue] = []
        var places: [String: SpecDocuments.Located] = [:]
        func absorb(_ part: SpecDocuments.Located, _ level: Int) {
            let p = documents.resolve(part)
            guard case .object(let o) = p.value, level < 8 else { return }
            for (key, value) in o where !["properties", "required", "allOf", "$ref"].contains(key) && merged[key] == nil { merged[key] = value }
            for (name, place) in p.child("properties")?.members ?? [] where places[name] == nil { places[name] = place; properties[name] = place.value }
            if case .array(let r)? = o["required"] { required += r }
            for sub in p.child("allOf")?.elements ?? [] { absorb(sub, level + 1) }
        }
        absorb(s, 0)
        let isObject = !places.isEmpty || typeList(merged).contains("object")
        guard isObject else {
            // A scalar built in parts (say, a string enum wrapped to add a description).
            for part in parts {
                let p = documents.resolve(part)
                if p.value["type"] != nil || p.value["enum"] != nil || p.value["const"] != nil || p.value["allOf"] != nil { return sample(p, depth: depth + 1) }
            }
            return sample(parts[0], depth: depth + 1)
        }
        var object: [String: JSONValue] = [:]
        let requiredNames = Set(required.compactMap(\.stringValue))
        for name in places.keys.sorted() where include(name, places[name]!, required: requiredNames.contains(name), depth: depth) {
            object[name] = sample(places[name]!, depth: depth + 1, name: name)
        }
        // A discriminator's property names the schema it is.
        if let property = merged["discriminator"]?["propertyName"]?.stringValue, object[property] == nil || object[property]?.stringValue == nil,
           let name = s.value["$ref"]?.stringValue?.split(separator: "/").last {
            object[property] = .string(String(name))
        }
        return .object(object)
    }

    /// Whether an object's property is sampled: required ones always; optional ones while the
    /// value is shallow; never one the direction leaves out.
    func include(_ name: String, _ place: SpecDocuments.Located, required: Bool, depth: Int) -> Bool {
        let p = documents.resolve(place)
        if direction == .request && p.value["readOnly"] == .bool(true) { return false }
        if direction == .response && p.value["writeOnly"] == .bool(true) { return false }
        return required || depth < 4
    }

    mutating func sampleObject(_ s: SpecDocuments.Located, depth: Int) -> JSONValue {
        var object: [String: JSONValue] = [:]
        let required = Set((s.value["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        for (name, place) in s.child("properties")?.members ?? [] where include(name, place, required: required.contains(name), depth: depth) {
            object[name] = sample(place, depth: depth + 1, name: name)
        }
        // Required names without a property schema, and a minimum count of members.
        for name in required.sorted() where object[name] == nil && s.value["properties"]?[name] == nil { object[name] = .string("value") }
        let least = Int(s.value["minProperties"].flatMap(Self.integer) ?? 0)
        var n = 1
        while object.count < least {
            let extra = s.child("additionalProperties").flatMap { $0.value == .bool(true) ? nil : $0 }
            object["extra\(n)"] = extra.map { sample($0, depth: depth + 1) } ?? .string("value")
            n += 1
        }
        if let property = s.value["discriminator"]?["propertyName"]?.stringValue, object[property] == nil {
            object[property] = .string(s.pointer.split(separator: "/").last.map(String.init) ?? "value")
        }
        return .object(object)
    }

    mutating func sampleArray(_ s: SpecDocuments.Located, depth: Int) -> JSONValue {
        let least = Int(s.value["minItems"].flatMap(Self.integer) ?? (depth > 6 ? 0 : 1))
        let most = s.value["maxItems"].flatMap(Self.integer).map(Int.init) ?? max(least, 2)
        var items: [JSONValue] = []
        let prefix = s.child("prefixItems")?.elements ?? []
        let count = min(max(least, prefix.count > 0 ? prefix.count : min(1, most)), most)
        let unique = s.value["uniqueItems"] == .bool(true)
        for i in 0..<count {
            let place = i < prefix.count ? prefix[i] : s.child("items")
            var item = place.map { sample($0, depth: depth + 1) } ?? .string("item\(i + 1)")
            var attempts = 0
            while unique && items.contains(item) && attempts < 8 {
                item = place.map { sample($0, depth: depth + 1) } ?? .string("item\(i + 1)")
                attempts += 1
            }
            if unique && items.contains(item) { break }
            items.append(item)
        }
        return .array(items)
    }

    static func integer(_ v: JSONValue) -> Int64? {
        switch v {
        case .integer(let n): return n
        case .double(let x) where x.isFinite && x.rounded() == x && abs(x) < 9e18: return Int64(x)
        default: return nil
        }
    }

    static func number(_ v: JSONValue?) -> Double? {
        switch v {
        case .integer(let n)?: return Double(n)
        case .double(let x)?: return x
        default: return nil
        }
    }
}

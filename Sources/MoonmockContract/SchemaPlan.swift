import MoonmockCore
import MoonmockSchema

/// A schema prepared once for `mock.schema`: what ``SchemaSampler`` decides on every call
/// (references followed, keys sorted, bounds worked out, patterns parsed, property names read
/// for the kind of value they hold) decided at compile time, so a call only draws. Schemas
/// using what the plan does not cover (`allOf`, `prefixItems`, `uniqueItems`, `multipleOf`,
/// `minProperties`, discriminators, recursion) get no plan: ``SchemaSampler`` answers them.
///
/// ```swift
/// let plan = SchemaPlan(docs.root, documents: docs)
/// var random = SeededRandom(seed: 7)
/// var fake = Fake(seed: 8)
/// plan?.sample(&random, &fake)   // a value the schema accepts
/// ```
public final class SchemaPlan: Sendable {
    indirect enum Node: Sendable {
        case constant(JSONValue)
        case choice([JSONValue])
        case oneOf([Node])
        case object([(name: String, node: Node)])
        case array(item: Node?, least: Int, most: Int)
        case integer(low: Int64, high: Int64)
        case number(low: Double, high: Double, fake: Fake.Kind?)
        case boolean
        case null
        case string(StringRule)
    }

    struct StringRule: Sendable {
        var least = 0
        var most = Int.max
        /// A `mock.fake` kind from the format or the property's name.
        var fake: Fake.Kind?
        var pattern: RegexSampler?
    }

    let root: Node

    /// `nil` when the schema uses what a plan does not cover.
    public init?(_ schema: SpecDocuments.Located, documents: SpecDocuments, direction: JSONSchema.Direction = .response) {
        var compiler = Compiler(documents: documents, direction: direction)
        guard let root = compiler.compile(schema, name: nil, depth: 0) else { return nil }
        self.root = root
    }

    /// A value the schema accepts: structure drawn from `random`, strings from `fake`.
    public func sample(_ random: inout SeededRandom, _ fake: inout Fake) -> JSONValue {
        Self.sample(root, &random, &fake)
    }

    static func sample(_ node: Node, _ random: inout SeededRandom, _ fake: inout Fake) -> JSONValue {
        switch node {
        case .constant(let v): return v
        case .choice(let values): return values[random.below(values.count)]
        case .oneOf(let options): return sample(options[random.below(options.count)], &random, &fake)
        case .object(let members):
            var o: [String: JSONValue] = [:]
            o.reserveCapacity(members.count)
            for m in members { o[m.name] = sample(m.node, &random, &fake) }
            return .object(o)
        case .array(let item, let least, let most):
            let count = least + random.below(most - least + 1)
            guard let item else { return .array((0..<count).map { .string("item\($0 + 1)") }) }
            var items: [JSONValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(sample(item, &random, &fake)) }
            return .array(items)
        case .integer(let low, let high): return .integer(random.integer(low, high))
        case .number(let low, let high, let kind):
            if let kind, case .double(let x)? = try? fake.value(kind), x >= low, x <= high { return .double(x) }
            let x = low + (high - low) * Double(random.below(1000)) / 1000
            let rounded = (x * 100).rounded() / 100
            return .double(rounded >= low && rounded <= high ? rounded : x)
        case .boolean: return .bool(random.below(2) == 0)
        case .null: return .null
        case .string(let rule): return .string(string(rule, &random, &fake))
        }
    }

    static func string(_ rule: StringRule, _ random: inout SeededRandom, _ fake: inout Fake) -> String {
        if var pattern = rule.pattern {
            for _ in 0..<6 {
                pattern.random = SeededRandom(seed: random.next())
                let s = pattern.sample()
                if s.count >= rule.least && s.count <= rule.most { return s }
            }
        }
        if let kind = rule.fake, case .string(let s)? = try? fake.value(kind), rule.least == 0 && rule.most == .max || (s.count >= rule.least && s.count <= rule.most) {
            return s
        }
        var s = SchemaSampler.words[random.below(SchemaSampler.words.count)] + " " + String(random.below(900) + 100)
        if s.count > rule.most { s = String(s.prefix(rule.most)) }
        if s.count < rule.least { s += String(repeating: "x", count: rule.least - s.count) }
        return s
    }

    /// Compiles a schema into nodes; `nil` for anything a plan leaves to ``SchemaSampler``.
    struct Compiler {
        let documents: SpecDocuments
        let direction: JSONSchema.Direction
        var visiting: Set<String> = []

        mutating func compile(_ schema: SpecDocuments.Located, name: String?, depth: Int) -> Node? {
            let s = documents.resolve(schema)
            guard depth < 12, !visiting.contains(s.uri) else { return nil }   // recursion: the sampler bounds it
            visiting.insert(s.uri)
            defer { visiting.remove(s.uri) }
            guard case .object(let o) = s.value else { return s.value == .bool(false) ? .null : .constant(.string("value")) }
            for key in ["allOf", "prefixItems", "uniqueItems", "multipleOf", "minProperties", "discriminator", "if", "not",
                        "patternProperties", "dependentRequired", "contains"] where o[key] != nil { return nil }
            if let value = o["const"] { return .constant(value) }
            if case .array(let values)? = o["enum"], !values.isEmpty {
                let usable = values.filter { $0 != .null }
                return usable.isEmpty ? .null : .choice(usable)
            }
            for key in ["oneOf", "anyOf"] {
                if let options = s.child(key)?.elements, !options.isEmpty {
                    var nodes: [Node] = []
                    for option in options {
                        guard let n = compile(option, name: name, depth: depth + 1) else { return nil }
                        nodes.append(n)
                    }
                    return .oneOf(nodes)
                }
            }
            let sampler = SchemaSampler(documents: documents, direction: direction, seed: 0, useExamples: false)
            let types = sampler.typeList(o)
            if !types.isEmpty && types.allSatisfy({ $0 == "null" }) { return .null }
            let type = types.first { $0 != "null" } ?? sampler.guessType(o)
            switch type {
            case "object":
                let required = Set((o["required"]?.arrayValue ?? []).compactMap(\.stringValue))
                var members: [(String, Node)] = []
                for (property, place) in s.child("properties")?.members ?? [] where sampler.include(property, place, required: required.contains(property), depth: depth) {
                    guard let n = compile(place, name: property, depth: depth + 1) else { return nil }
                    members.append((property, n))
                }
                for r in required.sorted() where o["properties"]?[r] == nil { members.append((r, .constant(.string("value")))) }
                return .object(members)
            case "array":
                let least = Int(o["minItems"].flatMap(SchemaSampler.integer) ?? (depth > 6 ? 0 : 1))
                let most = o["maxItems"].flatMap(SchemaSampler.integer).map(Int.init) ?? max(least, 2)
                let count = min(max(least, min(1, most)), most)
                guard let items = s.child("items") else { return .array(item: nil, least: count, most: count) }
                guard let n = compile(items, name: nil, depth: depth + 1) else { return nil }
                // As the sampler: the least it may, at least one when it may, up to the most.
                return .array(item: n, least: count, most: max(count, min(most, least + 2)))
            case "integer":
                let range = sampler.integerRange(o)
                return .integer(low: range.start, high: range.top)
            case "number":
                let low = SchemaSampler.number(o["minimum"]) ?? (SchemaSampler.number(o["maximum"]).map { min(1.5, $0) } ?? 1.5)
                let high = SchemaSampler.number(o["maximum"]) ?? low + 100
                guard o["exclusiveMinimum"] == nil && o["exclusiveMaximum"] == nil, low <= high else { return nil }
                let hint = SchemaSampler.hint(name)
                return .number(low: low, high: high, fake: hint == "latitude" || hint == "longitude" ? hint.flatMap(Fake.Kind.init(rawValue:)) : nil)
            case "boolean": return .boolean
            case "null": return .null
            default:
                var rule = StringRule()
                rule.least = o["minLength"].flatMap(SchemaSampler.integer).map(Int.init) ?? 0
                rule.most = o["maxLength"].flatMap(SchemaSampler.integer).map(Int.init) ?? Int.max
                if let pattern = o["pattern"]?.stringValue {
                    var seed = SeededRandom(seed: 0)
                    guard let parsed = RegexSampler(pattern, random: &seed) else { return nil }
                    rule.pattern = parsed
                } else if let format = o["format"]?.stringValue {
                    guard let kind = SchemaSampler.formatKinds[format] else { return nil }   // the sampler's own shapes
                    rule.fake = Fake.Kind(rawValue: kind)
                } else {
                    rule.fake = SchemaSampler.hint(name).flatMap(Fake.Kind.init(rawValue:))
                }
                return .string(rule)
            }
        }
    }
}

import Foundation
import MoonmockCore

extension JSONSchema {
    /// The keywords that apply subschemas: allOf/anyOf/oneOf/not, if/then/else, properties and
    /// their kin, items and their kin, contains, dependencies.
    func applicators(_ o: [String: JSONValue], _ mask: KeywordMask, _ instance: JSONValue, base: String, instancePath: String,
                     schemaPath: String, _ out: inout Outcome, _ ctx: inout Context) {
        func sub(_ schema: JSONValue, _ at: String, _ path: String, _ value: JSONValue? = nil) -> Outcome {
            evaluate(schema, value ?? instance, base: base, instancePath: at, schemaPath: schemaPath + path, &ctx)
        }
        if mask.contains(.logic) { logic(o, instance, base: base, instancePath: instancePath, schemaPath: schemaPath, &out, &ctx) }
        if mask.contains(.condition), draft != .draft4 && draft != .draft6, let condition = o["if"] {
            let r = sub(condition, instancePath, "/if")
            if r.valid {
                out.absorb(r)
                if let then = o["then"] { let t = sub(then, instancePath, "/then"); out.errors += t.errors; out.absorb(t) }
            } else if let otherwise = o["else"] {
                let e = sub(otherwise, instancePath, "/else"); out.errors += e.errors; out.absorb(e)
            }
        }
        if mask.contains(.properties) || mask.contains(.dependencies), case .object(let members) = instance {
            objectApplicators(o, members, base: base, instancePath: instancePath, schemaPath: schemaPath, &out, &ctx)
        }
        if mask.contains(.items) || mask.contains(.contains), case .array(let items) = instance {
            arrayApplicators(o, items, base: base, instancePath: instancePath, schemaPath: schemaPath, &out, &ctx)
        }
    }

    private func logic(_ o: [String: JSONValue], _ instance: JSONValue, base: String, instancePath: String, schemaPath: String,
                       _ out: inout Outcome, _ ctx: inout Context) {
        func sub(_ schema: JSONValue, _ at: String, _ path: String) -> Outcome {
            evaluate(schema, instance, base: base, instancePath: at, schemaPath: schemaPath + path, &ctx)
        }
        if let all = o["allOf"]?.arrayItems {
            for (i, s) in all.enumerated() {
                let r = sub(s, instancePath, "/allOf/\(i)")
                out.errors += r.errors
                out.absorb(r)
            }
        }
        if let any = o["anyOf"]?.arrayItems {
            var passed = false
            var collected: [ValidationError] = []
            for (i, s) in any.enumerated() {
                let r = sub(s, instancePath, "/anyOf/\(i)")
                if r.valid { passed = true; out.absorb(r) } else { collected += r.errors }
            }
            if !passed { fail(&out, instancePath, schemaPath + "/anyOf", "matches none of the anyOf schemas: " + Self.brief(collected)) }
        }
        if let one = o["oneOf"]?.arrayItems {
            var passing: [Int] = []
            var collected: [ValidationError] = []
            if draft == .openAPI30, let choice = discriminated(o, instance) {
                let r = sub(choice.schema, instancePath, choice.path)
                out.errors += r.errors
                out.absorb(r)
            } else {
                for (i, s) in one.enumerated() {
                    let r = sub(s, instancePath, "/oneOf/\(i)")
                    if r.valid { passing.append(i); out.absorb(r) } else { collected += r.errors }
                }
                if passing.isEmpty { fail(&out, instancePath, schemaPath + "/oneOf", "matches none of the oneOf schemas: " + Self.brief(collected)) }
                if passing.count > 1 { fail(&out, instancePath, schemaPath + "/oneOf", "matches more than one oneOf schema (\(passing.map(String.init).joined(separator: ", ")))") }
            }
        }
        if let not = o["not"] {
            var silent = ctx
            if evaluate(not, instance, base: base, instancePath: instancePath, schemaPath: schemaPath + "/not", &silent).valid {
                fail(&out, instancePath, schemaPath + "/not", "must not match the schema in not")
            }
        }
    }

    private func objectApplicators(_ o: [String: JSONValue], _ members: [String: JSONValue], base: String, instancePath: String,
                                   schemaPath: String, _ out: inout Outcome, _ ctx: inout Context) {
        var matched = Set<String>()
        if case .object(let properties)? = o["properties"] {
            for (name, schema) in properties {
                guard let value = members[name] else { continue }
                if o["additionalProperties"] != nil { matched.insert(name) }
                let r = evaluate(schema, value, base: base, instancePath: ctx.join(instancePath, URIs.escape(name)),
                                 schemaPath: ctx.paths ? schemaPath + "/properties/" + URIs.escape(name) : schemaPath, &ctx)
                out.errors += r.errors
                if r.valid && ctx.annotations { out.properties.insert(name) }
            }
        }
        if case .object(let patterns)? = o["patternProperties"] {
            for (pattern, schema) in patterns {
                guard let regex = Self.regex(pattern) else { continue }
                for (name, value) in members where regex.firstMatch(in: name, range: NSRange(name.startIndex..., in: name)) != nil {
                    matched.insert(name)
                    let r = evaluate(schema, value, base: base, instancePath: instancePath + "/" + URIs.escape(name),
                                     schemaPath: schemaPath + "/patternProperties/" + URIs.escape(pattern), &ctx)
                    out.errors += r.errors
                    if r.valid { out.properties.insert(name) }
                }
            }
        }
        if let additional = o["additionalProperties"] {
            for (name, value) in members where !matched.contains(name) {
                let r = evaluate(additional, value, base: base, instancePath: instancePath + "/" + URIs.escape(name),
                                 schemaPath: schemaPath + "/additionalProperties", &ctx)
                if additional == .bool(false) {
                    fail(&out, instancePath + "/" + URIs.escape(name), schemaPath + "/additionalProperties", "\(name) is not allowed")
                } else {
                    out.errors += r.errors
                }
                if r.valid { out.properties.insert(name) }
            }
        }
        if let names = o["propertyNames"], draft != .draft4 {
            for name in members.keys {
                let r = evaluate(names, .string(name), base: base, instancePath: instancePath + "/" + URIs.escape(name),
                                 schemaPath: schemaPath + "/propertyNames", &ctx)
                if !r.valid { fail(&out, instancePath + "/" + URIs.escape(name), schemaPath + "/propertyNames", "the name \(name) is not allowed: " + Self.brief(r.errors)) }
            }
        }
        if draft.modern, case .object(let dependent)? = o["dependentSchemas"] {
            for (name, schema) in dependent where members[name] != nil {
                let r = evaluate(schema, .object(members), base: base, instancePath: instancePath,
                                 schemaPath: schemaPath + "/dependentSchemas/" + URIs.escape(name), &ctx)
                out.errors += r.errors
                out.absorb(r)
            }
        }
        if !draft.modern, case .object(let dependencies)? = o["dependencies"] {
            for (name, dependency) in dependencies where members[name] != nil {
                if let needed = dependency.arrayItems {
                    for other in needed.compactMap(\.stringValue) where members[other] == nil {
                        fail(&out, instancePath, schemaPath + "/dependencies/" + URIs.escape(name), "\(other) is required with \(name)")
                    }
                } else {
                    let r = evaluate(dependency, .object(members), base: base, instancePath: instancePath,
                                     schemaPath: schemaPath + "/dependencies/" + URIs.escape(name), &ctx)
                    out.errors += r.errors
                }
            }
        }
    }

    private func arrayApplicators(_ o: [String: JSONValue], _ items: [JSONValue], base: String, instancePath: String,
                                  schemaPath: String, _ out: inout Outcome, _ ctx: inout Context) {
        func each(_ schema: JSONValue, from start: Int, _ path: String) {
            guard start < items.count else { return }
            var allValid = true
            for i in start..<items.count {
                let r = evaluate(schema, items[i], base: base, instancePath: ctx.join(instancePath, String(i)),
                                 schemaPath: ctx.paths ? schemaPath + path : schemaPath, &ctx)
                out.errors += r.errors
                allValid = allValid && r.valid
            }
            if allValid { out.allItems = true }
        }
        func tuple(_ schemas: [JSONValue], _ path: String) -> Int {
            for (i, schema) in schemas.enumerated() where i < items.count {
                let r = evaluate(schema, items[i], base: base, instancePath: instancePath + "/\(i)", schemaPath: schemaPath + path + "/\(i)", &ctx)
                out.errors += r.errors
            }
            out.items = max(out.items, min(schemas.count, items.count))
            return schemas.count
        }
        if draft == .draft2020_12 {
            let prefix = o["prefixItems"]?.arrayItems.map { tuple($0, "/prefixItems") } ?? 0
            if let rest = o["items"] { each(rest, from: prefix, "/items") }
        } else if let itemsSchema = o["items"] {
            if let schemas = itemsSchema.arrayItems {
                let count = tuple(schemas, "/items")
                if let additional = o["additionalItems"] { each(additional, from: count, "/additionalItems") }
            } else {
                each(itemsSchema, from: 0, "/items")
            }
        }
        if let contains = o["contains"], draft != .draft4 {
            var matches: [Int] = []
            for (i, item) in items.enumerated() {
                var silent = ctx
                if evaluate(contains, item, base: base, instancePath: instancePath + "/\(i)", schemaPath: schemaPath + "/contains", &silent).valid {
                    matches.append(i)
                }
            }
            out.itemIndices.formUnion(matches)
            let minimum = draft.modern ? o["minContains"].flatMap(number).map { Int($0) } ?? 1 : 1
            let maximum = draft.modern ? o["maxContains"].flatMap(number).map { Int($0) } : nil
            if matches.count < minimum {
                fail(&out, instancePath, schemaPath + (o["minContains"] != nil && draft.modern ? "/minContains" : "/contains"),
                     minimum == 1 ? "no item matches the contains schema" : "fewer than \(minimum) items match the contains schema")
            }
            if let maximum, matches.count > maximum {
                fail(&out, instancePath, schemaPath + "/maxContains", "more than \(maximum) items match the contains schema")
            }
        }
    }

    /// `unevaluatedProperties` / `unevaluatedItems`: the members and items no other keyword of
    /// this schema (or of a subschema that held) evaluated.
    func unevaluated(_ o: [String: JSONValue], _ instance: JSONValue, base: String, instancePath: String, schemaPath: String,
                     _ out: inout Outcome, _ ctx: inout Context) {
        if let schema = o["unevaluatedProperties"], case .object(let members) = instance {
            for (name, value) in members where !out.properties.contains(name) {
                let r = evaluate(schema, value, base: base, instancePath: instancePath + "/" + URIs.escape(name),
                                 schemaPath: schemaPath + "/unevaluatedProperties", &ctx)
                if r.valid { out.properties.insert(name) } else if schema == .bool(false) {
                    fail(&out, instancePath + "/" + URIs.escape(name), schemaPath + "/unevaluatedProperties", "\(name) is not allowed (unevaluated)")
                } else { out.errors += r.errors }
            }
        }
        if let schema = o["unevaluatedItems"], case .array(let items) = instance, !out.allItems {
            var allValid = true
            for i in out.items..<max(out.items, items.count) where !out.itemIndices.contains(i) {
                let r = evaluate(schema, items[i], base: base, instancePath: instancePath + "/\(i)", schemaPath: schemaPath + "/unevaluatedItems", &ctx)
                if !r.valid {
                    allValid = false
                    if schema == .bool(false) { fail(&out, instancePath + "/\(i)", schemaPath + "/unevaluatedItems", "item \(i) is not allowed (unevaluated)") }
                    else { out.errors += r.errors }
                }
            }
            if allValid { out.allItems = true }
        }
    }

    /// OpenAPI's discriminator: the oneOf/anyOf schema its property's value names.
    private func discriminated(_ o: [String: JSONValue], _ instance: JSONValue) -> (schema: JSONValue, path: String)? {
        guard let property = o["discriminator"]?["propertyName"]?.stringValue, let value = instance[property]?.stringValue,
              let choices = o["oneOf"]?.arrayItems else { return nil }
        let mapped = o["discriminator"]?["mapping"]?[value]?.stringValue
        for (i, choice) in choices.enumerated() {
            guard let ref = choice["$ref"]?.stringValue else { continue }
            if ref == mapped || ref.hasSuffix("/" + value) { return (choice, "/oneOf/\(i)") }
        }
        return nil
    }

    /// The first few errors, for a message that names what failed beneath.
    static func brief(_ errors: [ValidationError]) -> String {
        errors.prefix(3).map { "\($0.instancePath.isEmpty ? "/" : $0.instancePath): \($0.message)" }.joined(separator: "; ")
    }
}

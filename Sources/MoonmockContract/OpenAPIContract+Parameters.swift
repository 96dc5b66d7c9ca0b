import MoonmockCore

/// Parameters as text (a path segment, query items, a header) turned into the JSON values their
/// schemas describe, by the parameter's `style` and `explode`.
extension OpenAPIContract {
    /// The value of a parameter given as `raw` (every query item of its name, a header's fields).
    func parameterValue(_ raw: [String], _ p: Parameter) -> JSONValue {
        let types = p.entry != nil ? p.types : self.types(p.schema)
        if types.contains("array") {
            var items: [String]
            switch (p.location, p.style) {
            case ("query", "form") where p.explode, ("cookie", "form") where p.explode: items = raw
            case (_, "spaceDelimited"): items = raw.flatMap { $0.split(separator: " ").map(String.init) }
            case (_, "pipeDelimited"): items = raw.flatMap { $0.split(separator: "|").map(String.init) }
            default: items = raw.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            }
            if p.entry != nil { return .array(items.map { coerce($0, types: p.itemTypes) }) }
            let itemSchema = p.schema.map(documents.resolve)?.child("items")
            return .array(items.map { coerce($0, itemSchema) })
        }
        if types.contains("object") && !types.contains("string") {
            var object: [String: JSONValue] = [:]
            let text = raw.joined(separator: ",")
            if p.explode {
                for pair in text.split(separator: ",") {
                    let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    object[String(kv[0])] = coerce(kv.count > 1 ? String(kv[1]) : "", property: String(kv[0]), of: p.schema)
                }
            } else {
                let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                var i = 0
                while i + 1 < parts.count {
                    object[parts[i]] = coerce(parts[i + 1], property: parts[i], of: p.schema)
                    i += 2
                }
            }
            return .object(object)
        }
        return p.entry != nil ? coerce(raw[0], types: p.types) : coerce(raw[0], p.schema)
    }

    /// `text` as the type `schema` says (an integer, a number, a boolean, null), else a string.
    func coerce(_ text: String, _ schema: SpecDocuments.Located?) -> JSONValue {
        coerce(text, types: types(schema))
    }

    func coerce(_ text: String, types: Set<String>) -> JSONValue {
        if types.contains("integer"), let n = Int64(text) { return .integer(n) }
        if types.contains("number") {
            if let n = Int64(text) { return .integer(n) }
            if let x = Double(text), x.isFinite, text.first != "+", !text.hasPrefix("0x") { return .double(x) }
        }
        if types.contains("boolean"), text == "true" || text == "false" { return .bool(text == "true") }
        if types.contains("null"), text.isEmpty || text == "null" { return .null }
        return .string(text)
    }

    /// A property's text as the object schema's property `name` says.
    func coerce(_ text: String, property name: String, of schema: SpecDocuments.Located?) -> JSONValue {
        let property = schema.map(documents.resolve)?.child("properties")?.child(name)
        return coerce(text, property)
    }

    /// The types a schema allows: its `type`, or those of its `allOf`/`anyOf`/`oneOf` (`$ref`s
    /// followed), with `null` for OpenAPI 3.0's `nullable`.
    func types(_ schema: SpecDocuments.Located?) -> Set<String> { Self.types(schema, documents) }

    static func types(_ schema: SpecDocuments.Located?, _ documents: SpecDocuments, depth: Int = 0) -> Set<String> {
        guard let schema, depth < 8 else { return [] }
        let s = documents.resolve(schema)
        var out: Set<String> = []
        switch s.value["type"] {
        case .string(let t)?: out.insert(t)
        case .array(let list)?: for t in list { if let t = t.stringValue { out.insert(t) } }
        default:
            for key in ["allOf", "anyOf", "oneOf"] {
                for sub in s.child(key)?.elements ?? [] { out.formUnion(types(sub, documents, depth: depth + 1)) }
            }
            if out.isEmpty && s.value["properties"] != nil { out.insert("object") }
            if out.isEmpty && s.value["items"] != nil { out.insert("array") }
        }
        if s.value["nullable"] == .bool(true) { out.insert("null") }
        return out
    }
}

extension JSONValue {
    var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
    var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }
}

import MoonmockCore

/// A Swagger 2.0 document read as the OpenAPI 3.0 one it describes: `host`/`basePath` as a
/// server, `definitions` as `components/schemas`, body and form parameters as request bodies
/// (by `consumes`), response schemas and `examples` as content (by `produces`), collection
/// formats as styles, `x-nullable` as `nullable`, `type: file` as binary strings.
///
/// ```swift
/// let spec = Swagger2.convert(try JSONValue(parsing: bytes))   // "openapi": "3.0.3"
/// ```
public enum Swagger2 {
    public static func convert(_ doc: JSONValue) -> JSONValue {
        var out: [String: JSONValue] = ["openapi": .string("3.0.3"), "info": doc["info"] ?? .object(["title": .string("API"), "version": .string("1")])]
        let base = doc["basePath"]?.stringValue ?? ""
        if let host = doc["host"]?.stringValue {
            let scheme = doc["schemes"]?[0]?.stringValue ?? "https"
            out["servers"] = .array([.object(["url": .string("\(scheme)://\(host)\(base)")])])
        } else if !base.isEmpty {
            out["servers"] = .array([.object(["url": .string(base)])])
        }
        let consumes = strings(doc["consumes"]) ?? ["application/json"]
        let produces = strings(doc["produces"]) ?? ["application/json"]
        let globalParameters = doc["parameters"]?.objectValue ?? [:]
        var components: [String: JSONValue] = [:]
        if let definitions = doc["definitions"] { components["schemas"] = schema(definitions, all: true) }
        var parameters: [String: JSONValue] = [:]
        for (name, p) in globalParameters where p["in"]?.stringValue != "body" && p["in"]?.stringValue != "formData" { parameters[name] = parameter(p) }
        if !parameters.isEmpty { components["parameters"] = .object(parameters) }
        var responses: [String: JSONValue] = [:]
        for (name, r) in doc["responses"]?.objectValue ?? [:] { responses[name] = response(r, produces) }
        if !responses.isEmpty { components["responses"] = .object(responses) }
        if !components.isEmpty { out["components"] = .object(components) }

        var paths: [String: JSONValue] = [:]
        for (path, rawItem) in doc["paths"]?.objectValue ?? [:] {
            guard case .object(let item) = rawItem else { continue }
            var converted: [String: JSONValue] = [:]
            let shared = (item["parameters"]?.arrayValue ?? []).map { resolveParameter($0, globalParameters) }
            let sharedPlain = shared.filter { !["body", "formData"].contains($0["in"]?.stringValue ?? "") }
            if !sharedPlain.isEmpty { converted["parameters"] = .array(sharedPlain.map(parameter)) }
            for (method, rawOp) in item where ["get", "put", "post", "delete", "options", "head", "patch"].contains(method) {
                guard case .object(var op) = rawOp else { continue }
                let opConsumes = strings(op["consumes"]) ?? consumes
                let opProduces = strings(op["produces"]) ?? produces
                // The path item's body and form parameters belong to each operation's request body.
                let all = shared.filter { ["body", "formData"].contains($0["in"]?.stringValue ?? "") }
                    + (op["parameters"]?.arrayValue ?? []).map { resolveParameter($0, globalParameters) }
                var plain: [JSONValue] = []
                var form: [String: JSONValue] = [:], formRequired: [JSONValue] = []
                var file = false
                op["parameters"] = nil
                for p in all {
                    switch p["in"]?.stringValue {
                    case "body"?:
                        var content: [String: JSONValue] = [:]
                        for type in opConsumes { content[type] = .object(["schema": schema(p["schema"] ?? .object([:]))]) }
                        var body: [String: JSONValue] = ["content": .object(content)]
                        if p["required"] == .bool(true) { body["required"] = .bool(true) }
                        op["requestBody"] = .object(body)
                    case "formData"?:
                        guard let name = p["name"]?.stringValue else { continue }
                        if p["type"]?.stringValue == "file" { file = true }
                        form[name] = schema(scalarSchema(p))
                        if p["required"] == .bool(true) { formRequired.append(.string(name)) }
                    case nil where p["$ref"] != nil: plain.append(.object(["$ref": .string(rewrite(p["$ref"]!.stringValue!))]))
                    default: plain.append(parameter(p))
                    }
                }
                if !form.isEmpty {
                    let type = file || opConsumes.contains("multipart/form-data") ? "multipart/form-data" : "application/x-www-form-urlencoded"
                    var object: [String: JSONValue] = ["type": .string("object"), "properties": .object(form)]
                    if !formRequired.isEmpty { object["required"] = .array(formRequired) }
                    op["requestBody"] = .object(["content": .object([type: .object(["schema": .object(object)])])])
                }
                if !plain.isEmpty { op["parameters"] = .array(plain) }
                var opResponses: [String: JSONValue] = [:]
                for (code, r) in op["responses"]?.objectValue ?? [:] { opResponses[code] = response(r, opProduces) }
                op["responses"] = .object(opResponses)
                op["consumes"] = nil
                op["produces"] = nil
                op["schemes"] = nil
                converted[method] = .object(op)
            }
            paths[path] = .object(converted)
        }
        out["paths"] = .object(paths)
        return .object(out)
    }

    static func strings(_ v: JSONValue?) -> [String]? {
        guard case .array(let a)? = v else { return nil }
        let list = a.compactMap(\.stringValue)
        return list.isEmpty ? nil : list
    }

    /// A `$ref` to a global parameter, followed (body and form ones become request bodies).
    static func resolveParameter(_ p: JSONValue, _ globals: [String: JSONValue]) -> JSONValue {
        guard let ref = p["$ref"]?.stringValue, ref.hasPrefix("#/parameters/") else { return p }
        let name = String(ref.dropFirst("#/parameters/".count))
        guard let target = globals[name] else { return p }
        return ["body", "formData"].contains(target["in"]?.stringValue ?? "") ? target : p
    }

    /// A query, path, header or cookie parameter: its type keywords as a schema, its
    /// collection format as a style.
    static func parameter(_ p: JSONValue) -> JSONValue {
        if let ref = p["$ref"]?.stringValue { return .object(["$ref": .string(rewrite(ref))]) }
        guard case .object(let o) = p else { return p }
        var out: [String: JSONValue] = [:]
        for key in ["name", "in", "required", "description", "deprecated", "allowEmptyValue"] where o[key] != nil { out[key] = o[key] }
        out["schema"] = schema(scalarSchema(p))
        switch o["collectionFormat"]?.stringValue {
        case "multi"?: out["style"] = .string("form"); out["explode"] = .bool(true)
        case "ssv"?: out["style"] = .string("spaceDelimited"); out["explode"] = .bool(false)
        case "pipes"?: out["style"] = .string("pipeDelimited"); out["explode"] = .bool(false)
        case "csv"?, nil:
            if o["type"]?.stringValue == "array" {
                out["style"] = .string(o["in"]?.stringValue == "query" ? "form" : "simple")
                out["explode"] = .bool(false)
            }
        default: break
        }
        return .object(out)
    }

    static let typeKeywords: Set<String> = ["type", "format", "items", "enum", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                                            "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "multipleOf", "x-nullable"]

    static func scalarSchema(_ p: JSONValue) -> JSONValue {
        guard case .object(let o) = p else { return .object([:]) }
        return .object(o.filter { typeKeywords.contains($0.key) })
    }

    static func response(_ r: JSONValue, _ produces: [String]) -> JSONValue {
        if let ref = r["$ref"]?.stringValue { return .object(["$ref": .string(rewrite(ref))]) }
        guard case .object(let o) = r else { return r }
        var out: [String: JSONValue] = ["description": o["description"] ?? .string("")]
        if case .object(let headers)? = o["headers"] {
            out["headers"] = .object(headers.mapValues { h in
                var header: [String: JSONValue] = ["schema": schema(scalarSchema(h))]
                if let d = h["description"] { header["description"] = d }
                return .object(header)
            })
        }
        if let s = o["schema"] {
            var content: [String: JSONValue] = [:]
            let examples = o["examples"]?.objectValue ?? [:]
            for type in produces {
                var media: [String: JSONValue] = ["schema": schema(s)]
                if let example = examples[type] { media["example"] = example }
                content[type] = .object(media)
            }
            // An example for a type the operation does not list: its own media type.
            for (type, example) in examples where content[type] == nil { content[type] = .object(["schema": schema(s), "example": example]) }
            out["content"] = .object(content)
        } else if !produces.isEmpty || o["examples"] != nil {
            // No schema: a body of the operation's media types, any content (2.0's `produces`
            // says what an answer is, with or without a schema), with its examples.
            var content = Dictionary(produces.map { ($0, JSONValue.object([:])) }, uniquingKeysWith: { a, _ in a })
            for (type, example) in o["examples"]?.objectValue ?? [:] { content[type] = .object(["example": example]) }
            out["content"] = .object(content)
        }
        return .object(out)
    }

    /// A schema (or, with `all`, an object of them) with 2.0's words in 3.0's.
    static func schema(_ s: JSONValue, all: Bool = false) -> JSONValue {
        if all, case .object(let o) = s { return .object(o.mapValues { schema($0) }) }
        switch s {
        case .object(let o):
            var out: [String: JSONValue] = [:]
            for (key, value) in o {
                switch key {
                case "$ref": out[key] = value.stringValue.map { .string(rewrite($0)) } ?? value
                case "x-nullable": if value == .bool(true) { out["nullable"] = .bool(true) }
                case "discriminator": out[key] = value.stringValue.map { .object(["propertyName": .string($0)]) } ?? value
                case "type" where value == .string("file"): out["type"] = .string("string"); out["format"] = .string("binary")
                case "properties", "patternProperties", "definitions": out[key] = schema(value, all: true)
                case "example", "default", "enum": out[key] = value
                default: out[key] = schema(value)
                }
            }
            return .object(out)
        case .array(let items): return .array(items.map { schema($0) })
        default: return s
        }
    }

    /// `#/definitions/X` and the other 2.0 places, as 3.0's.
    static func rewrite(_ ref: String) -> String {
        let parts = ref.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return ref }
        var fragment = String(parts[1])
        for (old, new) in [("/definitions/", "/components/schemas/"), ("/parameters/", "/components/parameters/"), ("/responses/", "/components/responses/")]
        where fragment.hasPrefix(old) {
            fragment = new + fragment.dropFirst(old.count)
            break
        }
        return parts[0] + "#" + fragment
    }
}

import Foundation
import MoonmockCore
import MoonmockSchema

/// Every operation of a spec served live (`mock.openapi`): rules that answer with the spec's
/// examples (`Prefer: example=NAME`, `Prefer: code=404` as Prism reads them), else with bodies
/// made from the schemas, the same for the same path on every run.
///
/// ```swift
/// let spec = try OpenAPIContract(file: URL(fileURLWithPath: "api.yaml"))
/// let rules = OpenAPIMock(contract: spec, seed: 0).rules(location: "mocks.lua:3")
/// ```
public final class OpenAPIMock: Sendable {
    public let contract: OpenAPIContract
    let seed: UInt64
    /// Below every rule a script writes: the script's own rules answer first.
    public static let priority = -1_000_000

    public init(contract: OpenAPIContract, seed: UInt64 = 0) {
        self.contract = contract
        self.seed = seed
    }

    /// A rule per operation (its `operationId` the rule's id) and per path a rule answering
    /// `405` with `Allow` to the methods the spec does not have.
    public func rules(location: String?) -> [Rule] {
        var rules: [Rule] = []
        var seen: Set<String> = []
        for base in contract.basePaths {
            let prefix = base.isEmpty ? "" : "/" + base.joined(separator: "/")
            for item in contract.paths {
                // A segment that is all one variable is a parameter; a mixed one (`{name}.{ext}`)
                // any segment, the template checked again when the rule runs.
                var segments: [String] = []
                for (i, parts) in item.template.segments.enumerated() {
                    if parts.count == 1, case .variable(let name) = parts[0] { segments.append(":" + name) }
                    else if parts.allSatisfy({ if case .literal = $0 { true } else { false } }) {
                        segments.append(parts.map { if case .literal(let l) = $0 { l } else { "" } }.joined())
                    } else { segments.append(":_segment\(i)") }
                }
                guard let pattern = try? RoutePattern(prefix + "/" + segments.joined(separator: "/")) else { continue }
                for method in item.operations.keys.sorted() {
                    let operation = item.operations[method]!
                    var id = operation.info.id
                    if seen.contains(id) { id += prefix.isEmpty ? " (at /)" : " (at \(prefix))" }
                    seen.insert(id)
                    let template = item.template, baseCount = base.count
                    rules.append(Rule(id: id, method: method, pattern: pattern, priority: Self.priority, location: location, mayUseStore: false) {
                        [self] context in
                        // The most specific path of the spec is this one (`/pets/mine` is not `/pets/{id}`).
                        let path = Array(context.request.path.split(separator: "/").dropFirst(baseCount))
                        guard self.mostSpecific(path)?.template.text == template.text else { return nil }
                        return self.respond(to: context, operation)
                    })
                }
                let allow = item.operations.keys.sorted()
                let template = item.template, baseCount = base.count
                rules.append(Rule(id: "\(prefix)\(item.template.text) (other methods)", method: nil, pattern: pattern, priority: Self.priority - 1,
                                  location: location, mayUseStore: false) { [self] context in
                    let path = Array(context.request.path.split(separator: "/").dropFirst(baseCount))
                    guard self.mostSpecific(path)?.template.text == template.text else { return nil }
                    let method = context.request.method
                    if allow.contains(method) || (method == "HEAD" && allow.contains("GET")) { return nil }
                    var response = MockResponse.json(.object([
                        "error": .string("\(method) is not an operation of \(item.template.text); it has \(allow.joined(separator: ", "))"),
                    ]), status: 405)
                    response.headers["Allow"] = allow.joined(separator: ", ")
                    return response
                })
            }
        }
        return rules
    }

    /// The spec's path item for a path (after the base path): a literal path before a template.
    func mostSpecific(_ path: [Substring]) -> OpenAPIContract.PathItem? {
        contract.paths.first { $0.template.match(path) != nil }
    }

    /// The answer to one request of `operation`.
    func respond(to context: RequestContext, _ operation: OpenAPIContract.Operation) -> MockResponse {
        let request = context.request
        let prefer = Self.preferences(request.headers["Prefer"])
        guard let responses = operation.responses, case .object(let documented) = responses.value, !documented.isEmpty else {
            return MockResponse(status: 204)
        }
        let (key, status) = Self.pick(Array(documented.keys), preferred: prefer["code"].flatMap { Int($0) })
        let (response, note) = answer(operation, key: key, status: status, accept: request.headers["Accept"], example: prefer["example"],
                                      seed: SeededRandom.seed(request.method + " " + request.path, seed))
        if let note { context.log(note) }
        return response
    }

    /// The answer an operation documents under `key` (`200`, `2XX`, `default`) with `status`:
    /// required headers, the media type `accept` prefers, the body (an example, else made from
    /// the schema until it validates); and a note when the body breaks the schema.
    public func answer(_ info: ContractOperation, key: String, status: Int, accept: String? = nil, example: String? = nil,
                       seed: UInt64) -> (MockResponse, String?) {
        guard let operation = contract.operation(info) else { return (MockResponse(status: status), nil) }
        return answer(operation, key: key, status: status, accept: accept, example: example, seed: seed)
    }

    func answer(_ operation: OpenAPIContract.Operation, key: String, status: Int, accept: String?, example: String?,
                seed: UInt64) -> (MockResponse, String?) {
        guard let responses = operation.responses, let raw = responses.child(key) else { return (MockResponse(status: status), nil) }
        let answer = contract.documents.resolve(raw)
        var random = SeededRandom(seed: seed)
        var response = MockResponse(status: status)
        for (name, header) in answer.child("headers")?.members ?? [] where name.lowercased() != "content-type" {
            let h = contract.documents.resolve(header)
            guard h.value["required"] == .bool(true), let schema = h.child("schema") else { continue }
            var sampler = SchemaSampler(documents: contract.documents, direction: .response, seed: random.next())
            response.headers[name] = Self.headerText(sampler.sample(schema))
        }
        guard let content = answer.child("content"), case .object(let media) = content.value, !media.isEmpty else { return (response, nil) }
        let type = Self.negotiate(Array(media.keys), accept: accept)
        if status == 204 || status == 304 {
            // No body, but the media type a client is told to expect (Swagger 2.0's `produces`).
            if !type.contains("*") { response.headers["Content-Type"] = type }
            return (response, nil)
        }
        let place = content.child(type)!
        let (value, note) = body(place, example: example, operation: operation, random: &random)
        // A media type with neither schema nor example: that type, and no body.
        let empty = place.value["schema"] == nil && place.value["example"] == nil && place.value["examples"] == nil
        let concrete = type.contains("*") ? (type.hasPrefix("text/") ? "text/plain" : type.hasPrefix("image/") ? "image/png" : "application/json") : type
        response.headers["Content-Type"] = concrete
        response.body = empty ? [] : MediaBodies.encode(value, as: concrete, schema: place.child("schema").map(contract.documents.resolve)?.value)
        return (response, note)
    }

    /// The schema an answer's JSON body is made from when the spec gives no example for it, as
    /// a document of its own (every schema it refers to, in this file or another, copied into
    /// its `$defs`): what `convert openapi` hands `mock.schema`. `nil` when the answer has an
    /// example or no JSON body.
    public func schemaOnlyBody(_ info: ContractOperation, key: String) -> JSONValue? {
        guard let operation = contract.operation(info), let raw = operation.responses?.child(key),
              let content = contract.documents.resolve(raw).child("content"), case .object(let media) = content.value else { return nil }
        let type = Self.negotiate(Array(media.keys), accept: nil)
        guard type.hasSuffix("json"), let place = content.child(type), let schema = place.child("schema"),
              place.value["example"] == nil, place.value["examples"] == nil else { return nil }
        let resolved = contract.documents.resolve(schema)
        guard resolved.value["example"] == nil, resolved.value["examples"] == nil else { return nil }
        return bundled(schema)
    }

    /// `schema` with each `$ref` it reaches rewritten to `#/$defs/NAME`, the schemas copied
    /// there; `nil` when a `$ref` leads nowhere.
    func bundled(_ schema: SpecDocuments.Located) -> JSONValue? {
        var lost = false
        let value = bundled(schema, lost: &lost)
        return lost ? nil : value
    }

    private func bundled(_ schema: SpecDocuments.Located, lost: inout Bool) -> JSONValue {
        var defs: [String: JSONValue] = [:]
        var names: [String: String] = [:]
        func rewrite(_ value: JSONValue, _ document: String) -> JSONValue {
            switch value {
            case .object(var o):
                for (k, v) in o where k != "$ref" { o[k] = rewrite(v, document) }
                if let ref = o["$ref"]?.stringValue, let target = contract.documents.lookup(ref, from: document) {
                    let name: String
                    if let known = names[target.uri] {
                        name = known
                    } else {
                        var stem = String(target.pointer.split(separator: "/").last ?? "schema").filter { $0.isLetter || $0.isNumber || $0 == "_" }
                        if stem.isEmpty { stem = "schema" }
                        name = defs[stem] == nil ? stem : stem + "_\(names.count + 1)"
                        names[target.uri] = name
                        defs[name] = .null   // taken, while its own refs are followed
                        defs[name] = rewrite(target.value, target.document)
                    }
                    o["$ref"] = .string("#/$defs/" + name)
                } else if o["$ref"] != nil {
                    lost = true
                }
                return .object(o)
            case .array(let a): return .array(a.map { rewrite($0, document) })
            default: return value
            }
        }
        guard case .object(var root) = rewrite(schema.value, schema.document) else { return schema.value }
        if !defs.isEmpty { root["$defs"] = .object(defs) }
        return .object(root)
    }

    /// The body's value: the example asked for, the media's example, the first of its examples,
    /// the schema's example, else one made from the schema (until it validates). A spec
    /// example that breaks its schema is served, with a note naming it.
    func body(_ media: SpecDocuments.Located, example wanted: String?, operation: OpenAPIContract.Operation,
              random: inout SeededRandom) -> (JSONValue, String?) {
        let schema = media.child("schema")
        var candidates: [(String, JSONValue)] = []
        if let examples = media.child("examples") {
            if let wanted, let one = examples.child(wanted) {
                candidates.append((wanted, contract.documents.resolve(one).value["value"] ?? .null))
            }
            for (name, one) in examples.members { candidates.append((name, contract.documents.resolve(one).value["value"] ?? .null)) }
        }
        if let example = media.value["example"] { candidates.insert(("example", example), at: wanted == nil ? 0 : candidates.count) }
        if let schema {
            let s = contract.documents.resolve(schema)
            if let example = s.value["example"] { candidates.append(("the schema's example", example)) }
            if case .array(let list)? = s.value["examples"], let first = list.first { candidates.append(("the schema's examples[0]", first)) }
        }
        if let (name, value) = candidates.first {
            guard let schema else { return (value, nil) }
            let errors = contract.schema.validate(value, at: schema.uri, direction: .response)
            if errors.isEmpty { return (value, nil) }
            return (value, "openapi: example '\(name)' of \(operation.info.id) breaks its schema: \(errors[0])")
        }
        guard let schema else { return (.null, nil) }
        var last: JSONValue = .null
        for attempt in 0..<4 {
            var sampler = SchemaSampler(documents: contract.documents, direction: .response, seed: random.next() &+ UInt64(attempt),
                                        useExamples: attempt < 2)
            last = sampler.sample(schema)
            if contract.schema.validate(last, at: schema.uri, direction: .response).isEmpty { return (last, nil) }
        }
        let errors = contract.schema.validate(last, at: schema.uri, direction: .response)
        return (last, "openapi: no body made for \(operation.info.id) meets its schema: \(errors.first.map { "\($0)" } ?? "")")
    }

    /// `Prefer: code=404, example=missing` as a dictionary.
    static func preferences(_ header: String?) -> [String: String] {
        var out: [String: String] = [:]
        for part in (header ?? "").split(whereSeparator: { $0 == "," || $0 == ";" }) {
            let kv = part.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            out[kv[0].trimmingCharacters(in: .whitespaces).lowercased()] = kv[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return out
    }

    /// The response key and status: the preferred code when documented (or `default`), else the
    /// first 2xx, a `2XX` range as 200, `default` as 200, else the first documented.
    static func pick(_ keys: [String], preferred: Int?) -> (String, Int) {
        if let preferred {
            if keys.contains(String(preferred)) { return (String(preferred), preferred) }
            if let range = keys.first(where: { $0.uppercased() == "\(preferred / 100)XX" }) { return (range, preferred) }
            if keys.contains("default") { return ("default", preferred) }
        }
        let codes = keys.compactMap { k in Int(k).map { (k, $0) } }.sorted { $0.1 < $1.1 }
        if let ok = codes.first(where: { (200..<300).contains($0.1) }) { return ok }
        if let range = keys.first(where: { $0.uppercased() == "2XX" }) { return (range, 200) }
        if keys.contains("default") { return ("default", 200) }
        if let first = codes.first { return first }
        let range = keys.sorted()[0]
        return (range, (Int(range.prefix(1)) ?? 2) * 100)
    }

    /// The documented media type the request accepts most; JSON first among equals.
    static func negotiate(_ types: [String], accept: String?) -> String {
        let sorted = types.sorted { a, b in
            let ja = OpenAPIContract.isJSON(a.lowercased()), jb = OpenAPIContract.isJSON(b.lowercased())
            return ja != jb ? ja : a < b
        }
        guard let accept, !accept.isEmpty else { return sorted[0] }
        var best: (String, Double)?
        for part in accept.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            let range = pieces[0]
            let q = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            guard q > 0 else { continue }
            let major = range.split(separator: "/").first.map(String.init) ?? range
            let match = sorted.first { $0.lowercased() == range } ?? (range.hasSuffix("/*") ? sorted.first { $0.lowercased().hasPrefix(major + "/") } : nil)
                ?? (range == "*/*" ? sorted[0] : nil)
            if let match, q > (best?.1 ?? -1) { best = (match, q) }
        }
        return best?.0 ?? sorted[0]
    }

    /// A header's value as text (`simple` style).
    static func headerText(_ value: JSONValue) -> String {
        switch value {
        case .string(let s): return s
        case .array(let items): return items.map(headerText).joined(separator: ",")
        case .object(let o): return o.keys.sorted().flatMap { [$0, headerText(o[$0]!)] }.joined(separator: ",")
        case .null: return ""
        default: return String(decoding: value.encoded(), as: UTF8.self)
        }
    }
}

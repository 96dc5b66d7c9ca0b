import Foundation
import MoonmockCore
import MoonmockSchema

/// An OpenAPI 3.0 or 3.1 spec kept by the engine (`moonmock serve --spec`, `mock.spec`,
/// `Moonmock(script:spec:)`): each request is matched to an operation, and the request and its
/// answer are validated against it.
///
/// ```swift
/// let spec = try OpenAPIContract(file: URL(fileURLWithPath: "api.yaml"), enforces: false)
/// engine.setContracts([spec], from: .commandLine)
/// ```
public final class OpenAPIContract: ContractChecking {
    public enum Mode: String, Sendable, CaseIterable {
        /// Serve everything, report what breaks the contract.
        case warn
        /// Refuse a request that breaks it (400), replace an answer that does (500).
        case enforce
    }

    struct Parameter: Sendable {
        let name: String
        let location: String   // path, query, header, cookie
        let required: Bool
        let style: String
        let explode: Bool
        /// Its schema (or its `content`'s), and whether the value is JSON text (`content`).
        let schema: SpecDocuments.Located?
        let json: Bool
        let place: SpecDocuments.Located
        /// The schema's types and its items' (for turning text into values), and the schema
        /// prepared for validation: read once.
        var types: Set<String> = []
        var itemTypes: Set<String> = []
        var entry: JSONSchema.Entry?
    }

    struct Operation: Sendable {
        let info: ContractOperation
        var parameters: [Parameter]
        let requestBody: SpecDocuments.Located?
        let responses: SpecDocuments.Located?
        /// Each documented response read once: what checking an answer needs, no `$ref` to follow.
        var prepared: [String: PreparedResponse] = [:]
    }

    /// A documented response: its place, its headers (resolved), its media types (lower-case,
    /// without parameters) with their places.
    struct PreparedResponse: Sendable {
        let key: String
        let place: SpecDocuments.Located
        var headers: [(name: String, place: SpecDocuments.Located, parameter: Parameter)]
        let content: SpecDocuments.Located?
        let media: [(type: String, name: String)]
    }

    static func prepare(_ responses: SpecDocuments.Located?, _ documents: SpecDocuments) -> [String: PreparedResponse] {
        var out: [String: PreparedResponse] = [:]
        for (key, raw) in responses?.members ?? [] {
            let answer = documents.resolve(raw)
            let headers = (answer.child("headers")?.members ?? []).filter { $0.0.lowercased() != "content-type" }.map { name, raw in
                let h = documents.resolve(raw)
                return (name, h, Parameter(name: name, location: "header", required: false, style: "simple", explode: h.value["explode"] == .bool(true),
                                           schema: h.child("schema"), json: false, place: h))
            }
            let content = answer.child("content")
            let media = (content?.members ?? []).map { (type: $0.0.lowercased().split(separator: ";")[0].trimmingCharacters(in: .whitespaces), name: $0.0) }
            out[key] = PreparedResponse(key: key, place: answer, headers: headers, content: content, media: media)
        }
        return out
    }

    struct PathItem: Sendable {
        let template: PathTemplate
        let operations: [String: Operation]   // by method, upper-case
    }

    public let file: String
    public let mode: Mode
    public var enforces: Bool { mode == .enforce }
    let documents: SpecDocuments
    let schema: JSONSchema
    let basePaths: [[Substring]]
    /// Most specific first: fewer variable segments, then more segments.
    let paths: [PathItem]
    let byTemplate: [String: PathItem]
    public let operations: [ContractOperation]
    /// The paths of the files the spec is read from (the root first).
    public var documentFiles: [String] {
        ([documents.root.document] + documents.documents.keys.filter { $0 != documents.root.document }.sorted())
            .compactMap { URL(string: $0)?.path }
    }
    /// What of the spec is not checked (say, a `servers` entry on one operation), for the log.
    public let notes: [String]

    /// Reads the spec at `file` (and the files its `$ref`s name).
    public convenience init(file: URL, mode: Mode = .warn) throws {
        try self.init(documents: SpecDocuments(root: file), mode: mode)
    }

    public init(documents given: SpecDocuments, mode: Mode = .warn) throws {
        var notes: [String] = []
        let name = given.name(given.root.document)
        var documents = given
        if let swagger = given.root.value["swagger"]?.stringValue {
            guard swagger.hasPrefix("2.") else { throw SpecDocuments.Failure(description: "\(name): Swagger \(swagger) is not read (2.0 and OpenAPI 3.x are)") }
            documents = given.replacingRoot(Swagger2.convert(given.root.value))
            notes.append("Swagger 2.0, read as the OpenAPI 3.0 document it describes")
        }
        self.documents = documents
        self.mode = mode
        let root = documents.root
        file = name
        guard case .object = root.value else { throw SpecDocuments.Failure(description: "\(name): not an OpenAPI document (an object at the top)") }
        guard let version = root.value["openapi"]?.stringValue, version.hasPrefix("3.") else {
            throw SpecDocuments.Failure(description: "\(name): not an OpenAPI 3.x or Swagger 2.0 document (no \"openapi\": \"3.x\" at the top)")
        }
        let draft: JSONSchema.Draft = version.hasPrefix("3.0") ? .openAPI30 : .draft2020_12
        let docs = documents.documents
        schema = JSONSchema(root.value, draft: draft, baseURI: root.document, loader: { uri in docs[uri] })
        basePaths = Self.basePaths(root.value["servers"])
        var items: [PathItem] = []
        var operations: [ContractOperation] = []
        for (template, raw) in root.child("paths")?.members ?? [] {
            let item = documents.resolve(raw)
            let shared = item.child("parameters")?.elements ?? []
            var byMethod: [String: Operation] = [:]
            for method in ["get", "put", "post", "delete", "options", "head", "patch", "trace"] {
                guard let op = item.child(method) else { continue }
                let upper = method.uppercased()
                let id = op.value["operationId"]?.stringValue ?? "\(upper) \(template)"
                let info = ContractOperation(id: id, method: upper, path: template)
                operations.append(info)
                if op.value["servers"] != nil { notes.append("\(id): its own servers are not used to match requests (the spec's are)") }
                if op.value["callbacks"] != nil { notes.append("\(id): its callbacks are not sent or checked") }
                let parameters = Self.merge(shared, op.child("parameters")?.elements ?? [], documents)
                let responses = op.child("responses").map(documents.resolve)
                byMethod[upper] = Operation(info: info, parameters: parameters, requestBody: op.child("requestBody").map(documents.resolve),
                                            responses: responses, prepared: Self.prepare(responses, documents))
            }
            items.append(PathItem(template: PathTemplate(template), operations: byMethod))
        }
        if root.value["webhooks"] != nil { notes.append("webhooks are not sent or checked") }
        // Types and validation entries of every parameter and response header, read once.
        let schema = self.schema
        for (i, item) in items.enumerated() {
            var operations = item.operations
            for (method, var op) in operations {
                op.parameters = op.parameters.map { Self.prepare($0, documents, schema) }
                for (key, var response) in op.prepared {
                    response.headers = response.headers.map { ($0.name, $0.place, Self.prepare($0.parameter, documents, schema)) }
                    op.prepared[key] = response
                }
                operations[method] = op
            }
            items[i] = PathItem(template: item.template, operations: operations)
        }
        paths = items.sorted {
            ($0.template.variableSegments, -$0.template.segments.count, $0.template.text) < ($1.template.variableSegments, -$1.template.segments.count, $1.template.text)
        }
        self.operations = operations.sorted { ($0.path, $0.method) < ($1.path, $1.method) }
        self.notes = notes
        byTemplate = Dictionary(paths.map { ($0.template.text, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The path of each server URL (`https://api.example.com/v1` → `/v1`; variables at their
    /// defaults), longest first, and `/`.
    static func basePaths(_ servers: JSONValue?) -> [[Substring]] {
        var paths: Set<String> = []
        for server in servers?.arrayValue ?? [] {
            guard var url = server["url"]?.stringValue else { continue }
            for (name, variable) in server["variables"]?.objectValue ?? [:] {
                url = url.replacingOccurrences(of: "{\(name)}", with: variable["default"]?.stringValue ?? "")
            }
            var path = Substring(url)
            if let scheme = path.range(of: "://") {
                path = path[scheme.upperBound...]
                path = path.firstIndex(of: "/").map { path[$0...] } ?? "/"
            }
            paths.insert(String(path))
        }
        // The root too: a client given the mock's origin alone (a base URL without the
        // servers' path, as Prism serves) reaches the same operations.
        paths.insert("/")
        return paths.map { $0.split(separator: "/") }.sorted { $0.count > $1.count }
    }

    /// Path-item parameters, overridden by the operation's of the same name and place.
    static func merge(_ shared: [SpecDocuments.Located], _ own: [SpecDocuments.Located], _ documents: SpecDocuments) -> [Parameter] {
        var out: [String: Parameter] = [:]
        for raw in shared + own {
            let p = documents.resolve(raw)
            guard let name = p.value["name"]?.stringValue, let location = p.value["in"]?.stringValue else { continue }
            let style = p.value["style"]?.stringValue ?? (location == "query" || location == "cookie" ? "form" : "simple")
            let explode = p.value["explode"].map { $0 == .bool(true) } ?? (style == "form")
            var schema = p.child("schema")
            var json = false
            if schema == nil, let (_, media) = p.child("content")?.members.first {
                schema = media.child("schema")
                json = true
            }
            out[location + "\u{0}" + (location == "header" ? name.lowercased() : name)] = Parameter(
                name: name, location: location, required: location == "path" || p.value["required"] == .bool(true),
                style: style, explode: explode, schema: schema, json: json, place: p)
        }
        return out.keys.sorted().map { out[$0]! }
    }

    // MARK: ContractChecking

    public func checkRequest(_ request: MockRequest) -> ContractVerdict? {
        if request.path.hasPrefix("/__moonmock/") { return nil }
        let segments = request.path.split(separator: "/")
        var pathFound: PathItem?
        for base in basePaths where segments.count >= base.count && Array(segments.prefix(base.count)) == base {
            let rest = Array(segments.dropFirst(base.count))
            for item in paths {
                guard let values = item.template.match(rest) else { continue }
                if let operation = item.operations[request.method] ?? (request.method == "HEAD" ? item.operations["GET"] : nil) {
                    var verdict = ContractVerdict(operation: operation.info, enforces: enforces)
                    verdict.request = checkRequest(request, operation, pathValues: values)
                    return verdict
                }
                if pathFound == nil { pathFound = item }
            }
        }
        if let item = pathFound {
            let allow = item.operations.keys.sorted()
            let message = "\(request.method) is not an operation of \(item.template.text) in \(file); it has \(allow.joined(separator: ", "))"
            return ContractVerdict(operation: nil, request: [ContractVerdict.violation("", "#/paths/" + SpecDocuments.Located.escape(item.template.text), message)],
                                   enforces: enforces, refusal: 405, allow: allow)
        }
        let message = "no operation of \(file) has the path \(request.path)"
        return ContractVerdict(operation: nil, request: [ContractVerdict.violation("", "#/paths", message)], enforces: enforces, refusal: 404)
    }

    public func checkResponse(_ response: MockResponse, to request: MockRequest, _ verdict: inout ContractVerdict) {
        guard let id = verdict.operation, let operation = operation(id) else { return }
        verdict.response = checkResponse(response, request, operation)
    }

    /// The first server's base path (`/v1`), or nothing.
    public var basePathPrefix: String {
        basePaths.first.map { $0.isEmpty ? "" : "/" + $0.joined(separator: "/") } ?? ""
    }

    /// The paths, in the spec's text order, each with its operations (by method).
    public var pathItems: [(template: String, operations: [ContractOperation])] {
        paths.sorted { $0.template.text < $1.template.text }.map { item in
            (item.template.text, item.operations.keys.sorted { Self.methodOrder($0) < Self.methodOrder($1) }.map { item.operations[$0]!.info })
        }
    }

    static func methodOrder(_ m: String) -> Int { ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"].firstIndex(of: m) ?? 9 }

    /// The response keys (`200`, `4XX`, `default`) an operation documents.
    public func responseKeys(_ info: ContractOperation) -> [String] {
        guard case .object(let o)? = operation(info)?.responses?.value else { return [] }
        return Array(o.keys)
    }

    /// An operation's `summary`, else its `operationId`.
    public func summary(_ info: ContractOperation) -> String? {
        guard let op = documents.lookup("#/paths/" + SpecDocuments.Located.escape(info.path) + "/" + info.method.lowercased(), from: documents.root.document) else { return nil }
        let resolved = op.value["summary"] != nil || op.value["operationId"] != nil ? op : documents.resolve(op)
        return resolved.value["summary"]?.stringValue ?? resolved.value["operationId"]?.stringValue
    }

    func operation(_ info: ContractOperation) -> Operation? {
        byTemplate[info.path]?.operations[info.method]
    }

    /// `p` with its types and validation entry.
    static func prepare(_ p: Parameter, _ documents: SpecDocuments, _ schema: JSONSchema) -> Parameter {
        var p = p
        p.types = types(p.schema, documents)
        p.itemTypes = types(p.schema.map(documents.resolve)?.child("items"), documents)
        p.entry = p.schema.map { schema.entry(at: $0.uri) }
        return p
    }

    /// Errors of `value` against a parameter's schema, as violations under `prefix`.
    func validate(_ value: JSONValue, _ p: Parameter, prefix: String, direction: JSONSchema.Direction) -> [JSONValue] {
        guard let place = p.schema else { return [] }
        guard let entry = p.entry else { return validate(value, place, prefix: prefix, direction: direction) }
        let errors = schema.validate(value, entry: entry, direction: direction)
        if errors.isEmpty { return [] }
        let origin = documents.name(place.document) + "#" + place.pointer
        return errors.map { ContractVerdict.violation(prefix + $0.instancePath, origin + $0.schemaPath, $0.message) }
    }

    /// Errors of `value` against the schema at `place`, as violations under `prefix`.
    func validate(_ value: JSONValue, _ place: SpecDocuments.Located, prefix: String, direction: JSONSchema.Direction) -> [JSONValue] {
        let errors = schema.validate(value, at: place.uri, direction: direction)
        if errors.isEmpty { return [] }
        let origin = documents.name(place.document) + "#" + place.pointer
        return errors.map {
            ContractVerdict.violation(prefix + $0.instancePath, origin + $0.schemaPath, $0.message)
        }
    }
}

import Foundation
import MoonmockCore

/// A JSON Schema validator written here (no I/O): drafts 2020-12, 2019-09, 7, 6 and 4, and the
/// OpenAPI 3.0 schema dialect. `$ref` within and across documents (`$id`, `$anchor`, JSON
/// pointers, `$dynamicRef`, `$recursiveRef`), `unevaluatedProperties`/`unevaluatedItems`, and
/// `format` assertions for the formats ``JSONSchemaFormats`` knows.
///
/// ```swift
/// let schema = try JSONSchema(JSONValue(parsing: Array(#"{"type": "object", "required": ["id"]}"#.utf8)))
/// schema.validate(.object([:]))   // [{instance_path: "", schema_path: "/required", message: "id is required"}]
/// ```
public final class JSONSchema: @unchecked Sendable {   // immutable after init
    public enum Draft: String, Sendable, CaseIterable {
        case draft2020_12 = "2020-12", draft2019_09 = "2019-09", draft7 = "7", draft6 = "6", draft4 = "4", openAPI30 = "openapi-3.0"

        /// The draft a `$schema` URI names.
        init?(metaSchema uri: String) {
            let u = uri.lowercased()
            if u.contains("draft/2020-12") { self = .draft2020_12 }
            else if u.contains("draft/2019-09") { self = .draft2019_09 }
            else if u.contains("draft-07") { self = .draft7 }
            else if u.contains("draft-06") { self = .draft6 }
            else if u.contains("draft-04") { self = .draft4 }
            else { return nil }
        }

        var modern: Bool { self == .draft2020_12 || self == .draft2019_09 }
        /// `$ref` beside other keywords: evaluated with them (2019-09 on), or alone (before).
        var refAlone: Bool { !modern }
        var idKeyword: String { self == .draft4 || self == .openAPI30 ? "id" : "$id" }
    }

    /// A validation error: where in the instance, which keyword of the schema, and why.
    public struct ValidationError: Sendable, Equatable, CustomStringConvertible {
        public let instancePath: String
        public let schemaPath: String
        public let message: String

        public var json: JSONValue {
            .object(["instance_path": .string(instancePath), "schema_path": .string(schemaPath), "message": .string(message)])
        }
        public var description: String { "\(instancePath.isEmpty ? "/" : instancePath): \(message) (\(schemaPath))" }
    }

    /// Which way a body goes, for OpenAPI's `readOnly` (not in requests) and `writeOnly` (not in responses).
    public enum Direction: Sendable { case request, response, none }

    let root: JSONValue
    let draft: Draft
    let baseURI: String
    /// Schemas by absolute URI (resources by `$id`, plus `uri#anchor`), and the draft of each resource.
    var resources: [String: JSONValue] = [:]
    var dynamicAnchors: [String: Set<String>] = [:]   // resource URI → its $dynamicAnchor names
    var recursiveAnchors: Set<String> = []               // resources with $recursiveAnchor: true
    /// The base URI of the resource an anchor (`uri#name`) is in.
    var resourceBase: [String: String] = [:]
    let loader: (@Sendable (String) -> JSONValue?)?
    var loaded: [String: JSONValue] = [:]
    /// `$ref`s resolved against their bases, and the schemas found at URIs (both under `lock`).
    var resolvedRefs: [String: String] = [:]
    var foundResources: [String: (JSONValue, Bool, String)] = [:]
    /// Entry points compiled to node trees (``compiled(at:)``), or known not to compile (under `lock`).
    var compiledEntries: [String: CompiledEntry] = [:]
    let lock = NSLock()
    /// Whether a schema here (or a document loaded later) has `unevaluatedProperties`/`unevaluatedItems`.
    var usesUnevaluated = false
    /// Whether `format` asserts (it does for the formats known here).
    public let assertFormats: Bool

    /// A schema (a JSON value); its draft from `$schema`, else `draft`. `loader` gives other
    /// documents by absolute URI (a file's, a remote's) for `$ref`s that leave this one.
    public init(_ schema: JSONValue, draft: Draft? = nil, baseURI: String = "", assertFormats: Bool = true,
                loader: (@Sendable (String) -> JSONValue?)? = nil) {
        root = schema
        self.draft = draft ?? schema["$schema"]?.stringValue.flatMap(Draft.init(metaSchema:)) ?? .draft2020_12
        let id = schema[self.draft.idKeyword]?.stringValue
        let base = URIs.resolve(id.map { URIs.stripFragment($0) } ?? "", against: baseURI.isEmpty ? "urn:moonmock:root" : baseURI)
        self.baseURI = base
        self.loader = loader
        self.assertFormats = assertFormats
        index(schema, base: base)
        if resources[base] == nil { resources[base] = schema }
    }

    /// Every error of `instance` (none when it is valid).
    public func validate(_ instance: JSONValue, direction: Direction = .none) -> [ValidationError] {
        // A first pass without paths (most instances are valid): the compiled tree when the
        // schema compiles, else the interpreter; the errors' paths on a second.
        if let node = compiled(at: baseURI) {
            if node.valid(instance, self, direction) { return [] }
        } else {
            var quick = Context(schema: self, direction: direction)
            quick.scope.append(baseURI)
            quick.paths = false
            quick.annotations = usesUnevaluated
            if evaluate(root, instance, base: baseURI, instancePath: "", schemaPath: "", &quick).valid { return [] }
        }
        var context = Context(schema: self, direction: direction)
        context.scope.append(baseURI)
        context.annotations = usesUnevaluated
        // In instance order, then schema order: the same list every run (objects' members have no order).
        return evaluate(root, instance, base: baseURI, instancePath: "", schemaPath: "", &context).errors
            .sorted { ($0.instancePath, $0.schemaPath, $0.message) < ($1.instancePath, $1.schemaPath, $1.message) }
    }

    public func isValid(_ instance: JSONValue, direction: Direction = .none) -> Bool { validate(instance, direction: direction).isEmpty }

    /// The subschema at `uri` prepared once (compiled when it can be): validating with it
    /// skips finding the subschema again.
    public struct Entry: @unchecked Sendable {   // the node is built once, then only read
        let uri: String
        let node: CompiledNode?
    }

    public func entry(at uri: String) -> Entry { Entry(uri: uri, node: compiled(at: uri)) }

    /// ``validate(_:at:direction:)`` for a prepared entry.
    public func validate(_ instance: JSONValue, entry: Entry, direction: Direction = .none) -> [ValidationError] {
        if let node = entry.node, node.valid(instance, self, direction) { return [] }
        return validate(instance, at: entry.uri, direction: direction, skipQuick: entry.node != nil)
    }

    /// Every error of `instance` against the subschema at `uri`: an absolute URI with a JSON
    /// pointer or an anchor, in this document or one the loader gives (an OpenAPI document's
    /// `#/components/schemas/Pet`). Schema paths start at that subschema.
    ///
    /// ```swift
    /// let spec = JSONSchema(document, draft: .openAPI30, baseURI: "file:///api/spec.json")
    /// spec.validate(pet, at: "file:///api/spec.json#/components/schemas/Pet", direction: .response)
    /// ```
    public func validate(_ instance: JSONValue, at uri: String, direction: Direction = .none) -> [ValidationError] {
        validate(instance, at: uri, direction: direction, skipQuick: false)
    }

    func validate(_ instance: JSONValue, at uri: String, direction: Direction, skipQuick: Bool) -> [ValidationError] {
        guard let (schema, byID, base) = lookupResourceCached(uri) else {
            return [ValidationError(instancePath: "", schemaPath: "", message: "cannot resolve the schema at \(uri)")]
        }
        if skipQuick {
            // The compiled tree already said invalid: straight to the errors.
        } else if let node = compiled(at: uri) {
            if node.valid(instance, self, direction) { return [] }
        } else {
            var quick = Context(schema: self, direction: direction)
            quick.scope.append(URIs.stripFragment(base))
            quick.paths = false
            quick.annotations = usesUnevaluated
            if evaluate(schema, instance, base: base, instancePath: "", schemaPath: "", &quick, resolved: byID).valid { return [] }
        }
        var context = Context(schema: self, direction: direction)
        context.scope.append(URIs.stripFragment(base))
        context.annotations = usesUnevaluated
        return evaluate(schema, instance, base: base, instancePath: "", schemaPath: "", &context, resolved: byID).errors
            .sorted { ($0.instancePath, $0.schemaPath, $0.message) < ($1.instancePath, $1.schemaPath, $1.message) }
    }

    /// Records `schema`'s resources and anchors (and those of every subschema), `base` its URI.
    func index(_ schema: JSONValue, base: String) {
        guard case .object(let o) = schema else { return }
        if o["unevaluatedProperties"] != nil || o["unevaluatedItems"] != nil { usesUnevaluated = true }
        var base = base
        if let id = o[draft.idKeyword]?.stringValue, !(draft.refAlone && o["$ref"] != nil) {
            if id.hasPrefix("#") && !draft.modern {
                resources[URIs.stripFragment(base) + id] = schema   // draft 4–7: an id that is only a fragment names a place
            } else {
                base = URIs.resolve(URIs.stripFragment(id), against: base)
                resources[base] = schema
                if let fragment = URIs.fragment(id), !fragment.isEmpty, !fragment.hasPrefix("/") {
                    resources[base + "#" + fragment] = schema
                    resourceBase[base + "#" + fragment] = base
                }
            }
        }
        if let anchor = o["$anchor"]?.stringValue {
            resources[URIs.stripFragment(base) + "#" + anchor] = schema
            resourceBase[URIs.stripFragment(base) + "#" + anchor] = URIs.stripFragment(base)
        }
        if let anchor = o["$dynamicAnchor"]?.stringValue {
            resources[URIs.stripFragment(base) + "#" + anchor] = schema
            resourceBase[URIs.stripFragment(base) + "#" + anchor] = URIs.stripFragment(base)
            dynamicAnchors[URIs.stripFragment(base), default: []].insert(anchor)
        }
        if o["$recursiveAnchor"] == .bool(true) { recursiveAnchors.insert(URIs.stripFragment(base)) }
        for (key, value) in o where !Self.notSchemas.contains(key) {
            switch value {
            case .object: index(value, base: base)
            case .array(let items): for item in items { index(item, base: base) }
            default: break
            }
        }
    }

    /// Keywords whose values are data, not schemas: not searched for `$id`s.
    static let notSchemas: Set<String> = ["enum", "const", "examples", "example", "default", "required"]
}

import Foundation
import MoonmockCore

/// What evaluating a schema against an instance found: its errors, and (for
/// `unevaluatedProperties`/`unevaluatedItems`) what it evaluated when it held.
struct Outcome {
    var errors: [JSONSchema.ValidationError] = []
    var properties: Set<String> = []
    var items = 0
    var allItems = false
    var itemIndices: Set<Int> = []
    var valid: Bool { errors.isEmpty }

    /// Takes a passing subschema's annotations.
    mutating func absorb(_ other: Outcome) {
        guard other.valid else { return }
        properties.formUnion(other.properties)
        items = max(items, other.items)
        allItems = allItems || other.allItems
        itemIndices.formUnion(other.itemIndices)
    }
}

struct Context {
    let schema: JSONSchema
    let direction: JSONSchema.Direction
    /// The resources entered, outermost first (for `$dynamicRef` and `$recursiveRef`).
    var scope: [String] = []
    var depth = 0
    /// Build instance and schema paths (the second pass, once the first found an error).
    var paths = true
    /// Collect what subschemas evaluated (only a schema with `unevaluated*` needs it).
    var annotations = true

    /// `path/component`, or nothing while paths are not built.
    func join(_ path: String, _ component: @autoclosure () -> String) -> String {
        paths ? path + "/" + component() : path
    }
}

extension JSONSchema {
    func fail(_ o: inout Outcome, _ instancePath: String, _ schemaPath: String, _ message: String) {
        o.errors.append(ValidationError(instancePath: instancePath, schemaPath: schemaPath, message: message))
    }

    /// `resolved`: `base` is already this schema's own URI (a `$ref` found it by its `$id`), so its
    /// `$id` is not applied again.
    func evaluate(_ schema: JSONValue, _ instance: JSONValue, base: String, instancePath: String, schemaPath: String,
                  _ ctx: inout Context, resolved: Bool = false) -> Outcome {
        var out = Outcome()
        switch schema {
        case .bool(true): return out
        case .bool(false):
            fail(&out, instancePath, schemaPath, "no value is allowed here")
            return out
        case .object: break
        default: return out
        }
        guard case .object(let o) = schema else { return out }
        guard ctx.depth < 200 else {
            fail(&out, instancePath, schemaPath, "the schema refers to itself without end")
            return out
        }
        ctx.depth += 1
        defer { ctx.depth -= 1 }
        let mask = KeywordMask(keys: o.keys)
        var base = base
        var pushed = false
        if !resolved, mask.contains(.id), let id = o[draft.idKeyword]?.stringValue, !(draft.refAlone && o["$ref"] != nil), !(id.hasPrefix("#") && !draft.modern) {
            base = URIs.resolve(URIs.stripFragment(id), against: base)
        }
        // A resource boundary (an $id, or a $ref's target in another resource) enters the dynamic
        // scope. The base is almost always the last scope entry already: one string compare.
        if ctx.scope.last != base {
            let resource = URIs.stripFragment(base)
            if ctx.scope.last != resource { ctx.scope.append(resource); pushed = true }
        }
        defer { if pushed { ctx.scope.removeLast() } }

        if draft == .openAPI30 && mask.contains(.openAPI) && o["nullable"] == .bool(true) && instance == .null { return out }
        if ctx.direction != .none, case .object(let members) = instance {
            // readOnly properties are not sent in requests, writeOnly ones not in responses.
            for (name, sub) in o["properties"]?.objectMembers ?? [:] where members[name] != nil {
                if ctx.direction == .request && sub["readOnly"] == .bool(true) {
                    fail(&out, instancePath + "/" + URIs.escape(name), schemaPath + "/properties/" + URIs.escape(name), "\(name) is read-only: not in a request")
                }
                if ctx.direction == .response && sub["writeOnly"] == .bool(true) {
                    fail(&out, instancePath + "/" + URIs.escape(name), schemaPath + "/properties/" + URIs.escape(name), "\(name) is write-only: not in a response")
                }
            }
        }

        if mask.contains(.ref), let ref = o["$ref"]?.stringValue {
            let r = followRef(ref, base: base, instance: instance, instancePath: instancePath, schemaPath: schemaPath + "/$ref", &ctx)
            out.errors += r.errors
            out.absorb(r)
            if draft.refAlone { return out }
        }
        if mask.contains(.dynamic), draft == .draft2020_12, let ref = o["$dynamicRef"]?.stringValue {
            let r = followRef(ref, base: base, instance: instance, instancePath: instancePath, schemaPath: schemaPath + "/$dynamicRef", &ctx, dynamic: true)
            out.errors += r.errors
            out.absorb(r)
        }
        if mask.contains(.dynamic), draft == .draft2019_09, let ref = o["$recursiveRef"]?.stringValue {
            let r = followRef(ref, base: base, instance: instance, instancePath: instancePath, schemaPath: schemaPath + "/$recursiveRef", &ctx, recursive: true)
            out.errors += r.errors
            out.absorb(r)
        }

        assertions(o, mask, instance, instancePath: instancePath, schemaPath: schemaPath, direction: ctx.direction, &out)
        applicators(o, mask, instance, base: base, instancePath: instancePath, schemaPath: schemaPath, &out, &ctx)
        if draft.modern && mask.contains(.unevaluated) { unevaluated(o, instance, base: base, instancePath: instancePath, schemaPath: schemaPath, &out, &ctx) }
        return out
    }

    /// A `$ref` (or `$dynamicRef`, `$recursiveRef`) followed: the schema it names, against the instance.
    func followRef(_ ref: String, base: String, instance: JSONValue, instancePath: String, schemaPath: String, _ ctx: inout Context,
                   dynamic: Bool = false, recursive: Bool = false) -> Outcome {
        var target = resolveCached(ref, against: base)
        guard let found = lookupResourceCached(target) else {
            var out = Outcome()
            fail(&out, instancePath, schemaPath, "cannot resolve $ref \(ref) (as \(target))")
            return out
        }
        var (resolved, byID) = (found.0, found.1)
        let pointerBase = found.2
        if dynamic, let anchor = URIs.fragment(ref), !anchor.isEmpty, !anchor.hasPrefix("/"), resolved["$dynamicAnchor"]?.stringValue == anchor {
            for resource in ctx.scope where dynamicAnchors[resource]?.contains(anchor) == true {
                if let found = lookup(resource + "#" + anchor) { resolved = found; target = resource + "#" + anchor; byID = true }
                break
            }
        }
        if recursive, resolved["$recursiveAnchor"] == .bool(true) {
            for resource in ctx.scope where recursiveAnchors.contains(resource) {
                if let found = lookup(resource) { resolved = found; target = resource; byID = true }
                break
            }
        }
        // A schema found by its $id (or an anchor in it) is at its own URI; one found by a pointer
        // has the document's, and its own $id applies on top.
        let targetBase = byID ? (resourceBase[target] ?? URIs.stripFragment(target)) : pointerBase
        return evaluate(resolved, instance, base: targetBase, instancePath: instancePath, schemaPath: schemaPath, &ctx, resolved: byID)
    }

    /// `URIs.resolve`, remembered: a schema's `$ref`s meet the same few bases again and again.
    func resolveCached(_ ref: String, against base: String) -> String {
        let key = base + "\u{0}" + ref
        lock.lock()
        if let hit = resolvedRefs[key] { lock.unlock(); return hit }
        lock.unlock()
        let target = URIs.resolve(ref, against: base)
        lock.lock()
        if resolvedRefs.count < 10_000 { resolvedRefs[key] = target }
        lock.unlock()
        return target
    }

    /// ``lookupResource(_:)``, remembered by URI.
    func lookupResourceCached(_ uri: String) -> (JSONValue, Bool, String)? {
        lock.lock()
        if let hit = foundResources[uri] { lock.unlock(); return hit }
        lock.unlock()
        guard let found = lookupResource(uri) else { return nil }
        lock.lock()
        if foundResources.count < 10_000 { foundResources[uri] = found }
        lock.unlock()
        return found
    }

    /// ``lookup(_:)``, whether the schema was found as a resource or anchor (not by a pointer), and
    /// for a pointer the base URI where it leads (the `$id`s it passes through applied).
    func lookupResource(_ uri: String) -> (JSONValue, Bool, String)? {
        guard let found = lookup(uri) else { return nil }
        let fragment = URIs.fragment(uri) ?? ""
        guard fragment.hasPrefix("/") || fragment.hasPrefix("%2F") else { return (found, true, URIs.stripFragment(uri)) }
        var base = URIs.stripFragment(uri)
        guard let document = lookup(base) else { return (found, false, base) }
        var current = document
        let tokens = URIs.decodePercents(fragment).dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for raw in tokens.dropLast() {
            let token = URIs.unescape(raw)
            guard let next = current[token] ?? Int(token).flatMap({ current[$0] }) else { break }
            current = next
            if let id = current[draft.idKeyword]?.stringValue, !(draft.refAlone && current["$ref"] != nil), !(id.hasPrefix("#") && !draft.modern) {
                base = URIs.resolve(URIs.stripFragment(id), against: base)
            }
        }
        return (found, false, base)
    }

    /// The schema at an absolute URI: a resource, an anchor, or a JSON pointer into a resource.
    func lookup(_ uri: String) -> JSONValue? {
        lock.lock()
        defer { lock.unlock() }
        if let found = resources[uri] { return found }
        let document = URIs.stripFragment(uri)
        let fragment = URIs.fragment(uri) ?? ""
        if fragment.isEmpty, let found = resources[document] { return found }
        if resources[document] == nil, let loader, let fetched = loader(document) {
            lock.unlock()
            let sub = JSONSchema(fetched, draft: fetched["$schema"]?.stringValue.flatMap(Draft.init(metaSchema:)) ?? draft, baseURI: document,
                                 assertFormats: assertFormats, loader: nil)
            lock.lock()
            for (key, value) in sub.resources where resources[key] == nil { resources[key] = value }
            usesUnevaluated = usesUnevaluated || sub.usesUnevaluated
            for (key, value) in sub.dynamicAnchors { dynamicAnchors[key, default: []].formUnion(value) }
            recursiveAnchors.formUnion(sub.recursiveAnchors)
            if resources[document] == nil { resources[document] = fetched }
            if let found = resources[uri] { return found }
        }
        guard let resource = resources[document] else { return nil }
        if fragment.isEmpty { return resource }
        if fragment.hasPrefix("/") || fragment.hasPrefix("%2F") { return URIs.pointer(fragment, in: resource) }
        return nil
    }
}

extension JSONValue {
    var objectMembers: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }
    var arrayItems: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}

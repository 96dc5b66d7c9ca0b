import Foundation
import MoonmockCore
import MoonmockSchema

/// A request and an answer checked against one operation: parameters, bodies, status, headers.
extension OpenAPIContract {
    func checkRequest(_ request: MockRequest, _ operation: Operation, pathValues: [String: String]) -> [JSONValue] {
        var errors: [JSONValue] = []
        let query = request.queryItems
        let cookies = Self.cookies(request.headers["Cookie"])
        for p in operation.parameters {
            let at = "/\(p.location)/\(p.name)"
            var origin: String { documents.name(p.place.document) + "#" + p.place.pointer }
            var raw: [String] = []
            var value: JSONValue?
            switch p.location {
            case "path": raw = pathValues[p.name].map { [$0] } ?? []
            case "query":
                if p.style == "deepObject" {
                    var object: [String: JSONValue] = [:]
                    let prefix = p.name + "["
                    for item in query where item.name.hasPrefix(prefix) && item.name.hasSuffix("]") {
                        let key = String(item.name.dropFirst(prefix.count).dropLast())
                        object[key] = coerce(item.value ?? "", property: key, of: p.schema)
                    }
                    if !object.isEmpty { value = .object(object) }
                } else {
                    raw = query.filter { $0.name == p.name }.map { $0.value ?? "" }
                }
            case "header":
                // Accept, Content-Type and Authorization are described elsewhere (OpenAPI ignores them here).
                if ["accept", "content-type", "authorization"].contains(p.name.lowercased()) { continue }
                raw = request.headers.values(p.name)
            case "cookie": raw = cookies[p.name].map { [$0] } ?? []
            default: continue
            }
            if value == nil && !raw.isEmpty {
                if p.json {
                    // A parameter with `content`: JSON text.
                    guard let parsed = try? JSONValue(parsing: Array(raw[0].utf8)) else {
                        errors.append(ContractVerdict.violation(at, origin, "\(p.name) is not JSON: \(raw[0].prefix(40))"))
                        continue
                    }
                    value = parsed
                } else {
                    value = parameterValue(raw, p)
                }
            }
            guard let value else {
                if p.required { errors.append(ContractVerdict.violation(at, origin, "the \(p.location) parameter \(p.name) is required")) }
                continue
            }
            errors += validate(value, p, prefix: at, direction: .request)
        }
        if let body = operation.requestBody {
            errors += checkBody(request.body, contentType: request.headers["Content-Type"], body, required: body.value["required"] == .bool(true),
                                direction: .request, what: "request")
        }
        return errors
    }

    func checkResponse(_ response: MockResponse, _ request: MockRequest, _ operation: Operation) -> [JSONValue] {
        guard let responses = operation.responses else { return [] }
        let code = String(response.status)
        let range = String(code.prefix(1)) + "XX"
        let prepared = operation.prepared[code] ?? operation.prepared[range] ?? operation.prepared[range.lowercased()] ?? operation.prepared["default"]
        guard let prepared else {
            let documented = operation.prepared.keys.sorted().joined(separator: ", ")
            return [ContractVerdict.violation("/status", documents.name(responses.document) + "#" + responses.pointer,
                                              "status \(code) is not documented for \(operation.info.id) (documented: \(documented))")]
        }
        let key = prepared.key
        var errors: [JSONValue] = []
        for (name, h, p) in prepared.headers {
            let at = "/header/\(name)"
            let values = response.headers.values(name)
            if values.isEmpty {
                if h.value["required"] == .bool(true) {
                    errors.append(ContractVerdict.violation(at, documents.name(h.document) + "#" + h.pointer, "the header \(name) is required in a \(key) answer"))
                }
                continue
            }
            errors += validate(parameterValue(values, p), p, prefix: at, direction: .response)
        }
        // A HEAD answer, a 204 and a 304 have no body to check.
        if request.method == "HEAD" || response.status == 204 || response.status == 304 { return errors }
        errors += checkBody(response.body, contentType: response.headers["Content-Type"], prepared, direction: .response, what: "\(key) answer")
        return errors
    }

    /// An answer's body against a prepared response's media types.
    func checkBody(_ body: [UInt8], contentType: String?, _ prepared: PreparedResponse, direction: JSONSchema.Direction, what: String) -> [JSONValue] {
        guard let content = prepared.content, !prepared.media.isEmpty else {
            if !body.isEmpty {
                return [ContractVerdict.violation("/body", documents.name(prepared.place.document) + "#" + prepared.place.pointer,
                                                  "the spec documents no body for a \(what), and this one has \(body.count) bytes")]
            }
            return []
        }
        if body.isEmpty { return [] }
        guard let contentType, !contentType.isEmpty else {
            return checkBody(body, contentType: contentType, prepared.place, required: false, direction: direction, what: what)
        }
        let type = Self.mediaType(contentType)
        let major = type.split(separator: "/").first.map(String.init) ?? type
        guard let match = prepared.media.first(where: { $0.type == type }) ?? prepared.media.first(where: { $0.type == major + "/*" })
                ?? prepared.media.first(where: { $0.type == "*/*" }), let media = content.child(match.name) else {
            return checkBody(body, contentType: contentType, prepared.place, required: false, direction: direction, what: what)
        }
        return checkMedia(body, type: type, media, direction: direction, origin: documents.name(content.document) + "#" + content.pointer + "/" + SpecDocuments.Located.escape(match.name))
    }

    /// The media type of a Content-Type field: lower-case, without parameters.
    static func mediaType(_ field: String) -> String {
        var end = field.endIndex
        if let semicolon = field.firstIndex(of: ";") { end = semicolon }
        let t = field[..<end]
        if t.utf8.allSatisfy({ $0 != 0x20 && $0 != 0x09 && !($0 >= 0x41 && $0 <= 0x5A) }) { return String(t) }
        return t.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// A body against a `requestBody` or response object's `content`.
    func checkBody(_ body: [UInt8], contentType: String?, _ place: SpecDocuments.Located, required: Bool, direction: JSONSchema.Direction,
                   what: String) -> [JSONValue] {
        var origin: String { documents.name(place.document) + "#" + place.pointer }
        guard let content = place.child("content"), case .object(let media) = content.value, !media.isEmpty else {
            if !body.isEmpty && direction == .response {
                return [ContractVerdict.violation("/body", origin, "the spec documents no body for a \(what), and this one has \(body.count) bytes")]
            }
            return []
        }
        let documented = media.keys.sorted()
        if body.isEmpty {
            return required ? [ContractVerdict.violation("/body", origin, "the \(what) needs a body (\(documented.joined(separator: ", ")))")] : []
        }
        guard let contentType, !contentType.isEmpty else {
            return [ContractVerdict.violation("/header/Content-Type", origin + "/content",
                                              "a body without a Content-Type; the \(what) documents \(documented.joined(separator: ", "))")]
        }
        let type = contentType.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased()
        let major = type.split(separator: "/").first.map(String.init) ?? type
        let match = documented.first { $0.lowercased().split(separator: ";")[0].trimmingCharacters(in: .whitespaces) == type }
            ?? documented.first { $0.lowercased() == major + "/*" } ?? documented.first { $0 == "*/*" }
        guard let match, let media = content.child(match) else {
            return [ContractVerdict.violation("/header/Content-Type", origin + "/content",
                                              "Content-Type \(type) is not documented for the \(what) (documented: \(documented.joined(separator: ", ")))")]
        }
        return checkMedia(body, type: type, media, direction: direction, origin: origin + "/content/" + SpecDocuments.Located.escape(match))
    }

    /// A body of media type `type` against the schema of `media` (JSON, a form, text).
    func checkMedia(_ body: [UInt8], type: String, _ media: SpecDocuments.Located, direction: JSONSchema.Direction, origin: @autoclosure () -> String) -> [JSONValue] {
        guard let schema = media.child("schema") else { return [] }
        let value: JSONValue
        if Self.isJSON(type) {
            guard let parsed = try? JSONValue(parsing: body) else {
                return [ContractVerdict.violation("/body", origin(), "the body is not JSON, as \(type) says")]
            }
            value = parsed
        } else if type == "application/x-www-form-urlencoded" {
            var object: [String: JSONValue] = [:]
            for part in String(decoding: body, as: UTF8.self).split(separator: "&") {
                let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = PercentDecoding.decode(pair[0], plusAsSpace: true)
                object[name] = coerce(pair.count > 1 ? PercentDecoding.decode(pair[1], plusAsSpace: true) : "", property: name, of: schema)
            }
            value = .object(object)
        } else if type.hasPrefix("text/"), let text = String(validating: body, as: UTF8.self) {
            value = .string(text)
        } else {
            return []   // binary and multipart bodies: their media type is what is checked
        }
        return validate(value, schema, prefix: "/body", direction: direction)
    }

    /// The header names the response of `operation` for `status` documents (Content-Type aside).
    public func documentedHeaders(_ info: ContractOperation, status: Int) -> [String] {
        guard let operation = operation(info), let responses = operation.responses else { return [] }
        let code = String(status)
        let key = responses.value[code] != nil ? code
            : responses.members.first { $0.0.uppercased() == String(code.prefix(1)) + "XX" }?.0 ?? (responses.value["default"] != nil ? "default" : nil)
        guard let key, let raw = responses.child(key) else { return [] }
        return (documents.resolve(raw).child("headers")?.members ?? []).map(\.0).filter { $0.lowercased() != "content-type" }
    }

    /// JSON by its media type: `application/json`, `+json`, `text/json`.
    public static func isJSON(_ type: String) -> Bool {
        type == "application/json" || type.hasSuffix("+json") || type == "text/json"
    }

    static func cookies(_ header: String?) -> [String: String] {
        var out: [String: String] = [:]
        for part in (header ?? "").split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            out[pair[0].trimmingCharacters(in: .whitespaces)] = String(pair[1])
        }
        return out
    }
}

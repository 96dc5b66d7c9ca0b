import Foundation
import MoonmockCore

extension ScriptWriter {
    /// The Lua value answering as `exchange` was answered: `mock.json(...)`, `mock.text(...)`,
    /// `mock.file(...)` of a fixture, or `mock.status(...)`.
    func response(_ exchange: RecordedExchange, _ key: RuleKey, _ names: inout FixtureNames, _ files: inout [(String, [UInt8])]) -> String {
        let contentType = exchange.headers["content-type"]?.lowercased() ?? ""
        var headers = keptHeaders(exchange.headers)
        func opts(dropping type: (String) -> Bool, status: Bool = true) -> String {
            var parts: [String] = []
            if status && exchange.status != 200 { parts.append("status = \(exchange.status)") }
            if let delay = exchange.delayMilliseconds, delay > 0 { parts.append("delay = \(Self.milliseconds(delay))") }
            let shown = headers.filter { !($0.name.lowercased() == "content-type" && type($0.value.lowercased())) }
            if !shown.isEmpty {
                parts.append("headers = { " + shown.map { "\(LuaLiteral.key($0.name)) = \(LuaLiteral.string($0.value))" }
                    .joined(separator: ", ") + " }")
            }
            return parts.isEmpty ? "" : ", { " + parts.joined(separator: ", ") + " }"
        }
        if let fault = exchange.fault {
            let delay = exchange.delayMilliseconds.map { ", { delay = \(Self.milliseconds($0)) }" } ?? ""
            return "mock.fault(\(LuaLiteral.string(fault))\(delay))"
        }
        let body = exchange.body
        if body.isEmpty || exchange.status == 204 || exchange.status == 304 {
            // No body: a content type says nothing.
            let o = opts(dropping: { _ in true }, status: false)
            return "mock.status(\(exchange.status)\(o.isEmpty ? "" : ", nil" + o))"
        }
        if contentType.contains("json") || (contentType.isEmpty && Self.looksLikeJSON(body)), var json = try? JSONValue(parsing: body) {
            json = redact(json)
            let compact = json.encoded()
            if compact.count <= options.inlineLimit || !options.useFixtures {
                return "mock.json(\(LuaLiteral.value(json, indent: "", wrap: 100))\(opts(dropping: { $0.hasPrefix("application/json") })))"
            }
            let path = names.name(for: key, extension: "json")
            files.append((path, Array(Self.pretty(json).utf8) + [0x0A]))
            return "mock.file(\(LuaLiteral.string(path))\(opts(dropping: { $0.hasPrefix("application/json") })))"
        }
        let text = Self.isText(contentType, body)
        if (text && body.count <= options.inlineLimit) || !options.useFixtures {
            if !text && headers["content-type"] == nil { headers.add("Content-Type", "application/octet-stream") }
            return "mock.text(\(LuaLiteral.quoted(body))\(opts(dropping: { $0.hasPrefix("text/plain") })))"
        }
        let ext = Self.fileExtension(contentType, text: text)
        let path = names.name(for: key, extension: ext)
        files.append((path, body))
        let implied = Self.impliedType[ext] ?? "application/octet-stream"
        if headers["content-type"] == nil && !text { headers.add("Content-Type", "application/octet-stream") }
        return "mock.file(\(LuaLiteral.string(path))\(opts(dropping: { $0.hasPrefix(implied) })))"
    }

    /// `50`, or `12.5`.
    static func milliseconds(_ ms: Double) -> String {
        ms == ms.rounded() && abs(ms) < 1e12 ? String(Int64(ms)) : LuaLiteral.value(.double(ms))
    }

    /// The response's headers without those that say nothing about the mock, secrets redacted.
    func keptHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        let redacted = Set(options.redactHeaders.map { $0.lowercased() }).union(Self.secrets)
        var kept = HTTPHeaders()
        for field in headers where !Self.dropped.contains(field.name.lowercased()) {
            kept.add(field.name, redacted.contains(field.name.lowercased()) ? "REDACTED" : field.value)
        }
        return kept
    }

    /// Every `--redact-json` key, at any depth, holds `"REDACTED"`.
    func redact(_ v: JSONValue) -> JSONValue {
        guard !options.redactJSONKeys.isEmpty else { return v }
        switch v {
        case .object(let o):
            return .object(o.reduce(into: [:]) { r, m in r[m.key] = options.redactJSONKeys.contains(m.key) ? .string("REDACTED") : redact(m.value) })
        case .array(let a): return .array(a.map(redact))
        default: return v
        }
    }

    static func looksLikeJSON(_ body: [UInt8]) -> Bool {
        guard let first = body.first(where: { $0 > 0x20 }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    static func isText(_ contentType: String, _ body: [UInt8]) -> Bool {
        if contentType.hasPrefix("text/") || ["xml", "javascript", "html", "x-www-form-urlencoded", "csv", "yaml"].contains(where: contentType.contains) {
            return true
        }
        return contentType.isEmpty && !body.contains(0) && String(validating: body, as: UTF8.self) != nil
    }

    static let impliedType: [String: String] = [
        "json": "application/json", "html": "text/html", "xml": "application/xml", "txt": "text/plain", "css": "text/css",
        "js": "text/javascript", "csv": "text/csv", "png": "image/png", "jpg": "image/jpeg", "gif": "image/gif",
        "svg": "image/svg+xml", "pdf": "application/pdf", "webp": "image/webp",
    ]

    static func fileExtension(_ contentType: String, text: Bool) -> String {
        let bare = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        if let ext = impliedType.first(where: { $0.value == bare })?.key { return ext }
        if bare == "application/xml" || bare.hasSuffix("+xml") { return "xml" }
        if bare == "image/jpg" { return "jpg" }
        return text ? "txt" : "bin"
    }

    /// JSON with sorted keys, two spaces per level.
    static func pretty(_ v: JSONValue, _ indent: String = "") -> String {
        switch v {
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { indent + "  " + pretty($0, indent + "  ") }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let o) where !o.isEmpty:
            return "{\n" + o.keys.sorted().map { k in
                var key: [UInt8] = []
                JSONValue.encodeString(k, into: &key)
                return indent + "  " + String(decoding: key, as: UTF8.self) + ": " + pretty(o[k]!, indent + "  ")
            }.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return String(decoding: v.encoded(), as: UTF8.self)
        }
    }
}

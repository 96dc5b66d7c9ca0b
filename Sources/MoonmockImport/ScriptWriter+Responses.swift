import Foundation
import MoonmockCore

extension ScriptWriter {
    /// The Lua value answering as `exchange` was answered: `mock.json(...)`, `mock.text(...)`,
    /// `mock.file(...)` of a fixture, or `mock.status(...)`. The content type, status and body
    /// are the recorded ones, byte for byte (JSON keeps its key order: a body whose keys the
    /// Lua table would reorder goes as text or to a fixture as it came).
    func response(_ exchange: RecordedExchange, _ key: RuleKey, _ fixtures: inout Fixtures) -> String {
        let contentType = exchange.headers["content-type"] ?? ""
        let lowerType = contentType.lowercased()
        var headers = writtenHeaders(exchange.headers, origin: exchange.request.origin)
        let validated = (200...299).contains(exchange.status)
            && headers.contains { ["etag", "last-modified"].contains($0.name.lowercased()) }
        /// The options table; `builderType` is the content type the builder gives by itself.
        func opts(builderType: String?, status: Bool = true) -> String {
            var parts: [String] = []
            if status && exchange.status != 200 { parts.append("status = \(exchange.status)") }
            if let delay = exchange.delayMilliseconds, delay > 0 { parts.append("delay = \(Self.milliseconds(delay))") }
            func implied(_ value: WrittenHeader) -> Bool {
                guard let builderType else { return true }
                guard case .values(let v) = value, v.count == 1 else { return false }
                if options.exactContentType { return v[0] == builderType }
                let bare = v[0].split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
                return !bare.isEmpty && builderType.lowercased().hasPrefix(bare)
            }
            let shown = headers.filter { !($0.name.lowercased() == "content-type" && implied($0.value)) }
            if !shown.isEmpty {
                parts.append("headers = { " + shown.map { "\(LuaLiteral.key($0.name)) = \($0.value.lua)" }.joined(separator: ", ") + " }")
            }
            if validated { parts.append("conditional = true") }
            return parts.isEmpty ? "" : ", { " + parts.joined(separator: ", ") + " }"
        }
        if let fault = exchange.fault {
            let delay = exchange.delayMilliseconds.map { ", { delay = \(Self.milliseconds($0)) }" } ?? ""
            return "mock.fault(\(LuaLiteral.string(fault))\(delay))"
        }
        let body = exchange.body
        if body.isEmpty || exchange.status == 204 || exchange.status == 304 {
            // No body: a content type says nothing.
            let o = opts(builderType: nil, status: false)
            return "mock.status(\(exchange.status)\(o.isEmpty ? "" : ", nil" + o))"
        }
        if lowerType.contains("json") || (lowerType.isEmpty && Self.looksLikeJSON(body)), let parsed = try? JSONValue(parsing: body) {
            var bytes = body, json = parsed
            if !options.redactJSONKeys.isEmpty, let redacted = JSONRedaction.redact(body, keys: options.redactJSONKeys), redacted != body {
                bytes = redacted
                json = (try? JSONValue(parsing: redacted)) ?? parsed
            }
            if lowerType.isEmpty { headers.append(("Content-Type", .values(["application/json"]))) }
            if json.encoded() == bytes && (bytes.count <= options.inlineLimit || !options.useFixtures) {
                // The table encodes back to the very bytes: inline, where it is easiest to edit.
                return "mock.json(\(LuaLiteral.value(json, indent: "", wrap: 100))\(opts(builderType: "application/json; charset=utf-8")))"
            }
            if bytes.count <= options.inlineLimit || !options.useFixtures, let text = String(validating: bytes, as: UTF8.self) {
                // As written: a table would come back with its keys sorted.
                return "mock.json.raw(\(LuaLiteral.long(text))\(opts(builderType: "application/json; charset=utf-8")))"
            }
            let path = fixtures.path(for: key, extension: "json", bytes: bytes)
            return "mock.file(\(LuaLiteral.string(path))\(opts(builderType: MIMEType.forPath(path))))"
        }
        let text = Self.isText(lowerType, body)
        if !text && contentType.isEmpty { headers.append(("Content-Type", .values(["application/octet-stream"]))) }
        if (text && body.count <= options.inlineLimit) || !options.useFixtures {
            return "mock.text(\(LuaLiteral.quoted(body))\(opts(builderType: "text/plain; charset=utf-8")))"
        }
        let path = fixtures.path(for: key, extension: Self.fileExtension(lowerType, text: text), bytes: body)
        return "mock.file(\(LuaLiteral.string(path))\(opts(builderType: MIMEType.forPath(path))))"
    }

    /// `50`, or `12.5`.
    static func milliseconds(_ ms: Double) -> String {
        ms == ms.rounded() && abs(ms) < 1e12 ? String(Int64(ms)) : LuaLiteral.value(.double(ms))
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
}

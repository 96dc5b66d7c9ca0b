import Foundation
import MoonmockCore

/// A value written as the media type says: JSON, text, XML, a form, or real bytes of an image
/// or document format (a client that decodes a PNG gets a PNG).
enum MediaBodies {
    static func encode(_ value: JSONValue, as type: String, schema: JSONValue?) -> [UInt8] {
        let t = type.lowercased()
        if OpenAPIContract.isJSON(t) { return value.encoded() }
        if t == "application/xml" || t == "text/xml" || t.hasSuffix("+xml") {
            if case .string(let s) = value, s.hasPrefix("<") { return Array(s.utf8) }
            let root = schema?["xml"]?["name"]?.stringValue ?? "root"
            return Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + xml(value, name: root)).utf8)
        }
        if t == "application/x-www-form-urlencoded", case .object(let o) = value {
            return Array(o.keys.sorted().map { "\(formEscape($0))=\(formEscape(text(o[$0]!)))" }.joined(separator: "&").utf8)
        }
        if t.hasPrefix("text/") { return Array(text(value).utf8) }
        // Binary: a base64 example (format: byte), else a small real file of the type.
        if case .string(let s) = value, s.count >= 8, let data = Data(base64Encoded: s), isMagic(Array(data), for: t) { return Array(data) }
        if let file = tiny[t] { return file }
        if case .string(let s) = value { return Array(s.utf8) }
        return value.encoded()
    }

    static func text(_ value: JSONValue) -> String {
        if case .string(let s) = value { return s }
        return String(decoding: value.encoded(), as: UTF8.self)
    }

    static func formEscape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s
    }

    static func xml(_ value: JSONValue, name: String) -> String {
        let tag = name.isEmpty ? "item" : name
        switch value {
        case .object(let o): return "<\(tag)>" + o.keys.sorted().map { xml(o[$0]!, name: $0) }.joined() + "</\(tag)>"
        case .array(let items): return items.map { xml($0, name: tag) }.joined()
        case .null: return "<\(tag)/>"
        default:
            let s = text(value).replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            return "<\(tag)>\(s)</\(tag)>"
        }
    }

    /// Whether `bytes` start as a file of type `t` does (any bytes for a type not listed).
    static func isMagic(_ bytes: [UInt8], for t: String) -> Bool {
        guard let file = tiny[t] else { return true }
        return bytes.starts(with: file.prefix(4))
    }

    /// The smallest valid files of common types.
    static let tiny: [String: [UInt8]] = [
        // A 1×1 transparent PNG.
        "image/png": Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!),
        // A 1×1 GIF.
        "image/gif": Array(Data(base64Encoded: "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")!),
        // A 1×1 JPEG.
        "image/jpeg": Array(Data(base64Encoded: "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=")!),
        "application/pdf": Array("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n".utf8),
        "application/octet-stream": Array("moonmock".utf8),
    ]
}

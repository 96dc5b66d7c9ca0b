import Foundation
import MoonmockCore
import MoonmockYAML

/// An OpenAPI spec's files: the root and every file its `$ref`s reach, read once, each by its
/// absolute `file:` URI.
///
/// ```swift
/// let docs = try SpecDocuments(root: URL(fileURLWithPath: "api.yaml"))
/// docs.resolve(docs.root.child("paths"))   // the paths object, its $ref followed
/// ```
public struct SpecDocuments: Sendable {
    /// A place in one of the files: the value there, the file's URI and the JSON pointer.
    public struct Located: Sendable {
        public let value: JSONValue
        public let document: String
        public let pointer: String

        /// `document#pointer`.
        public var uri: String { document + "#" + pointer }

        /// The member `key` (or nothing).
        public func child(_ key: String) -> Located? {
            value[key].map { Located(value: $0, document: document, pointer: pointer + "/" + Self.escape(key)) }
        }

        public func child(_ index: Int) -> Located? {
            value[index].map { Located(value: $0, document: document, pointer: pointer + "/\(index)") }
        }

        /// The members of an object, in key order (a spec's order is not kept by JSON objects here).
        public var members: [(String, Located)] {
            guard case .object(let o) = value else { return [] }
            return o.keys.sorted().map { ($0, child($0)!) }
        }

        public var elements: [Located] {
            guard case .array(let a) = value else { return [] }
            return a.indices.map { child($0)! }
        }

        static func escape(_ token: String) -> String {
            guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
            var out = ""
            out.reserveCapacity(token.utf8.count + 4)
            for c in token.unicodeScalars {
                switch c {
                case "~": out += "~0"
                case "/": out += "~1"
                default: out.unicodeScalars.append(c)
                }
            }
            return out
        }
    }

    /// Why a spec cannot be read: the file and what is wrong.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public private(set) var root: Located
    public private(set) var documents: [String: JSONValue]
    /// `document NUL relative-file` → the file's URI, for every `$ref` to another file (no URL
    /// arithmetic while requests are checked).
    let fileURIs: [String: String]

    /// Reads `root` and the files its `$ref`s name (relative to the file that names them).
    public init(root url: URL) throws {
        let rootURL = url.standardizedFileURL
        var documents: [String: JSONValue] = [:]
        var fileURIs: [String: String] = [:]
        var pending = [rootURL]
        while let next = pending.popLast() {
            let key = next.absoluteString
            if documents[key] != nil { continue }
            guard documents.count < 200 else { throw Failure(description: "\(rootURL.lastPathComponent): more than 200 files reached by $ref") }
            let value = try Self.read(next)
            documents[key] = value
            Self.eachRef(value) { ref in
                let file = ref.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                guard !file.isEmpty, !file.contains("://") || file.hasPrefix("file:"), let target = URL(string: file, relativeTo: next) else { return }
                let resolved = target.absoluteURL.standardizedFileURL
                fileURIs[key + "\u{0}" + file] = resolved.absoluteString
                pending.append(resolved)
            }
        }
        self.documents = documents
        self.fileURIs = fileURIs
        root = Located(value: documents[rootURL.absoluteString]!, document: rootURL.absoluteString, pointer: "")
    }

    /// A spec given as a value (tests, a spec built in code); `$ref`s stay within it.
    public init(value: JSONValue, uri: String = "file:///spec.json") {
        documents = [uri: value]
        fileURIs = [:]
        root = Located(value: value, document: uri, pointer: "")
    }

    /// The same files, the root's value replaced (a Swagger 2.0 document read as OpenAPI 3).
    public func replacingRoot(_ value: JSONValue) -> SpecDocuments {
        var copy = self
        copy.documents[root.document] = value
        copy.root = Located(value: value, document: root.document, pointer: "")
        return copy
    }

    /// A file's JSON, or its YAML.
    public static func read(_ url: URL) throws -> JSONValue {
        let name = url.lastPathComponent
        let bytes: [UInt8]
        do { bytes = Array(try Data(contentsOf: url)) } catch {
            throw Failure(description: "\(url.path): cannot read it (\(error.localizedDescription))")
        }
        let first = bytes.first { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        if first == UInt8(ascii: "{") || name.hasSuffix(".json") {
            do { return try JSONValue(parsing: bytes) } catch { throw Failure(description: "\(name): not JSON: \(error)") }
        }
        do { return try YAMLReader.read(bytes) } catch { throw Failure(description: "\(name): \(error)") }
    }

    /// Every `$ref` string in `value` (data under `example`/`examples`/`enum`/`const` left alone).
    static func eachRef(_ value: JSONValue, _ body: (String) -> Void) {
        switch value {
        case .object(let o):
            if let ref = o["$ref"]?.stringValue { body(ref) }
            for (key, member) in o where !["example", "examples", "enum", "const", "default"].contains(key) { eachRef(member, body) }
        case .array(let a): for item in a { eachRef(item, body) }
        default: break
        }
    }

    /// `located` with its `$ref` followed (to the end of a chain of them); itself without one.
    public func resolve(_ located: Located) -> Located {
        var current = located
        for _ in 0..<32 {
            guard let ref = current.value["$ref"]?.stringValue, let target = lookup(ref, from: current.document) else { return current }
            current = target
        }
        return current
    }

    /// The place a `$ref` names, from the file `document`.
    public func lookup(_ ref: String, from document: String) -> Located? {
        let parts = ref.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let file = String(parts[0])
        let raw = parts.count > 1 ? String(parts[1]) : ""
        let pointer = raw.contains("%") ? (raw.removingPercentEncoding ?? raw) : raw
        let uri: String
        if file.isEmpty { uri = document } else if let known = fileURIs[document + "\u{0}" + file] { uri = known } else {
            guard let url = URL(string: file, relativeTo: URL(string: document)) else { return nil }
            uri = url.absoluteURL.standardizedFileURL.absoluteString
        }
        guard var value = documents[uri] else { return nil }
        for raw in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let token = raw.contains("~") ? raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") : String(raw)
            guard let next = value[token] ?? Int(token).flatMap({ value[$0] }) else { return nil }
            value = next
        }
        return Located(value: value, document: uri, pointer: pointer)
    }

    /// The file's name, for messages: `api.yaml`.
    public func name(_ document: String) -> String {
        if let slash = document.lastIndex(of: "/") { return String(document[document.index(after: slash)...]) }
        return document
    }
}

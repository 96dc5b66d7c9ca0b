import Foundation

/// A Mock-Bundle: a folder with `bundle.json`, an array of
/// `{ "request": { "method"?, "url", "parameters"? }, "response": { "code", "headers"?, "file"?, "mime_type"? } }`.
///
/// Semantics kept from the format: `url` is `"://host[:port]/path"` and matches http and https
/// alike; the method defaults to GET; the first matching entry wins; every query item of the
/// request must be declared in `parameters` (declared ones may be missing, but a request without
/// any query matches only entries without parameters), where `null` means "present with any
/// value"; `file` is relative to the bundle folder and may be any type;
/// `mime_type` sets Content-Type; a `file` without one is `application/octet-stream`.
///
/// ```swift
/// let bundle = try MockBundle(directory: URL(fileURLWithPath: "Mocks/happy"))
/// bundle.response(for: request)   // the first matching entry's response, or nil
/// ```
public struct MockBundle: Sendable {
    public struct Entry: Sendable {
        public let method: String
        public let host: String
        public let port: Int?
        public let path: String
        /// Declared query items: a required value, or `nil` for "any value".
        public let parameters: [String: String?]
        public let response: MockResponse
        /// The `file` as written in `bundle.json`, if any.
        public let file: String?
        public let mimeType: String?
    }

    /// A `bundle.json` that cannot be used, naming the file and the entry.
    public struct LoadError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public let directory: URL
    public let entries: [Entry]
    /// Every file the bundle read (for hot reload).
    public let files: [String]

    /// Reads the bundle in `directory`. With a `sandbox` (a script's folder), the folder, its
    /// `bundle.json` and every `file` it names must lie inside it, symlinks resolved: a bundle
    /// entry linked to `/etc/passwd` is refused, not served.
    public init(directory: URL, sandbox: FileConfinement? = nil) throws {
        self.directory = directory.standardizedFileURL
        let manifest = self.directory.appendingPathComponent("bundle.json")
        if let sandbox {
            do { try sandbox.check(manifest.path, label: "bundle '\(manifest.path)'") } catch {
                throw LoadError(description: String(describing: error))
            }
        }
        guard let data = FileManager.default.contents(atPath: manifest.path) else {
            throw LoadError(description: "\(manifest.path): cannot read the bundle (no bundle.json in \(self.directory.path))")
        }
        let json: JSONValue
        do { json = try JSONValue(parsing: [UInt8](data)) } catch {
            throw LoadError(description: "\(manifest.path): \(error)")
        }
        guard case .array(let items) = json else {
            throw LoadError(description: "\(manifest.path): expected an array of entries")
        }
        var entries: [Entry] = []
        var files = [manifest.path]
        for (index, item) in items.enumerated() {
            func fail(_ why: String) -> LoadError { LoadError(description: "\(manifest.path): entry \(index): \(why)") }
            guard let request = item["request"], let response = item["response"] else { throw fail("needs \"request\" and \"response\"") }
            guard let url = request["url"]?.stringValue else { throw fail("request.url must be a string like \"://host/path\"") }
            guard url.hasPrefix("://") else { throw fail("request.url must start with \"://\" (scheme-agnostic), got \"\(url)\"") }
            let parsed = MockRequest(method: "GET", url: "http" + url)
            var parameters: [String: String?] = [:]
            if let p = request["parameters"] {
                guard case .object(let o) = p else { throw fail("request.parameters must be an object") }
                for (name, value) in o {
                    switch value {
                    case .null: parameters[name] = .some(nil)
                    case .string(let s): parameters[name] = .some(s)
                    case .integer, .double, .bool: parameters[name] = .some(value.brief)
                    default: throw fail("request.parameters.\(name) must be a string or null")
                    }
                }
            }
            guard case .integer(let code)? = response["code"], (100...599).contains(code) else {
                throw fail("response.code must be an HTTP status")
            }
            var headers = HTTPHeaders()
            if let h = response["headers"] {
                guard case .object(let o) = h else { throw fail("response.headers must be an object") }
                for (name, value) in o.sorted(by: { $0.key < $1.key }) {
                    guard let v = value.stringValue else { throw fail("response.headers.\(name) must be a string") }
                    headers.add(name, v)
                }
            }
            var body: [UInt8] = []
            let file = response["file"]?.stringValue
            if let file {
                guard !file.hasPrefix("/"), !file.split(separator: "/").contains("..") else {
                    throw fail("response.file '\(file)' must stay inside the bundle folder")
                }
                let path = self.directory.appendingPathComponent(file).path
                if let sandbox {
                    do { try sandbox.check(path, label: "response.file '\(file)'") } catch { throw fail(String(describing: error)) }
                }
                guard let contents = FileManager.default.contents(atPath: path) else { throw fail("response.file '\(file)' not found") }
                body = [UInt8](contents)
                files.append(path)
                if headers["Accept-Ranges"] == nil { headers["Accept-Ranges"] = "bytes" }
            }
            let mime = response["mime_type"]?.stringValue
            if let mime {
                headers["Content-Type"] = mime
            } else if file != nil && headers["Content-Type"] == nil {
                // As MockingBird: a file without a mime_type is bytes.
                headers["Content-Type"] = "application/octet-stream"
            }
            entries.append(Entry(method: (request["method"]?.stringValue ?? "GET").asciiUppercased, host: parsed.host, port: parsed.port,
                                 path: parsed.path, parameters: parameters,
                                 response: MockResponse(status: Int(code), headers: headers, body: body), file: file, mimeType: mime))
        }
        self.entries = entries
        self.files = files
    }

    /// The first entry matching `request`, or `nil`.
    public func entry(for request: MockRequest) -> Entry? {
        entries.first { $0.matches(request) }
    }
}

extension MockBundle.Entry {
    func matches(_ r: MockRequest) -> Bool {
        guard r.method == method || (r.method == "HEAD" && method == "GET"), r.host == host, r.path == path else { return false }
        if let port, r.port != port { return false }
        // A request without a query matches only entries without parameters.
        if r.queryItems.isEmpty { return parameters.isEmpty }
        for item in r.queryItems {
            guard let declared = parameters[item.name] else { return false }   // undeclared item
            if let want = declared, want != (item.value ?? "") { return false }
        }
        return true
    }
}

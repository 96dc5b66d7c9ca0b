import Foundation
import MoonmockCore

/// HAR 1.2 (what browsers, Playwright, Charles and Proxyman export) as exchanges for
/// ``ScriptWriter``: each entry's request and response, with their bodies as the server sent
/// them — `content.text` (base64, or text put back into the charset its `Content-Type` names),
/// or Playwright's `_file` attachments read from beside the HAR or from its `.zip` — and the
/// entries of other hosts left out when `hosts` names some (`host` or `host:port`).
///
/// ```swift
/// let (exchanges, notes) = try HARImporter.read(file: URL(fileURLWithPath: "session.zip"), hosts: ["api.example.com"])
/// ```
public enum HARImporter {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A `.har` file (attachments beside it) or a `.zip` holding one and its attachments.
    public static func read(file: URL, hosts: Set<String> = []) throws -> (exchanges: [RecordedExchange], notes: [WriterNote]) {
        let name = file.lastPathComponent
        guard let data = FileManager.default.contents(atPath: file.path) else { throw Failure(description: "cannot read \(file.path)") }
        if data.starts(with: [0x50, 0x4B, 0x03, 0x04]) || data.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            let zip: ZipArchive
            do { zip = try ZipArchive(Array(data)) } catch { throw Failure(description: "\(name): \(error)") }
            guard let harName = zip.names.first(where: { $0.lowercased().hasSuffix(".har") }) else {
                throw Failure(description: "\(name): no .har file in the zip (it has: \(zip.names.prefix(5).joined(separator: ", ")))")
            }
            do {
                let har = try zip.member(harName) ?? []
                return try read(Data(har), name: name, hosts: hosts) { try zip.member($0) }
            } catch let failure as Failure { throw failure } catch { throw Failure(description: "\(name): \(error)") }
        }
        let folder = file.deletingLastPathComponent()
        return try read(data, name: name, hosts: hosts) { path in
            guard !path.hasPrefix("/"), !path.split(separator: "/").contains("..") else { return nil }
            return FileManager.default.contents(atPath: folder.appendingPathComponent(path).path).map(Array.init)
        }
    }

    /// The HAR in `data`; `attachment` reads a `_file` by the name the HAR gives (`nil`: none).
    public static func read(_ data: Data, name: String, hosts: Set<String> = [],
                            attachment: ((String) throws -> [UInt8]?)? = nil) throws -> (exchanges: [RecordedExchange], notes: [WriterNote]) {
        let json: JSONValue
        do { json = try JSONValue(parsing: Array(data)) } catch { throw Failure(description: "\(name): not JSON (\(error))") }
        guard case .array(let entries)? = json["log"]?["entries"] else {
            throw Failure(description: "\(name): no log.entries: is it a HAR file?")
        }
        var exchanges: [RecordedExchange] = [], notes: [WriterNote] = []
        var seenHosts: [String] = [], omitted = 0, withBodies = 0
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (i, entry) in entries.enumerated() {
            let source = "\(name): entry \(i + 1)"
            guard let method = entry["request"]?["method"]?.stringValue, let url = entry["request"]?["url"]?.stringValue,
                  let components = URLComponents(string: url), let host = components.host?.lowercased() else {
                notes.append(WriterNote(source: source, message: "no request method and absolute URL"))
                continue
            }
            let port = components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
            if !seenHosts.contains("\(host):\(port)") { seenHosts.append("\(host):\(port)") }
            if !hosts.isEmpty && !hosts.contains(host) && !hosts.contains("\(host):\(port)") { continue }
            guard case .integer(let status)? = entry["response"]?["status"], (100...599).contains(status) else {
                notes.append(WriterNote(source: source, message: "\(method) \(url): no response status (the request failed or was aborted)"))
                continue
            }
            let requestHeaders = headers(entry["request"]?["headers"])
            let responseHeaders = headers(entry["response"]?["headers"])
            let postData = entry["request"]?["postData"]
            let requestBody: [UInt8]
            do {
                requestBody = try body(postData, type: postData?["mimeType"]?.stringValue ?? requestHeaders["content-type"], attachment) ?? []
            } catch let failure as Failure {
                notes.append(WriterNote(source: source, message: "\(method) \(url): request body: \(failure.description)"))
                continue
            }
            let request = MockRequest(method: method.uppercased(), url: url, headers: requestHeaders, body: requestBody)
            let content = entry["response"]?["content"]
            var responseHeadersKept = responseHeaders
            if responseHeadersKept["content-type"] == nil, let mime = content?["mimeType"]?.stringValue, !mime.isEmpty, mime != "x-unknown" {
                responseHeadersKept.add("Content-Type", mime)
            }
            let responseBody: [UInt8]
            do {
                guard let found = try body(content, type: responseHeadersKept["content-type"], attachment) else {
                    let size = content?["size"].flatMap { v -> Int? in if case .integer(let n) = v { return Int(n) } else { return nil } } ?? 0
                    if size > 0 && !HTTPStatus.hasNoContent(Int(status)) && method.uppercased() != "HEAD" {
                        omitted += 1
                        notes.append(WriterNote(source: source, message: "\(method) \(url): the response body (\(size) bytes) is not in the HAR"))
                        continue
                    }
                    exchanges.append(RecordedExchange(request: request, status: Int(status), headers: responseHeadersKept, body: [],
                                                      recordedAt: date(entry, dates), source: source))
                    continue
                }
                responseBody = found
            } catch let failure as Failure {
                notes.append(WriterNote(source: source, message: "\(method) \(url): response body: \(failure.description)"))
                continue
            }
            if !responseBody.isEmpty { withBodies += 1 }
            exchanges.append(RecordedExchange(request: request, status: Int(status), headers: responseHeadersKept, body: responseBody,
                                              recordedAt: date(entry, dates), source: source))
        }
        if omitted > 0 && withBodies == 0 {
            throw Failure(description: "\(name): the HAR has no response bodies (\(omitted) left out: Playwright's content \"omit\", or a browser's "
                          + "\"without content\"); save it with its content embedded or attached")
        }
        if !hosts.isEmpty && exchanges.isEmpty && notes.isEmpty {
            throw Failure(description: "\(name): no entry is for \(hosts.sorted().joined(separator: ", ")); the HAR has: "
                          + seenHosts.joined(separator: ", "))
        }
        return (exchanges, notes)
    }

    /// A HAR body (`content` or `postData`): base64, text put back into its charset, or an
    /// attachment; `nil` when the HAR does not have it.
    private static func body(_ content: JSONValue?, type: String?, _ attachment: ((String) throws -> [UInt8]?)?) throws -> [UInt8]? {
        guard let content else { return nil }
        if let file = content["_file"]?.stringValue {
            guard let attachment, let bytes = try attachment(file) else { throw Failure(description: "attachment \(file) not found beside the HAR") }
            // Playwright writes a text body's attachment as UTF-8: back into the charset the type names.
            if let type, let charset = charset(type), charset != .utf8, let text = String(validating: bytes, as: UTF8.self),
               let encoded = text.data(using: charset) {
                return Array(encoded)
            }
            return bytes
        }
        guard let text = content["text"]?.stringValue else { return nil }
        if content["encoding"]?.stringValue == "base64" {
            guard let decoded = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else { throw Failure(description: "not valid base64") }
            return Array(decoded)
        }
        if let type, let charset = charset(type), charset != .utf8, let encoded = text.data(using: charset) { return Array(encoded) }
        return Array(text.utf8)
    }

    /// The encoding a `Content-Type`'s `charset` names, among those Foundation has everywhere.
    static func charset(_ contentType: String) -> String.Encoding? {
        guard let param = contentType.split(separator: ";").dropFirst().first(where: { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("charset=") })
        else { return nil }
        let name = param.split(separator: "=", maxSplits: 1).last.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"'")).lowercased() } ?? ""
        switch name {
        case "utf-8", "utf8": return .utf8
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1": return .isoLatin1
        case "windows-1252", "cp1252": return .windowsCP1252
        case "us-ascii", "ascii": return .ascii
        case "utf-16": return .utf16
        case "utf-16le": return .utf16LittleEndian
        case "utf-16be": return .utf16BigEndian
        case "iso-8859-2", "latin2": return .isoLatin2
        case "shift_jis", "shift-jis", "sjis": return .shiftJIS
        case "euc-jp": return .japaneseEUC
        default: return nil
        }
    }

    private static func date(_ entry: JSONValue, _ dates: ISO8601DateFormatter) -> Date? {
        entry["startedDateTime"]?.stringValue.flatMap { dates.date(from: $0) ?? ISO8601DateFormatter().date(from: $0) }
    }

    private static func headers(_ list: JSONValue?) -> HTTPHeaders {
        var out = HTTPHeaders()
        if case .array(let items)? = list {
            for item in items {
                if let name = item["name"]?.stringValue, let value = item["value"]?.stringValue, !name.hasPrefix(":") { out.add(name, value) }
            }
        }
        return out
    }
}

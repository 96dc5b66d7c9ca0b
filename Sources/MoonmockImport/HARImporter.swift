import Foundation
import MoonmockCore

/// HAR 1.2 (what browsers, Charles and Proxyman export) as exchanges for ``ScriptWriter``:
/// each entry's request and response, base64 bodies decoded, entries of other hosts left out
/// when `hosts` names some.
///
/// ```swift
/// let (exchanges, notes) = try HARImporter.read(Data(contentsOf: url), name: "api.har", hosts: ["api.example.com"])
/// ```
public enum HARImporter {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func read(_ data: Data, name: String, hosts: Set<String> = []) throws -> (exchanges: [RecordedExchange], notes: [WriterNote]) {
        let json: JSONValue
        do { json = try JSONValue(parsing: Array(data)) } catch { throw Failure(description: "\(name): not JSON (\(error))") }
        guard case .array(let entries)? = json["log"]?["entries"] else {
            throw Failure(description: "\(name): no log.entries: is it a HAR file?")
        }
        var exchanges: [RecordedExchange] = [], notes: [WriterNote] = []
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (i, entry) in entries.enumerated() {
            let source = "\(name): entry \(i + 1)"
            guard let method = entry["request"]?["method"]?.stringValue, let url = entry["request"]?["url"]?.stringValue,
                  let components = URLComponents(string: url), let host = components.host else {
                notes.append(WriterNote(source: source, message: "no request method and absolute URL"))
                continue
            }
            if !hosts.isEmpty && !hosts.contains(host.lowercased()) { continue }
            guard case .integer(let status)? = entry["response"]?["status"], (100...599).contains(status) else {
                notes.append(WriterNote(source: source, message: "\(method) \(url): no response status (the request failed or was aborted)"))
                continue
            }
            let requestBody = Array((entry["request"]?["postData"]?["text"]?.stringValue ?? "").utf8)
            let request = MockRequest(method: method.uppercased(), url: url, headers: headers(entry["request"]?["headers"]), body: requestBody)
            let content = entry["response"]?["content"]
            var body = Array((content?["text"]?.stringValue ?? "").utf8)
            if content?["encoding"]?.stringValue == "base64" {
                guard let decoded = Data(base64Encoded: content?["text"]?.stringValue ?? "", options: .ignoreUnknownCharacters) else {
                    notes.append(WriterNote(source: source, message: "\(method) \(url): response.content.text is not valid base64"))
                    continue
                }
                body = Array(decoded)
            }
            var responseHeaders = headers(entry["response"]?["headers"])
            if responseHeaders["content-type"] == nil, let mime = content?["mimeType"]?.stringValue, !mime.isEmpty, mime != "x-unknown" {
                responseHeaders.add("Content-Type", mime)
            }
            let when = entry["startedDateTime"]?.stringValue.flatMap { dates.date(from: $0) ?? ISO8601DateFormatter().date(from: $0) }
            exchanges.append(RecordedExchange(request: request, status: Int(status), headers: responseHeaders, body: body,
                                              recordedAt: when, source: source))
        }
        return (exchanges, notes)
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

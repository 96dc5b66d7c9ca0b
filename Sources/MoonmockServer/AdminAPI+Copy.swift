import Foundation
import MoonmockCore
import MoonmockImport

/// One journal entry as something to paste: the `mocks.lua` rule that answers exactly that
/// request with that answer (the dashboard's "copy as a rule"), or the `curl` command that
/// sends the request again ("copy as curl").
extension AdminAPI {
    private func entry(_ id: Substring) -> JournalEntry? {
        guard let n = Int(id) else { return nil }
        // This replica's own first; another's from the shared journal.
        return engine.journal.entries().last { $0.id == n } ?? (try? engine.journalEntries())?.last { $0.id == n }
    }

    /// `GET /requests/{id}/rule`: `{"lua": "..."}`, written by the one ScriptWriter (bodies
    /// inline, secrets redacted). A body the journal cut, or a fault, is said in the script.
    func entryAsRule(_ id: Substring) -> MockResponse {
        guard let e = entry(id) else { return Self.error("no journal entry \(id) (GET /__moonmock/requests lists them)", 404) }
        var exchange = RecordedExchange(request: e.request, status: e.status, headers: e.responseHeaders, body: e.responseBody,
                                        source: "journal entry \(e.id)")
        if e.delayMilliseconds > 0 { exchange.delayMilliseconds = e.delayMilliseconds }
        var notes: [WriterNote] = []
        switch e.fault {
        case nil: break
        case .connectionReset?, .emptyResponse?, .malformedChunk?: exchange.fault = e.fault?.description
        case let fault?: notes.append(WriterNote(source: "journal entry \(e.id)", message: "answered with \(fault.description), written as its status and body"))
        }
        if e.responseBody.count < e.responseBodyLength {
            notes.append(WriterNote(source: "journal entry \(e.id)",
                                    message: "the body is cut at \(e.responseBody.count) of \(e.responseBodyLength) bytes (moonmock serve --journal-body)"))
        }
        var options = ScriptWriter.Options(title: "The answer to request \(e.id): \(e.method) \(e.url)")
        options.useFixtures = false
        let output = ScriptWriter(options: options).write([exchange], notes: notes)
        return .json(.object(["lua": .string(output.script)]))
    }

    /// `GET /requests/{id}/curl`: `{"curl": "curl ..."}`, quoted for a POSIX shell.
    func entryAsCurl(_ id: Substring) -> MockResponse {
        guard let e = entry(id) else { return Self.error("no journal entry \(id) (GET /__moonmock/requests lists them)", 404) }
        return .json(.object(["curl": .string(Self.curl(e.request))]))
    }

    /// `curl -X METHOD 'url' -H 'Name: value' ... --data-binary 'body'`: the request as sent
    /// (`Host`, `Content-Length` and `Accept: */*` left to curl).
    static func curl(_ r: MockRequest) -> String {
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        var parts = ["curl"]
        if r.method != "GET" || !r.body.isEmpty { parts += ["-X", r.method] }
        parts.append(quote(r.url))
        for field in r.headers {
            let name = field.name.lowercased()
            if name == "host" || name == "content-length" || (name == "accept" && field.value == "*/*") || name == "user-agent" { continue }
            parts += ["-H", quote("\(field.name): \(field.value)")]
        }
        if !r.body.isEmpty {
            if let text = String(validating: r.body, as: UTF8.self) {
                parts += ["--data-binary", quote(text)]
            } else {
                parts += ["--data-binary", "@-", "# the body is binary (\(r.body.count) bytes): pipe it in"]
            }
        }
        return parts.joined(separator: " ")
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore
@testable import MoonmockServer
import Testing

@Suite("docs/admin-api.yaml")
struct AdminAPIDocsTests {
    /// `(METHOD, /path)` of every operation in the OpenAPI file (paths at two spaces, methods at four).
    static func documented() throws -> [String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/admin-api.yaml")
        let text = try String(contentsOf: url.standardizedFileURL, encoding: .utf8)
        var operations: [String] = [], path: String?, inPaths = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") { inPaths = true; continue }
            if inPaths && !line.hasPrefix(" ") && !line.isEmpty { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") { path = String(line.dropFirst(2).dropLast()); continue }
            for method in ["get", "put", "post", "delete", "patch"] where line == "    \(method):" {
                operations.append("\(method.uppercased()) \(path ?? "?")")
            }
        }
        return operations
    }

    @Test("every route the server answers is documented, and nothing else is")
    func sameRoutes() throws {
        let served = AdminAPI.routes.map { "\($0.method) \($0.path)" }
        let documented = try Self.documented()
        #expect(Set(served).subtracting(documented).sorted() == [], "answered but not in docs/admin-api.yaml")
        #expect(Set(documented).subtracting(served).sorted() == [], "documented but not answered")
        #expect(documented.count == served.count)
    }

    @Test("every documented route answers over HTTP (not the 404 or 405 of an unknown endpoint)")
    func documentedRoutesAnswer() async throws {
        let server = try startServer(#"mock.get("/a", "a")"#)
        defer { server.stop() }
        for operation in try Self.documented() {
            let parts = operation.split(separator: " ")
            let path = String(parts[1]).replacingOccurrences(of: "{id}", with: "nope").replacingOccurrences(of: "{key}", with: "k")
                .replacingOccurrences(of: "{rule}", with: "GET%20%2Fa")
            if path == "/events" {
                // A stream kept open: its head is the answer.
                let head = await onThread { () -> String in
                    guard let c = RawConnection(server, timeout: 5) else { return "" }
                    _ = c.send("GET /__moonmock/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    let n = c.read(&buffer)
                    return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
                }
                #expect(head.hasPrefix("HTTP/1.1 200") && head.contains("text/event-stream"), "\(head)")
                continue
            }
            let body: String? = parts[0] == "GET" || parts[0] == "DELETE" ? nil : "{}"
            let answer = try await server.fetch("/__moonmock" + (path == "/" ? "/" : path), method: String(parts[0]), body: body)
            #expect(!answer.body.contains("no admin endpoint") && answer.status != 405, "\(operation): \(answer.status) \(answer.body)")
        }
        let unknown = try await server.fetch("/__moonmock/nothing")
        #expect(unknown.status == 404 && unknown.body.contains("no admin endpoint GET /__moonmock/nothing"))
        let wrongMethod = try await server.fetch("/__moonmock/health", method: "DELETE")
        #expect(wrongMethod.status == 405 && wrongMethod.response.value(forHTTPHeaderField: "Allow") == "GET")
    }
}

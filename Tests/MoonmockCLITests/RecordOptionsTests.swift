import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockProcessSupport
import MoonmockTestSupport
import Testing

@Suite("moonmock record, convert har and serve: the options of faithful replay")
struct RecordOptionsTests {
    @Test("record --keep-host pins the rules to the upstream, --log prints each request, --redact-cookie and --keep-cookies")
    func keepHostAndLog() async throws {
        let (upstream, _, upText) = try launchServe(["examples/mocks.lua", "--port", "0", "--no-watch"], until: "\n")
        defer { upstream.stop() }
        let upPort = try #require(upText.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) })
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-record-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let process = Subprocess()
        process.executableURL = CLIRunner.binary
        process.arguments = ["record", "--upstream", "http://127.0.0.1:\(upPort)", "--out", out.path, "--port", "0", "--keep-host", "--log"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.stop() }
        let first = await cliThread { String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self) }
        let line = try #require(first.split(separator: "\n").first.map(String.init))
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let session = URLSession(configuration: .ephemeral)
        _ = try await session.data(from: URL(string: "http://127.0.0.1:\(port)/users/7")!)
        #expect(process.stop() && process.terminationStatus == 0)
        let rest = await cliThread { String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        #expect((first + rest).contains("moonmock: GET /users/7 → 200 ("), "\(first + rest)")
        let script = try String(contentsOf: out.appendingPathComponent("mocks.lua"), encoding: .utf8)
        // Pinned to the upstream it recorded, not to the recorder the requests reached.
        #expect(script.contains(#"url = "http://127.0.0.1:\#(upPort)/users/7""#), "\(script)")
        let pinned = try CLIRunner.run(["request", "mocks.lua", "GET", "http://127.0.0.1:\(upPort)/users/7"], in: out)
        #expect(pinned.stdout.hasPrefix("HTTP/1.1 200"), "\(pinned.stdout)")
        #expect(try CLIRunner.run(["request", "mocks.lua", "GET", "http://127.0.0.1:\(port)/users/7"], in: out).stdout.hasPrefix("HTTP/1.1 404"))
    }

    @Test("convert har: a --host that keeps nothing names the hosts the file has; HOST:PORT picks a port; one rule is \"1 rule\"")
    func hostFilter() throws {
        let har = "Tests/Fixtures/import/api.har"
        let none = try CLIRunner.run(["convert", "har", har, "--host", "elsewhere.test"])
        #expect(none.status == 1)
        #expect(none.stderr == "moonmock: api.har: no entry is for elsewhere.test; the HAR has: api.example.com:443, cdn.example.com:443\n", "\(none.stderr)")
        let port = try CLIRunner.run(["convert", "har", har, "--host", "api.example.com:443"])
        #expect(port.status == 0 && port.stdout.contains("-- 7 rules"), "\(port.stderr)")   // the cdn host left out
        #expect(try CLIRunner.run(["convert", "har", har, "--host", "api.example.com:80"]).status == 1)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-har-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let one = #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a.test/x", "headers": []}, "response": {"status": 200, "headers": [], "content": {"text": "x", "mimeType": "text/plain"}}}]}}"#
        try Data(one.utf8).write(to: folder.appendingPathComponent("one.har"))
        let written = try CLIRunner.run(["convert", "har", "one.har", "--out", "mocks"], in: folder)
        #expect(written.stdout == "moonmock: wrote mocks/mocks.lua (1 rule) and 0 fixtures\n", "\(written.stdout)\(written.stderr)")
    }

    @Test("serve --cors-credentials lets pages send cookies; alone it is a usage error")
    func corsCredentials() async throws {
        let (server, _, text) = try launchServe(["examples/mocks.lua", "--port", "0", "--no-watch", "--cors", "--cors-credentials"], until: "\n")
        defer { server.stop() }
        let port = try #require(text.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) })
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/users/7")!)
        request.setValue("http://localhost:3000", forHTTPHeaderField: "Origin")
        let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == "http://localhost:3000")
        #expect(http.value(forHTTPHeaderField: "Access-Control-Allow-Credentials") == "true")
        let alone = try CLIRunner.run(["serve", "examples/mocks.lua", "--cors-credentials"])
        #expect(alone.status == 64 && alone.stderr.contains("--cors-credentials needs --cors or --cors-origin ORIGIN"), "\(alone.stderr)")
    }
}

@Suite("moonmock request through mock.proxy")
struct RequestProxyTests {
    @Test("request forwards a mock.proxy rule to its upstream and prints its answer, as the in-process door does")
    func forwards() throws {
        let upstream = try LoopbackServer(body: "from the upstream")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"mock.get("/api/*", mock.proxy("http://127.0.0.1:\#(upstream.port)"))"#.utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        let r = try CLIRunner.run(["request", "mocks.lua", "GET", "/api/items"], in: folder)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("HTTP/1.1 200 OK\r\n") && r.stdout.hasSuffix("from the upstream"), "\(r.stdout)")
        #expect(r.stderr.contains("* mock.proxy: forwarded to http://127.0.0.1:\(upstream.port)/api/items"), "\(r.stderr)")
        try Data(#"mock.get("/api/*", mock.proxy("http://127.0.0.1:1"))"#.utf8).write(to: folder.appendingPathComponent("mocks.lua"))
        let down = try CLIRunner.run(["request", "mocks.lua", "GET", "/api/items", "--fail"], in: folder)
        #expect(down.stdout.hasPrefix("HTTP/1.1 502") && down.status == 22, "\(down.stdout)")
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("moonmock convert")
struct ConvertCommandTests {
    static let bundle = #"""
    [
      { "request": { "url": "://api.example.com/users" }, "response": { "code": 200, "file": "users.json" } },
      { "request": { "url": "://api.example.com/users" }, "response": { "code": 500, "file": "users.json" } },
      { "request": { "method": "POST", "url": "://api.example.com/users" }, "response": { "code": 201, "headers": { "X-Id": "9" } } },
      { "request": { "url": "://api.example.com/search", "parameters": { "q": null, "page": "2" } },
        "response": { "code": 200, "file": "page2.txt", "mime_type": "text/plain" } }
    ]
    """#

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-convert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("happy"), withIntermediateDirectories: true)
        try Data(Self.bundle.utf8).write(to: dir.appendingPathComponent("happy/bundle.json"))
        try Data(#"[{"id":1}]"#.utf8).write(to: dir.appendingPathComponent("happy/users.json"))
        try Data("page two".utf8).write(to: dir.appendingPathComponent("happy/page2.txt"))
        try Data(#"mock.bundle("happy")"#.utf8).write(to: dir.appendingPathComponent("original.lua"))
        return dir
    }

    /// Status line and body of one request, without headers (content types may differ).
    func answer(_ script: String, _ method: String, _ url: String, in dir: URL) throws -> String {
        let r = try CLIRunner.run(["request", script, method, url], in: dir)
        let statusLine = r.stdout.split(separator: "\r\n").first.map(String.init) ?? ""
        let body = r.stdout.components(separatedBy: "\r\n\r\n").dropFirst().joined()
        // Unanswered: 404, or 405 where rules have the path for other methods (a bundle's rule takes any method).
        return statusLine.hasPrefix("HTTP/1.1 404") || statusLine.hasPrefix("HTTP/1.1 405") ? "404" : statusLine + "|" + body
    }

    @Test("a converted Mock-Bundle answers like the bundle")
    func bundle() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let converted = try CLIRunner.run(["convert", "bundle", "happy"], in: dir)
        #expect(converted.status == 0, "\(converted.stderr)")
        try Data(converted.stdout.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let requests = [
            ("GET", "https://api.example.com/users"), ("GET", "http://api.example.com/users"), ("POST", "http://api.example.com/users"),
            ("PUT", "http://api.example.com/users"), ("GET", "http://api.example.com/users?x=1"),
            ("GET", "http://api.example.com/search?q=a&page=2"), ("GET", "http://api.example.com/search?q=a"),
            ("GET", "http://api.example.com/search?q=a&page=3"), ("GET", "http://api.example.com/search?q=a&z=1"),
            ("GET", "http://api.example.com/search"), ("GET", "http://other.example.com/users"),
        ]
        var answers: [String] = []
        for (method, url) in requests {
            let original = try answer("original.lua", method, url, in: dir)
            #expect(try answer("mocks.lua", method, url, in: dir) == original, "\(method) \(url)")
            answers.append(original)
        }
        #expect(answers.filter { $0 != "404" }.count == 5)
    }

    @Test("a converted stubs folder loads with the same endpoints")
    func stubs() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("stubs/getUser"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: dir.appendingPathComponent("stubs/getUser/ok.200.json"))
        let converted = try CLIRunner.run(["convert", "stubs", "stubs", "--endpoint", "getUser=GET /users/:id"], in: dir)
        #expect(converted.status == 0)
        #expect(converted.stdout.contains(#"mock.stubs("stubs", {"#))
        try Data(converted.stdout.utf8).write(to: dir.appendingPathComponent("mocks.lua"))
        let check = try CLIRunner.run(["check", "mocks.lua"], in: dir)
        #expect(check.status == 0)
        #expect(check.stdout.contains("getUser") && check.stdout.contains("variants: ok.200.json, timeout"))
    }

    @Test("convert usage errors exit 64", arguments: [[], ["bundle"], ["zip", "x"], ["stubs", "dir"], ["bundle", "/abs"], ["bundle", "../up"]])
    func usage(_ arguments: [String]) throws {
        let r = try CLIRunner.run(["convert"] + arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains("usage: moonmock convert"))
    }
}

@Suite("moonmock convert har")
struct ConvertHARCommandTests {
    static let har = CLIRunner.packageRoot.appendingPathComponent("Tests/Fixtures/import/api.har").path

    @Test("--out writes mocks.lua and fixtures that check and answer as the HAR did; without it the script is printed whole")
    func convertHAR() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-har-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try CLIRunner.run(["convert", "har", Self.har, "--out", out.path, "--redact-json", "token", "--host", "api.example.com"])
        #expect(r.status == 0)
        #expect(r.stdout == "moonmock: wrote \(out.path)/mocks.lua (7 rules) and 1 fixture; 1 entry not converted, listed at its top\n", "\(r.stdout)")
        let check = try CLIRunner.run(["check", "mocks.lua"], in: out)
        #expect(check.status == 0, "\(check.stderr)")
        let user = try CLIRunner.run(["request", "mocks.lua", "GET", "/users/7"], in: out)
        #expect(user.stdout.hasPrefix("HTTP/1.1 200 OK\r\n") && user.stdout.hasSuffix(#"{"id": 7, "name": "Ana", "roles": [], "manager": null}"#), "\(user.stdout)")
        let users = try CLIRunner.run(["request", "mocks.lua", "GET", "/users?page=2&sort=name"], in: out)
        #expect(users.stdout.contains(#""token": "REDACTED""#) && !users.stdout.contains("secret-1"))

        let printed = try CLIRunner.run(["convert", "har", Self.har])
        #expect(printed.status == 0 && printed.stdout.hasPrefix("-- Converted by `moonmock convert har api.har` from 9 requests.\n"))
        #expect(printed.stdout.contains(#"mock.get("/avatar.png", mock.text("\137PNG\r\n"#))
        #expect(try CLIRunner.run(["convert", "har"]).status == 64)
        #expect(try CLIRunner.run(["convert", "har", Self.har, "--hots", "x"]).stderr.contains("did you mean '--host'"))
        let missing = try CLIRunner.run(["convert", "har", "nope.har"])
        #expect(missing.status == 1 && missing.stderr == "moonmock: cannot read nope.har\n")
    }
}

@Suite("moonmock convert wiremock")
struct ConvertWireMockCommandTests {
    @Test("--out writes a script that checks and answers as the mappings do; a folder without mappings/ says so")
    func convertWireMock() throws {
        let source = CLIRunner.packageRoot.appendingPathComponent("Tests/Fixtures/import/wiremock").path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-wm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try CLIRunner.run(["convert", "wiremock", source, "--out", out.path])
        #expect(r.status == 0 && r.stdout.hasSuffix("(8 rules) and 1 fixture; 1 item not converted, listed at its top\n"), "\(r.stdout)\(r.stderr)")
        #expect(try CLIRunner.run(["check", "mocks.lua"], in: out).status == 0)
        let cart = try CLIRunner.run(["request", "mocks.lua", "GET", "/cart"], in: out)
        #expect(cart.stdout.hasSuffix(#"{"items":[]}"#))
        let empty = try CLIRunner.run(["convert", "wiremock", out.path])
        #expect(empty.status == 1 && empty.stderr.contains("no mappings/ folder"))
    }
}

@Suite("moonmock convert openapi")
struct ConvertOpenAPICommandTests {
    @Test("YAML and JSON documents: scripts that check and answer their examples; usage and read errors")
    func convertOpenAPI() throws {
        for (file, rules) in [("petstore-3.0.yaml", 5), ("orders-3.1.json", 2)] {
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-oa-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: out) }
            let spec = CLIRunner.packageRoot.appendingPathComponent("Tests/Fixtures/import/\(file)").path
            let r = try CLIRunner.run(["convert", "openapi", spec, "--out", out.path])
            #expect(r.status == 0 && r.stdout.contains("(\(rules) rules)"), "\(r.stdout)\(r.stderr)")
            let check = try CLIRunner.run(["check", "mocks.lua"], in: out)
            #expect(check.status == 0 && check.stdout.contains("variants:"), "\(check.stdout)")
        }
        let pet = try CLIRunner.run(["convert", "openapi", CLIRunner.packageRoot.appendingPathComponent("Tests/Fixtures/import/petstore-3.0.yaml").path])
        #expect(pet.stdout.contains(#"["404"] = function(req) return mock.json(mock.schema("fixtures/post_pets.schema.json", { seed_key = req.path }), { status = 404 }) end,"#), "\(pet.stdout)")
        #expect(try CLIRunner.run(["convert", "openapi"]).status == 64)
        let missing = try CLIRunner.run(["convert", "openapi", "nope.yaml"])
        #expect(missing.status == 1 && missing.stderr == "moonmock: cannot read nope.yaml\n")
    }
}

import Foundation
import MoonmockCore
import MoonmockImport
import MoonmockScript
import Testing

/// Tests/Fixtures/import, written for these tests.
let importFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/import").standardizedFileURL

/// A fresh folder, removed when the test process ends.
func scratchFolder(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

extension Engine {
    func answer(_ method: String, _ url: String, body: String = "") -> (status: Int, body: [UInt8], headers: HTTPHeaders) {
        let r = handle(MockRequest(method: method, url: url, body: Array(body.utf8))).response
        return (r.status, r.body, r.headers)
    }
}

@Suite("HAR to mocks.lua")
struct HARImportTests {
    static func converted(inline: Bool = false, keepHost: Bool = false) throws -> (ScriptWriter.Output, [RecordedExchange], [WriterNote], URL) {
        let data = try Data(contentsOf: importFixtures.appendingPathComponent("api.har"))
        let (exchanges, notes) = try HARImporter.read(data, name: "api.har")
        var options = ScriptWriter.Options(title: "test")
        options.useFixtures = !inline
        options.keepHost = keepHost
        options.redactJSONKeys = ["token"]
        let output = ScriptWriter(options: options).write(exchanges, notes: notes)
        let folder = try scratchFolder("har")
        try output.save(in: folder)
        return (output, exchanges, notes, folder)
    }

    @Test("each distinct request is a rule in first-seen order; replaying the HAR gives its statuses and bodies",
          arguments: [false, true])
    func replay(inline: Bool) throws {
        let (output, exchanges, notes, folder) = try Self.converted(inline: inline)
        #expect(notes.map(\.message) == ["GET https://api.example.com/aborted: no response status (the request failed or was aborted)"])
        #expect(output.script.contains("-- Not converted (1):\n--   api.har: entry 10: GET https://api.example.com/aborted"))
        let engine = Engine()
        try engine.loadScript(file: folder.appendingPathComponent("mocks.lua").path)
        #expect(engine.scriptRuleSet.rules.map(\.id) == ["GET /users/7", "GET /users?page=2&sort=name", "graphql GetViewer", "GET /avatar.png",
                                                         "GET /jobs/1", "DELETE /users/7", "GET /old", "GET /hello.txt"])
        // Each request again, in order (the job's two answers come as a sequence), from another host.
        for exchange in exchanges {
            let url = "http://127.0.0.1:8080" + exchange.request.path + (exchange.request.rawQuery.map { "?" + $0 } ?? "")
            let answer = engine.answer(exchange.request.method, url, body: String(decoding: exchange.request.body, as: UTF8.self))
            #expect(answer.status == exchange.status, "\(exchange.request.method) \(url)")
            if exchange.request.path == "/users" {
                // Redacted, and pretty in its fixture: the same JSON otherwise.
                let json = try JSONValue(parsing: answer.body)
                #expect(json["users"]?[0]?["token"] == .string("REDACTED") && json["users"]?[6]?["email"] == .string("user7@example.com"))
            } else if exchange.headers["content-type"]?.contains("json") == true {
                #expect(try JSONValue(parsing: answer.body) == JSONValue(parsing: exchange.body), "\(url)")
            } else {
                #expect(answer.body == exchange.body, "\(url)")
            }
        }
        let user = engine.answer("GET", "http://localhost/users/7")
        // A session cookie keeps its name and attributes, its value redacted.
        #expect(user.headers["set-cookie"] == "sid=REDACTED; HttpOnly" && user.headers["x-ratelimit-remaining"] == "41")
        #expect(user.headers["date"] == nil && user.headers["server"] == nil)
        // An absolute URL back at the API is rebuilt on whichever origin answers.
        #expect(engine.answer("GET", "http://localhost/old").headers["location"] == "http://localhost/new")
        #expect(engine.answer("GET", "http://127.0.0.1:9000/old").headers["location"] == "http://127.0.0.1:9000/new")
        #expect(engine.answer("GET", "http://localhost/avatar.png").headers["content-type"] == "image/png")
        #expect(engine.answer("GET", "http://localhost/users?page=3").status == 404)
    }

    @Test("the script reads as a person would write it: small JSON inline, large bodies and binary in fixtures named after the route")
    func readable() throws {
        let (output, _, _, folder) = try Self.converted()
        let script = output.script
        // JSON as the API wrote it (key order, spacing) where a table would reorder it; a table where it would not.
        #expect(script.contains("-- from api.har: entry 1\nmock.get(\"/users/7\", mock.json.raw([[{\"id\": 7, \"name\": \"Ana\", \"roles\": [], \"manager\": null}]], "
                                + "{ headers = { [\"Set-Cookie\"] = \"sid=REDACTED; HttpOnly\", [\"X-RateLimit-Remaining\"] = \"41\" } }), "
                                + "{ exact_query = true })"), "\(script)")
        #expect(script.contains(#"mock.graphql("GetViewer", mock.json.raw([[{"data": {"viewer": {"id": "v1"}}}]], { headers = { ["Content-Type"] = "application/json" } }))"#))
        #expect(script.contains("mock.get(\"/avatar.png\", mock.file(\"fixtures/get_avatar_png.png\"), { exact_query = true })"))
        #expect(script.contains(#"mock.get("/users", mock.file("fixtures/get_users.json"), { name = "GET /users?page=2&sort=name", query = { page = "2", sort = "name" }, exact_query = true })"#))
        #expect(script.contains("answered differently 2 times"))
        #expect(script.contains("mock.sequence {\n" + #"  mock.json({ state = "pending" }, { status = 202, headers = { ["Content-Type"] = "application/json" } }),"#))
        #expect(script.contains("mock.delete(\"/users/7\", mock.status(204), { exact_query = true })"))
        #expect(output.fixtures.map(\.path).sorted() == ["fixtures/get_avatar_png.png", "fixtures/get_users.json"])
        // The body as the API sent it, key order included, the redacted value in its place.
        let fixture = try String(contentsOf: folder.appendingPathComponent("fixtures/get_users.json"), encoding: .utf8)
        #expect(fixture.hasPrefix(#"{"users": [{"id": 1, "name": "User 1", "email": "user1@example.com", "token": "REDACTED"}"#), "\(fixture)")
    }

    @Test("--keep-host pins each rule to the scheme and host it came from")
    func keepHost() throws {
        let (output, _, _, folder) = try Self.converted(keepHost: true)
        #expect(output.script.contains("url = \"https://api.example.com/users/7\""))
        let engine = Engine()
        try engine.loadScript(file: folder.appendingPathComponent("mocks.lua").path)
        #expect(engine.answer("GET", "https://api.example.com/users/7").status == 200)
        #expect(engine.answer("GET", "http://127.0.0.1/users/7").status == 404)
    }

    @Test("a file that is not a HAR says so")
    func notHAR() throws {
        #expect(throws: HARImporter.Failure.self) { try HARImporter.read(Data("[1]".utf8), name: "x.har") }
        #expect(throws: HARImporter.Failure.self) { try HARImporter.read(Data("nope".utf8), name: "x.har") }
    }
}

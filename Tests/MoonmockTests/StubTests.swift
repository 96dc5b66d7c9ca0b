import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moonmock
import MoonmockCore
import Testing

@Suite("Swift stubs")
struct StubTests {
    @Test("URI templates capture values; path-only templates match any host")
    func uriTemplates() async throws {
        let moonmock = Moonmock()
        moonmock.stub(.uri("/{user}/{repo}"), .dynamic { _, p in .json(.object(["user": .string(p["user"]!), "repo": .string(p["repo"]!)])) })
        moonmock.stub(.http(.put, uri: "https://api.example.com/items/{id}.json"), .dynamic { _, p in .text("put " + p["id"]!) })
        moonmock.stub(.uri("/search?q={q}"), .dynamic { _, p in .text("q=" + p["q"]!) })
        let session = moonmock.makeSession()
        #expect(try await session.fetch("https://github.test/apple/swift").0 == #"{"repo":"swift","user":"apple"}"#)
        #expect(try await session.fetch("http://other.test/a/b").0 == #"{"repo":"b","user":"a"}"#)
        #expect(try await session.fetch("https://api.example.com/items/42.json", method: "PUT").0 == "put 42")
        #expect(try await session.fetch("http://x.test/search?q=hello%20world").0 == "q=hello world")
        await #expect(throws: MoonmockError.self) { try await session.fetch("https://api.example.com/v2/items/42.json", method: "PUT") }
        await #expect(throws: MoonmockError.self) { try await session.fetch("http://x.test/a/b/c") }
    }

    @Test("builders: json, jsonData, text, http, file, redirect, failure, delay")
    func builders() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-stub-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("<p>hi</p>".utf8).write(to: folder.appendingPathComponent("page.html"))

        let moonmock = Moonmock()
        moonmock.stub(.path("/json"), .json(["b": 1, "a": [true, "x"]] as [String: Any], status: 201))
        moonmock.stub(.path("/value"), .json(.object(["v": .integer(1)])))
        moonmock.stub(.path("/data"), .jsonData(Data("[1,2]".utf8)))
        moonmock.stub(.path("/text"), .text("hello", status: 418))
        moonmock.stub(.path("/http"), .http(status: 204, headers: ["X-Trace": "t"]))
        moonmock.stub(.path("/file"), .file(folder.appendingPathComponent("page.html")))
        moonmock.stub(.path("/missing"), .file(folder.appendingPathComponent("nope.json")))
        moonmock.stub(.path("/redirect"), .redirect("http://x.test/data", status: 307))
        moonmock.stub(.path("/moved"), .redirect("http://x.test/data"))
        moonmock.stub(.path("/offline"), .failure(URLError(.notConnectedToInternet)))
        moonmock.stub(.path("/late"), .text("late").delayed(by: 0.2))
        let s = moonmock.makeSession()

        let (json, jr) = try await s.fetch("http://x.test/json")
        #expect(jr.statusCode == 201 && json == #"{"a":[true,"x"],"b":1}"# && jr.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
        #expect(jr.textEncodingName == "utf-8")   // as Mockingjay's JSON builders declare it
        #expect(try await s.fetch("http://x.test/value").0 == #"{"v":1}"#)
        #expect(try await s.fetch("http://x.test/data").0 == "[1,2]")
        let (text, tr) = try await s.fetch("http://x.test/text")
        #expect(text == "hello" && tr.statusCode == 418)
        let (_, hr) = try await s.fetch("http://x.test/http")
        #expect(hr.statusCode == 204 && hr.value(forHTTPHeaderField: "X-Trace") == "t")
        let (page, pr) = try await s.fetch("http://x.test/file")
        #expect(page == "<p>hi</p>" && pr.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")
        let (missing, mr) = try await s.fetch("http://x.test/missing")
        #expect(mr.statusCode == 500 && missing.contains("fixture not found"))
        // Followed, as URLSession follows a server's redirect.
        let (redirected, rr) = try await s.fetch("http://x.test/redirect")
        #expect(rr.statusCode == 200 && redirected == "[1,2]" && rr.url?.absoluteString == "http://x.test/data")
        // Without a status, a redirect is a 301 (as Mockingjay's).
        #expect(try await s.fetch("http://x.test/moved").0 == "[1,2]")
        #expect(moonmock.requests.first { $0.path == "/moved" }?.status == 301)
        let offline = await #expect(throws: URLError.self) { try await s.fetch("http://x.test/offline") }
        #expect(offline?.code == .notConnectedToInternet)
        let started = Date()
        #expect(try await s.fetch("http://x.test/late").0 == "late")
        #expect(Date().timeIntervalSince(started) >= 0.2)
    }

    @Test("stubs come before script rules, newest first; handles remove one, removeAllStubs the rest")
    func precedence() async throws {
        let moonmock = try makeMoonmock()
        let s = moonmock.makeSession()
        #expect(try await s.fetch("http://x.test/source").0 == "from script")
        let first = moonmock.stub(.path("/source"), .text("stub 1"))
        #expect(try await s.fetch("http://x.test/source").0 == "stub 1")
        let second = moonmock.stub(.everything, .text("stub 2"), name: "catch-all")
        #expect(try await s.fetch("http://x.test/source").0 == "stub 2")
        #expect(second.name == "catch-all")
        #expect(moonmock.removeStub(second))
        #expect(!moonmock.removeStub(second))
        #expect(try await s.fetch("http://x.test/source").0 == "stub 1")
        moonmock.removeAllStubs()
        #expect(try await s.fetch("http://x.test/source").0 == "from script")
        _ = first
    }

    @Test("matchers combine with && || !, headers and queries")
    func combinators() async throws {
        let moonmock = Moonmock()
        moonmock.stub(.path("/me") && .header("Authorization"), .text("authorized"))
        moonmock.stub(.path("/me") && !.header("Authorization"), .http(status: 401))
        moonmock.stub(.query("page", "2") || .query("all"), .text("paged"))
        let s = moonmock.makeSession()
        #expect(try await s.fetch("http://x.test/me", headers: ["Authorization": "Bearer t"]).0 == "authorized")
        #expect(try await s.fetch("http://x.test/me").1.statusCode == 401)
        #expect(try await s.fetch("http://x.test/list?page=2").0 == "paged")
        #expect(try await s.fetch("http://x.test/list?all").0 == "paged")
    }

    @Test("one-call file mocks with method, status, delay and a GraphQL body predicate")
    func fileMocks() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-fixtures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"data":{"user":{"id":"1"}}}"#.utf8).write(to: folder.appendingPathComponent("user_success.json"))
        try Data(#"{"errors":[{"message":"no"}]}"#.utf8).write(to: folder.appendingPathComponent("viewer_error.json"))
        try Data(#"[{"id":1}]"#.utf8).write(to: folder.appendingPathComponent("users.json"))

        let moonmock = Moonmock()
        moonmock.fixturesDirectory = folder
        try moonmock.mock(url: "https://api.example.com/graphql", method: .post, jsonFile: "user_success",
                          body: .graphQL(operationName: "GetUser"))
        try moonmock.mock(url: "https://api.example.com/graphql", method: .post, status: 500, jsonFile: "viewer_error.json",
                          body: .json { $0["operationName"] == .string("GetViewer") })
        try moonmock.mock(url: "/users", status: 200, file: folder.appendingPathComponent("users.json"), delay: 0.1)
        #expect(throws: MoonmockError.self) { try moonmock.mock(url: "/x", jsonFile: "absent") }

        let s = moonmock.makeSession()
        let gql = Data(#"{"operationName":"GetUser","variables":{}}"#.utf8)
        #expect(try await s.fetch("http://api.example.com/graphql", method: "POST", body: gql).0 == #"{"data":{"user":{"id":"1"}}}"#)
        let batch = Data(#"[{"operationName":"Other"},{"operationName":"GetViewer"}]"#.utf8)
        let (err, er) = try await s.fetch("https://api.example.com/graphql", method: "POST", body: batch)
        #expect(er.statusCode == 500 && err.contains("errors"))
        await #expect(throws: MoonmockError.self) { try await s.fetch("https://api.example.com/graphql", method: "GET") }
        await #expect(throws: MoonmockError.self) { try await s.fetch("https://other.example.com/graphql", method: "POST", body: gql) }
        let started = Date()
        #expect(try await s.fetch("http://anything.test/users").0 == #"[{"id":1}]"#)
        #expect(Date().timeIntervalSince(started) >= 0.1)
    }
}

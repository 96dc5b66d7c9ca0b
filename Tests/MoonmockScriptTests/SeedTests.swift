import Foundation
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("Seed formats: Mock-Bundles and stub folders")
struct SeedTests {
    static let bundle = #"""
    [
      { "request": { "url": "://api.example.com/users" }, "response": { "code": 200, "file": "users.json" } },
      { "request": { "url": "://api.example.com/users" }, "response": { "code": 500, "file": "never.json" } },
      { "request": { "method": "POST", "url": "://api.example.com/users" }, "response": { "code": 201, "headers": { "X-Id": "9" } } },
      { "request": { "url": "://api.example.com/search", "parameters": { "q": null, "page": "2" } },
        "response": { "code": 200, "file": "page2.txt", "mime_type": "text/plain" } },
      { "request": { "url": "://api.example.com:8443/port" }, "response": { "code": 204 } }
    ]
    """#

    func bundleFolder(handleAll: Bool = false) throws -> (Engine, ScriptFolder) {
        try makeEngine("mock.bundle(\"happy\"\(handleAll ? ", { handle_all = true }" : ""))\nmock.get(\"/after\", \"after\")", files: [
            "happy/bundle.json": Self.bundle, "happy/users.json": #"[{"id":1}]"#, "happy/never.json": "x", "happy/page2.txt": "page two",
            "empty/bundle.json": #"[{ "request": { "url": "://api.example.com/users" }, "response": { "code": 200, "file": "none.json" } }]"#,
            "empty/none.json": "[]",
        ])
    }

    @Test("bundle entries: scheme-agnostic, GET by default, first entry wins, mime_type and headers")
    func bundleBasics() throws {
        let (engine, _) = try bundleFolder()
        for scheme in ["http", "https"] {
            let ex = engine.send("GET", "\(scheme)://api.example.com/users")
            #expect(ex.status == 200 && ex.text == #"[{"id":1}]"#)
            #expect(ex.contentType == "application/octet-stream")   // a file without mime_type, as MockingBird serves it
        }
        let post = engine.send("POST", "http://api.example.com/users")
        #expect(post.status == 201 && post.response.headers["x-id"] == "9")
        #expect(engine.send("PUT", "http://api.example.com/users").status == 404)
        #expect(engine.send("GET", "http://other.example.com/users").status == 404)
        #expect(engine.send("GET", "http://api.example.com:8443/port").status == 204)
        #expect(engine.send("GET", "http://api.example.com/port").status == 404)
        #expect(engine.send("GET", "http://x.test/after").text == "after")
    }

    @Test("bundle parameters: undeclared items fail, null is any value, no query matches only parameterless entries")
    func bundleParameters() throws {
        let (engine, _) = try bundleFolder()
        let ok = engine.send("GET", "http://api.example.com/search?q=swift&page=2")
        #expect(ok.status == 200 && ok.text == "page two" && ok.contentType == "text/plain")
        #expect(engine.send("GET", "http://api.example.com/search?q=anything").status == 200)      // declared page may be missing
        #expect(engine.send("GET", "http://api.example.com/search?q=a&page=3").status == 404)      // wrong value
        #expect(engine.send("GET", "http://api.example.com/search?q=a&extra=1").status == 404)     // undeclared item
        #expect(engine.send("GET", "http://api.example.com/search").status == 404)                 // no query
        #expect(engine.send("GET", "http://api.example.com/users?debug=1").status == 404)          // extra item on a parameterless entry
        let miss = engine.send("GET", "http://api.example.com/search?q=a&extra=1")
        #expect(miss.nearMisses.first?.mismatches == ["bundle: no entry for GET ://api.example.com/search?q=a&extra=1"])
    }

    @Test("handle_all answers 501 naming the bundle")
    func handleAll() throws {
        let (engine, folder) = try bundleFolder(handleAll: true)
        let ex = engine.send("GET", "http://api.example.com/nothing")
        #expect(ex.status == 501 && ex.contentType == "text/plain; charset=utf-8")
        #expect(ex.text.contains(folder.url.appendingPathComponent("happy").standardizedFileURL.path))
        #expect(engine.send("GET", "http://x.test/after").status == 501)   // nothing falls through
    }

    @Test("switching the bundle at runtime swaps the whole set; a reload keeps the switch")
    func switching() throws {
        let folder = try ScriptFolder([
            "mocks.lua": #"mock.bundle("happy")"#,
            "happy/bundle.json": Self.bundle, "happy/users.json": #"[{"id":1}]"#, "happy/never.json": "x", "happy/page2.txt": "p",
            "empty/bundle.json": #"[{ "request": { "url": "://api.example.com/users" }, "response": { "code": 200, "file": "none.json" } }]"#,
            "empty/none.json": "[]",
        ])
        let engine = Engine()
        let host = try ScriptHost(file: folder.path("mocks.lua"), engine: engine)
        #expect(engine.send("GET", "http://api.example.com/users").text == #"[{"id":1}]"#)
        #expect(try engine.bundles.switchTo("empty") == "bundle happy")
        #expect(engine.send("GET", "http://api.example.com/users").text == "[]")
        #expect(engine.send("POST", "http://api.example.com/users").status == 404)
        #expect(throws: (any Error).self) { try engine.bundles.switchTo("missing") }
        #expect(throws: (any Error).self) { try engine.bundles.switchTo("../outside") }
        #expect(host.reload().ok)
        #expect(engine.send("GET", "http://api.example.com/users").text == "[]")
    }

    @Test("a malformed bundle.json names the file and the entry", arguments: [
        (#"{"not": "an array"}"#, "expected an array of entries"),
        (#"[{"request": {"url": "://a/b"}, "response": {"code": 200}}, {"request": {"url": "http://a/b"}, "response": {"code": 200}}]"#,
         "entry 1: request.url must start with \"://\""),
        (#"[{"request": {"url": "://a/b"}, "response": {"code": 200, "file": "gone.json"}}]"#, "entry 0: response.file 'gone.json' not found"),
        (#"[{"request": {"url": "://a/b"}}]"#, "entry 0: needs \"request\" and \"response\""),
        ("[{,]", "invalid JSON at byte 2"),
    ])
    func malformed(_ json: String, _ expected: String) throws {
        let error = try #require(try loadError(#"mock.bundle("b")"#, files: ["b/bundle.json": json]))
        #expect(error.message.hasPrefix("mocks.lua:1: mock.bundle: "))
        #expect(error.message.contains("b/bundle.json: "))
        #expect(error.message.contains(expected), "got \(error.message)")
    }

    // MARK: stub folders

    func stubsEngine() throws -> (Engine, ScriptFolder) {
        try makeEngine("""
        mock.stubs("stubs", { getUser = "GET /users/:id", listUsers = "GET /users" })
        mock.get("/users/:id", "fallback")
        """, files: [
            "stubs/getUser/ok.200.json": #"{"id":1}"#,
            "stubs/getUser/missing.404.json": #"{"error":"no"}"#,
            "stubs/getUser/raw.201": "raw body",
            "stubs/listUsers/ok.200.json": "[]",
            "stubs/maintenance.503.html": "<h1>down</h1>",
        ])
    }

    @Test("no stub is active at first: requests fall through to later rules")
    func inactive() throws {
        let (engine, _) = try stubsEngine()
        #expect(engine.send("GET", "/users/1").text == "fallback")
        #expect(engine.variants.active(for: "getUser") == nil)
    }

    @Test("activating by file name or short name; root stubs for every endpoint; deactivate and reset")
    func activation() throws {
        let (engine, _) = try stubsEngine()
        try engine.variants.activate("ok.200.json", for: "getUser")
        let ok = engine.send("GET", "/users/1")
        #expect(ok.status == 200 && ok.text == #"{"id":1}"# && ok.contentType == "application/json")
        try engine.variants.activate("missing", for: "getUser")
        #expect(engine.send("GET", "/users/1").status == 404)
        try engine.variants.activate("raw", for: "getUser")
        let raw = engine.send("GET", "/users/1")
        #expect(raw.status == 201 && raw.text == "raw body" && raw.contentType == nil)
        try engine.variants.activate("maintenance", for: "listUsers")
        let down = engine.send("GET", "/users")
        #expect(down.status == 503 && down.contentType == "text/html; charset=utf-8")
        #expect(throws: (any Error).self) { try engine.variants.activate("nope", for: "getUser") }
        try engine.variants.deactivate("getUser")
        #expect(engine.send("GET", "/users/1").text == "fallback")
        engine.variants.reset()
        #expect(engine.send("GET", "/users").status == 404)
        #expect(engine.variants.list().first { $0.rule == "getUser" }?.names == ["maintenance.503.html", "missing.404.json", "ok.200.json", "raw.201", "timeout"])
    }

    @Test("the built-in timeout stub and the global delay")
    func timeoutAndDelay() throws {
        let (engine, _) = try stubsEngine()
        try engine.variants.activate("timeout", for: "getUser")
        #expect(engine.send("GET", "/users/1").response.fault == .timeout)
        try engine.variants.activate("ok", for: "getUser")
        engine.variants.stubDelayMilliseconds = 250
        #expect(engine.send("GET", "/users/1").delayMilliseconds == 250)
        engine.variants.reset()   // no stub active, and no global delay: as moya-stubber's reset
        #expect(engine.variants.stubDelayMilliseconds == 0)
        try engine.variants.activate("ok", for: "getUser")
        #expect(engine.send("GET", "/users/1").delayMilliseconds == 0)
    }

    @Test("a badly named stub file is reported with its path and the expected pattern")
    func badName() throws {
        let error = try #require(try loadError(#"mock.stubs("s", { a = "GET /a" })"#, files: ["s/a/notes.txt": "x"]))
        #expect(error.message.hasPrefix("mocks.lua:1: mock.stubs: stub file '"))
        #expect(error.message.contains("s/a/notes.txt' does not follow NAME.STATUS[.EXT] (for example ok.200.json or error.500)"))
        let unknown = try #require(try loadError(#"mock.stubs("s", { a = "GET /a" })"#, files: ["s/b/ok.200": "x"]))
        #expect(unknown.message.contains("is not one of the endpoints (a)"))
    }
}

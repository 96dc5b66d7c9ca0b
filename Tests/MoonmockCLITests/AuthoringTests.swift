import Foundation
import MoonmockProcessSupport
import MoonmockTestSupport
import Testing

/// `moonmock test`, `init` and `types`, run as a user runs them: the built binary.
@Suite("moonmock test, init and types")
struct AuthoringTests {
    func folder(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonmock-spec-\(UUID().uuidString)")
        for (name, text) in files {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return dir
    }

    static let script = """
        mock.get("/count", function() return { n = mock.state:incr("n") } end)
        mock.get("/slow", mock.json({ ok = true }, { delay = 2000 }))
        mock.get("/session", function()
          if mock.state:get("session") then return { live = true } end
          mock.state:set("session", "s1", 5)
          return mock.status(201, { created = true })
        end)
        mock.get("/seq", mock.sequence { "one", "two" })
        """

    @Test("passing specs: a line per test, the closing count, exit 0; each test starts from fresh state and sequences")
    func passing() throws {
        let dir = try folder(["mocks.lua": Self.script, "mocks_test.lua": """
            test("first", function()
              expect(request{ url = "/count" }.json):equals{ n = 1 }
              expect(request("/seq").body):equals("one")
            end)
            test("second starts again", function()
              expect(request{ url = "/count" }.json):equals{ n = 1 }
              expect(request("/seq").body):equals("one")
              expect(state:get("n")):equals(1)
            end)
            test("delays and TTLs move with the clock, not the wall", function()
              expect(request{ url = "/session" }.status):equals(201)
              expect(request{ url = "/session" }.json):equals{ live = true }
              advance(4000)
              expect(request{ url = "/slow" }.delay):equals(2000)   -- the clock moved 2 s more: the TTL of 5 s is over
              expect(request{ url = "/session" }.status):equals(201)
            end)
            """])
        let started = Date()
        let r = try CLIRunner.run(["test", "mocks.lua"], in: dir)
        #expect(Date().timeIntervalSince(started) < 10)   // a 2 s delay is reported, not waited for
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("mocks_test.lua\n  ✔ first ("))
        #expect(r.stdout.contains("  ✔ second starts again ("))
        #expect(r.stdout.hasSuffix("3 passed, 0 failed\n"))
    }

    @Test("failing specs: spec_file:line and a readable diff, exit 1, and JUnit XML")
    func failing() throws {
        let dir = try folder(["mocks.lua": Self.script, "api_test.lua": """
            test("status", function()
              expect(request{ url = "/count" }.status):equals(404)
            end)
            test("deep", function()
              expect({ user = { name = "Ada", id = 1 } }):equals{ user = { name = "Bob", id = 1 }, extra = 2 }
            end)
            test("subset", function()
              expect(request{ url = "/count" }.json):contains{ n = 1, missing = true }
            end)
            test("pattern", function()
              expect("abc"):matches("^%d+$")
            end)
            test("an error in the spec", function()
              expect(reqest{ url = "/count" })
            end)
            test("passes", function() expect(1):equals(1) end)
            """])
        let junit = dir.appendingPathComponent("report.xml").path
        let r = try CLIRunner.run(["test", "mocks.lua", "api_test.lua", "--junit", junit], in: dir)
        #expect(r.status == 1)
        let out = r.stdout
        #expect(out.contains("  ✘ status ("))
        #expect(out.contains("      api_test.lua:2: expected 404, got 200"), "\(out)")
        #expect(out.contains("      api_test.lua:5: expected {\"extra\":2,\"user\":{\"id\":1,\"name\":\"Bob\"}}"), "\(out)")
        #expect(out.contains("        extra: expected 2, missing"))
        #expect(out.contains("        user.name: expected \"Bob\", got \"Ada\""))
        #expect(out.contains("        missing: expected true, missing"))
        #expect(out.contains("api_test.lua:11: expected \"abc\" to match the pattern \"^%d+$\""))
        #expect(out.contains("api_test.lua:14: reading undefined global 'reqest'; did you mean 'request'?"))
        #expect(out.contains("  ✔ passes ("))
        #expect(out.hasSuffix("1 passed, 5 failed\n"))
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains(#"<testsuite name="api_test.lua" tests="6" failures="5""#))
        #expect(xml.contains(#"<testcase name="passes" classname="api_test.lua""#))
        #expect(xml.contains(#"<failure message="api_test.lua:2: expected 404, got 200">"#))
    }

    @Test("a script that does not load, a spec that does not, no specs, and usage errors")
    func errors() throws {
        let dir = try folder(["mocks.lua": "mock.get('/a', 42)\n", "ok/mocks.lua": "mock.get('/a', 'x')\n",
                              "ok/broken_test.lua": "test('x', function() end\n"])
        let broken = try CLIRunner.run(["test", "mocks.lua"], in: dir)
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("mocks.lua:1: mock.get: the second argument must be a handler function or a response value, got number"))
        let spec = try CLIRunner.run(["test", "ok/mocks.lua"], in: dir)
        #expect(spec.status == 1)
        #expect(spec.stdout.contains("ok/broken_test.lua\n  ✘ does not load: broken_test.lua:2:"), "\(spec.stdout)")
        try FileManager.default.removeItem(at: dir.appendingPathComponent("ok/broken_test.lua"))
        let none = try CLIRunner.run(["test", "ok/mocks.lua"], in: dir)
        #expect(none.status == 1 && none.stderr.contains("no spec files"))
        let usage = try CLIRunner.run(["test", "--juint", "x"], in: dir)
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("unknown option '--juint'; did you mean '--junit'?"))
        #expect(usage.stderr.contains("usage: moonmock test"))
    }

    @Test("init writes a working folder that check, test and luacheck accept; a second init keeps the files")
    func initFolder() throws {
        let dir = try folder([:]).appendingPathComponent("mocks")
        let r = try CLIRunner.run(["init", dir.path])
        #expect(r.status == 0)
        for name in ["mocks.lua", "fixtures/hello.json", "mocks_test.lua", ".luarc.json", ".luacheckrc", "types/moonmock.lua"] {
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path), "\(name)")
        }
        #expect(try CLIRunner.run(["check", "mocks.lua"], in: dir).status == 0)
        let t = try CLIRunner.run(["test", "mocks.lua"], in: dir)
        #expect(t.status == 0 && t.stdout.hasSuffix("3 passed, 0 failed\n"), "\(t.stdout)")
        let luarc = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent(".luarc.json"))) as? [String: Any]
        #expect(luarc?["workspace.library"] as? [String] == ["types"])
        try "-- mine\n".write(to: dir.appendingPathComponent("mocks.lua"), atomically: true, encoding: .utf8)
        let again = try CLIRunner.run(["init", dir.path])
        #expect(again.stdout.contains("kept (exists; --force overwrites): mocks.lua"))
        #expect(try String(contentsOf: dir.appendingPathComponent("mocks.lua"), encoding: .utf8) == "-- mine\n")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/luacheck") {
            try "mock.get('/a', 'x')\n".write(to: dir.appendingPathComponent("mocks.lua"), atomically: true, encoding: .utf8)
            let p = Subprocess()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/luacheck")
            p.arguments = ["--no-color", "-q", "."]
            p.currentDirectoryURL = dir
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
        }
    }

    @Test("types prints the repository's types/moonmock.lua, and --write and --path write it")
    func types() throws {
        let printed = try CLIRunner.run(["types"])
        let file = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent("types/moonmock.lua"), encoding: .utf8)
        #expect(printed.stdout == file, "types/moonmock.lua differs from the binary's: run moonmock types --write . at the root")
        let dir = try folder([:])
        let w = try CLIRunner.run(["types", "--write", dir.path])
        #expect(w.status == 0)
        #expect(try String(contentsOf: dir.appendingPathComponent("types/moonmock.lua"), encoding: .utf8) == file)
        #expect(try CLIRunner.run(["types", "--wirte", "x"]).stderr.contains("did you mean '--write'?"))
    }

    @Test("every function and value on mock, mock.state and mock.json has an annotation in types/moonmock.lua")
    func annotationsCoverTheAPI() throws {
        let dir = try folder(["names.lua": """
            local function names(t) local list = {} for k in pairs(t) do list[#list + 1] = k end table.sort(list) return list end
            mock.get("/names", function()
              return { mock = names(mock), state = names(mock.state), json = names(mock.json) }
            end)
            """])
        let r = try CLIRunner.run(["request", "names.lua", "GET", "/names"], in: dir)
        let body = try #require(r.stdout.components(separatedBy: "\r\n\r\n").last)
        let names = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: [String]])
        let types = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent("types/moonmock.lua"), encoding: .utf8)
        #expect((names["mock"] ?? []).count > 25)
        for name in names["mock"] ?? [] {
            #expect(types.contains("function mock.\(name)(") || types.contains("\nmock.\(name) = "), "mock.\(name) has no annotation")
        }
        for name in names["state"] ?? [] { #expect(types.contains("function State:\(name)("), "mock.state:\(name)") }
        for name in names["json"] ?? [] {
            #expect(types.contains("function JSON.\(name)(") || types.contains("\nJSON.\(name) = "), "mock.json.\(name)")
        }
    }

    @Test("an unknown command or flag gets did-you-mean and exits 64")
    func didYouMean() throws {
        let command = try CLIRunner.run(["serv"])
        #expect(command.status == 64 && command.stderr.contains("unknown command 'serv'; did you mean 'serve'?"))
        let flag = try CLIRunner.run(["serve", "--prot", "0"])
        #expect(flag.status == 64 && flag.stderr.contains("unknown option '--prot'; did you mean '--port'?"))
        let check = try CLIRunner.run(["check", "--unsaf", "x.lua"])
        #expect(check.stderr.contains("did you mean '--unsafe'?"))
    }

    @Test("request: a URL that is neither a path nor absolute is a usage error; the near-miss is a table on request, JSON into a pipe")
    func requestNearMiss() throws {
        let bare = try CLIRunner.run(["request", "examples/mocks.lua", "GET", "users/7"])
        #expect(bare.status == 64)
        #expect(bare.stderr.contains("URL 'users/7' is neither a path (/users/7) nor an absolute URL (http://HOST/users/7)"))
        let table = try CLIRunner.run(["request", "--table", "examples/mocks.lua", "GET", "/userz"])
        #expect(table.stdout.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        #expect(table.stdout.contains("no rule matched GET http://localhost/userz; the closest rules:\n  1. GET /users/:id  (mocks.lua:6)\n       ✘ path: expected /users/:id, got /userz\n"),
                "\(table.stdout)")
        let json = try CLIRunner.run(["request", "examples/mocks.lua", "GET", "/userz"])
        #expect(json.stdout.contains(#"{"closest":["#), "\(json.stdout)")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/script") {   // a terminal: util-linux's script gives one
            let p = Subprocess()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            p.arguments = ["-qec", "\(CLIRunner.binary.path) request examples/mocks.lua GET /userz", "/dev/null"]
            p.currentDirectoryURL = CLIRunner.packageRoot
            let out = Pipe()
            p.standardOutput = out
            p.standardInput = FileHandle.nullDevice
            try p.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(text.contains("the closest rules:"), "\(text)")
        }
    }
}

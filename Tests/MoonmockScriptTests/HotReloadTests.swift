import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore
import Testing
@testable import MoonmockScript

/// Polls `condition` every 10 ms for up to `seconds`.
func eventually(_ seconds: Double = 3, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

@Suite("Hot reload", .serialized)
struct HotReloadTests {
    func host(_ files: [String: String]) throws -> (ScriptHost, ScriptFolder, Engine) {
        let folder = try ScriptFolder(files)
        let engine = Engine()
        let host = try ScriptHost(file: folder.path("mocks.lua"), engine: engine)
        try host.startWatching()
        return (host, folder, engine)
    }

    @Test("a save by rename is picked up")
    func rename() throws {
        let (host, folder, engine) = try host(["mocks.lua": #"mock.get("/v", "one")"#])
        #expect(engine.send("GET", "/v").text == "one")
        try Data(#"mock.get("/v", "two")"#.utf8).write(to: folder.url.appendingPathComponent(".mocks.lua.swp"))
        #expect(renameFile(folder.path(".mocks.lua.swp"), folder.path("mocks.lua")) == 0)
        #expect(eventually { engine.send("GET", "/v").text == "two" && host.status.generation == 2 })
    }

    @Test("an in-place write (truncate and write) is picked up")
    func inPlace() throws {
        let (host, folder, engine) = try host(["mocks.lua": #"mock.get("/v", "one")"#])
        let handle = try FileHandle(forWritingTo: folder.url.appendingPathComponent("mocks.lua"))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(#"mock.get("/v", "in place")"#.utf8))
        try handle.close()
        #expect(eventually { engine.send("GET", "/v").text == "in place" })
        _ = host
    }

    @Test("delete and recreate is picked up")
    func deleteAndCreate() throws {
        let (host, folder, engine) = try host(["mocks.lua": #"mock.get("/v", "one")"#])
        try FileManager.default.removeItem(atPath: folder.path("mocks.lua"))
        usleep(120_000)
        #expect(engine.send("GET", "/v").text == "one")   // still serving while the file is gone
        try folder.write("mocks.lua", #"mock.get("/v", "recreated")"#)
        // The rules are installed a moment before the status is updated: wait for both.
        #expect(eventually { engine.send("GET", "/v").text == "recreated" && host.status.lastError == nil })
    }

    @Test("a change in a required module and in a fixture is picked up")
    func dependencies() throws {
        let (host, folder, engine) = try host([
            "mocks.lua": #"local m = require("lib") mock.get("/m", function() return m.value end) mock.get("/f", mock.file("data/f.json"))"#,
            "lib.lua": #"return { value = "module v1" }"#,
            "data/f.json": #"{"v":1}"#,
        ])
        #expect(engine.send("GET", "/m").text == "module v1")
        try folder.write("lib.lua", #"return { value = "module v2" }"#)
        #expect(eventually { engine.send("GET", "/m").text == "module v2" })
        try folder.write("data/f.json", #"{"v":2}"#)
        // A save may reach the watcher as two bursts under load: at least one reload per save.
        #expect(eventually { engine.send("GET", "/f").text == #"{"v":2}"# && host.status.generation >= 3 })
    }

    @Test("a new dependency of a new version is watched from then on")
    func newDependency() throws {
        let (host, folder, engine) = try host(["mocks.lua": #"mock.get("/v", "plain")"#, "extra.json": "[1]"])
        defer { withExtendedLifetime(host) {} }
        try folder.write("mocks.lua", #"mock.get("/v", mock.file("extra.json"))"#)
        #expect(eventually { engine.send("GET", "/v").text == "[1]" })
        try folder.write("extra.json", "[2]")
        #expect(eventually { engine.send("GET", "/v").text == "[2]" })
    }

    @Test("a syntax error keeps the old rules and is reported; the fix is picked up")
    func syntaxError() throws {
        let (host, folder, engine) = try host(["mocks.lua": #"mock.get("/v", "good")"#])
        try folder.write("mocks.lua", "mock.get(\"/v\",\n  \"broken\"\n")
        #expect(eventually { host.status.lastError != nil })
        #expect(host.status.lastError?.hasPrefix("mocks.lua:3:") == true)
        #expect(host.status.generation == 1)
        #expect(engine.send("GET", "/v").text == "good")
        try folder.write("mocks.lua", #"mock.get("/v", "fixed")"#)
        #expect(eventually { engine.send("GET", "/v").text == "fixed" && host.status.lastError == nil })
        #expect(host.status.generation >= 2)
    }

    @Test("mock.state survives a reload; hit counters start again")
    func stateSurvives() throws {
        let (host, folder, engine) = try host(["mocks.lua": #"mock.get("/n", function() return { n = mock.state:incr("n") } end)"#])
        _ = engine.send("GET", "/n"); _ = engine.send("GET", "/n")
        try folder.write("mocks.lua", #"mock.get("/n", function() return { n = mock.state:incr("n"), v = 2 } end)"#)
        #expect(eventually { host.status.generation == 2 })
        #expect(engine.send("GET", "/n").text == #"{"n":3,"v":2}"#)
        #expect(engine.scriptRuleSet.rules[0].hits == 1)
    }

    @Test("reload on demand reports the outcome")
    func manual() throws {
        let folder = try ScriptFolder(["mocks.lua": #"mock.get("/v", "one")"#])
        let engine = Engine()
        let host = try ScriptHost(file: folder.path("mocks.lua"), engine: engine)
        try folder.write("mocks.lua", #"mock.get("/v", "two") mock.get("/w", "w")"#)
        let outcome = host.reload()
        #expect(outcome.ok && outcome.message.hasPrefix("reloaded mocks.lua (gen 2, "))
        #expect(engine.send("GET", "/v").text == "two")
        try folder.write("mocks.lua", "error('nope')")
        let failed = host.reload()
        #expect(!failed.ok && failed.message.hasPrefix("mocks.lua:1: nope"))
        #expect(engine.send("GET", "/w").text == "w")
    }
}

/// rename(2), as an editor's atomic save does (a test method named `rename` hides the C function).
private func renameFile(_ from: String, _ to: String) -> Int32 { rename(from, to) }

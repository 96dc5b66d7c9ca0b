import Foundation
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("VM pool")
struct PoolTests {
    @Test("several VMs share mock.state and sequences and give the same answers")
    func shared() throws {
        let folder = try ScriptFolder(["mocks.lua": """
        mock.get("/n", function() return { n = mock.state:incr("n") } end)
        mock.get("/seq", mock.sequence { "one", "two", "three" })
        mock.get("/vm", function(req) return { path = req.path } end)
        """])
        let engine = Engine()
        let generation = try engine.loadScript(file: folder.path("mocks.lua"), vms: 3)
        #expect(generation.rules.count == 3)
        let results = LockedLines()
        DispatchQueue.concurrentPerform(iterations: 300) { _ in
            results.append(engine.send("GET", "/n").status == 200 ? "ok" : "bad")
        }
        #expect(results.all.count == 300 && !results.all.contains("bad"))
        #expect(try engine.state.get("n") == .integer(300))
        #expect((1...4).map { _ in engine.send("GET", "/seq").text } == ["one", "two", "three", "three"])
        #expect(engine.journal.count(rule: "GET /n") == 300)
    }

    @Test("each VM runs one request at a time while more requests than VMs arrive at once")
    func exclusive() throws {
        let folder = try ScriptFolder(["mocks.lua": """
        local inside = false
        mock.get("/x", function()
          if inside then error("this VM is already running a request") end
          inside = true
          local s = 0
          for i = 1, 20000 do s = s + i end
          inside = false
          return { sum = s }
        end)
        """])
        let engine = Engine()
        _ = try engine.loadScript(file: folder.path("mocks.lua"), vms: 2)
        // Six threads of their own (more than the VMs, more than the cores), 70 requests each.
        let results = LockedLines()
        let done = DispatchGroup()
        for _ in 0..<6 {
            done.enter()
            Thread {
                for _ in 0..<70 {
                    let r = engine.send("GET", "/x")
                    results.append(r.status == 200 ? "ok" : r.text)
                }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(results.all.count == 420)
        #expect(results.all.filter { $0 != "ok" }.isEmpty, "\(Set(results.all.filter { $0 != "ok" }))")
    }

    @Test("rules that answer with a value do not wait for a VM of the pool; handler functions do")
    func valuesNeedNoVM() throws {
        let folder = try ScriptFolder(["mocks.lua": """
        mock.get("/static", { ok = true })
        mock.get("/seq", mock.sequence { "one", "two" })
        mock.get("/fn", function() return { ok = true } end)
        """])
        let pool = try ScriptPool.load(file: folder.path("mocks.lua"), engine: Engine(), count: 2)
        let set = pool.makeRuleSet()
        #expect(set.rules[0] === pool.primary.rules[0])
        #expect(set.rules[1] === pool.primary.rules[1])
        #expect(set.rules[2] !== pool.primary.rules[2])
        let engine = Engine()
        engine.setScriptRules(set)
        #expect(engine.send("GET", "/static").text == #"{"ok":true}"#)
        #expect((1...3).map { _ in engine.send("GET", "/seq").text } == ["one", "two", "two"])
        #expect(engine.send("GET", "/fn").text == #"{"ok":true}"#)
    }

    @Test("a script whose rules change from load to load is refused for several VMs")
    func nondeterministic() throws {
        let folder = try ScriptFolder(["mocks.lua": "if math.random() < 2 then mock.get('/r' .. mock.uuid(), 'x') end"])
        let error = #expect(throws: ScriptError.self) { try Engine().loadScript(file: folder.path("mocks.lua"), vms: 2) }
        #expect(error?.message.contains("cannot run on several VMs") == true)
    }
}

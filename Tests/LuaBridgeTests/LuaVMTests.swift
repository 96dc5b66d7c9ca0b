import CLua
import Foundation
import Testing
@testable import LuaBridge

@Suite("LuaVM")
struct LuaVMTests {
    @Test("values come back with their Lua types; integers stay integers")
    func values() throws {
        let vm = try LuaVM()
        let out = try vm.evaluate("return 42, 2.5, 'hi', true, nil, 10 // 3, 2^53")
        #expect(out == [.integer(42), .number(2.5), .text("hi"), .boolean(true), .nil, .integer(3), .number(9007199254740992)])
    }

    @Test("strings are binary-safe in both directions")
    func binarySafe() throws {
        let vm = try LuaVM()
        let bytes: [UInt8] = [0x61, 0x00, 0x62, 0xFF, 0x00]
        vm.stack.push(bytes: bytes)
        lua_setglobal(vm.state, "blob")
        let out = try vm.evaluate("return #blob, blob:byte(2), blob:byte(4), blob .. '\\0'")
        #expect(out[0] == .integer(5))
        #expect(out[1] == .integer(0))
        #expect(out[2] == .integer(255))
        #expect(out[3] == .string(bytes + [0]))
    }

    @Test("a syntax error names chunk and line")
    func syntaxError() throws {
        let vm = try LuaVM()
        let error = #expect(throws: LuaError.self) {
            try vm.load("local a = 1\nlocal b = = 2\n", chunkName: "@mocks.lua")
        }
        #expect(error?.isSyntaxError == true)
        #expect(error?.message.hasPrefix("mocks.lua:2:") == true)
    }

    @Test("a runtime error carries its position and a traceback")
    func runtimeError() throws {
        let vm = try LuaVM()
        let error = #expect(throws: LuaError.self) {
            try vm.evaluate("local function f() error('boom') end\nf()", chunkName: "@x.lua")
        }
        #expect(error?.message == "x.lua:1: boom")
        #expect(error?.traceback?.contains("stack traceback:") == true)
        #expect(error?.traceback?.contains("x.lua:2") == true)
    }

    @Test("a Swift function that throws raises a Lua error that pcall can catch")
    func hostErrorIsCatchable() throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "refused by Swift" } }
        let vm = try LuaVM()
        vm.setGlobal("swiftFail") { _ in throw Refused() }
        vm.setGlobal("double") { stack in stack.push(try stack.checkInteger(1) * 2); return 1 }
        let out = try vm.evaluate("""
        local ok, err = pcall(swiftFail)
        local ok2, err2 = pcall(double, "x")
        return ok, err, double(21), ok2, err2
        """, chunkName: "@t.lua")
        #expect(out[0] == .boolean(false))
        #expect(out[1].stringValue == "t.lua:1: refused by Swift")
        #expect(out[2] == .integer(42))
        #expect(out[3] == .boolean(false))
        #expect(out[4].stringValue?.contains("integer expected, got string") == true)
    }

    @Test("an uncaught Swift error fails the protected call and the VM stays usable")
    func hostErrorUncaught() throws {
        let vm = try LuaVM()
        vm.setGlobal("fail") { _ in throw LuaError.host("nope") }
        #expect(throws: LuaError.self) { try vm.evaluate("fail()") }
        #expect(try vm.evaluate("return 1") == [.integer(1)])
    }

    @Test("an infinite loop is stopped by the instruction budget, even inside pcall", .timeLimit(.minutes(1)))
    func runawayLoop() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 1_000_000, memoryBytes: 0))
        let started = Date()
        guard let error = stoppedRunaway(vm, "while true do end") else { return }
        #expect(error.isBudgetError)
        guard let caught = stoppedRunaway(vm, "for i = 1, 10 do pcall(function() while true do end end) end while true do end") else { return }
        #expect(caught.isBudgetError)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try vm.evaluate("return 'still here'") == [.text("still here")])
    }

    @Test("a short call runs without the count hook; one that runs long gets it, and the next call starts without it", .timeLimit(.minutes(1)),
          .disabled(if: ProcessInfo.processInfo.environment["MOONMOCK_TEST_SANITIZER"] == "thread",
                    "ThreadSanitizer delivers signals late, so its builds run without the watchdog"))
    func budgetArmedByWatchdog() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 50_000_000, memoryBytes: 0), sandboxed: false)
        #expect(vm.watchSlot != nil)
        #expect(try vm.evaluate("return debug.gethook()") == [.nil])
        // Spins until the watchdog arms the hook (a tick or two); gives up after 3 s of CPU.
        let armed = try vm.evaluate("""
            local started = os.clock()
            while debug.gethook() == nil do
              if os.clock() - started > 3 then return 'never armed' end
            end
            return 'armed'
            """)
        #expect(armed == [.text("armed")])
        #expect(try vm.evaluate("return debug.gethook()") == [.nil])
    }

    @Test("without the watchdog, every call counts from its first instruction and a runaway still stops", .timeLimit(.minutes(1)))
    func budgetWithoutWatchdog() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 1_000_000, memoryBytes: 0), sandboxed: false)
        vm.countEveryInstruction()
        #expect(try vm.evaluate("return debug.gethook() ~= nil") == [.boolean(true)])
        guard let error = stoppedRunaway(vm, "while true do end") else { return }
        #expect(error.isBudgetError)
        #expect(try vm.evaluate("return 'still here'") == [.text("still here")])
    }

    @Test("a runaway inside a coroutine is stopped, from coroutine.wrap and from coroutine.resume", .timeLimit(.minutes(1)))
    func runawayCoroutine() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 1_000_000, memoryBytes: 0))
        let started = Date()
        guard let wrapped = stoppedRunaway(vm, "coroutine.wrap(function() while true do end end)()") else { return }
        #expect(wrapped.isBudgetError)
        // resume catches the error; the script raises what it got, to end the call with it.
        let code = "error(select(2, coroutine.resume(coroutine.create(function() while true do end end))))"
        guard let resumed = stoppedRunaway(vm, code) else { return }
        #expect(resumed.message.contains("instruction budget exceeded (runaway script stopped)"))
        // The caller keeps making runaways and swallowing their errors: it is stopped itself.
        let looping = "while true do coroutine.resume(coroutine.create(function() while true do end end)) end"
        guard let stopped = stoppedRunaway(vm, looping) else { return }
        #expect(stopped.isBudgetError)
        #expect(try vm.evaluate("return coroutine.wrap(function(a) coroutine.yield(a + 1) end)(41)") == [.integer(42)])
        #expect(Date().timeIntervalSince(started) < 10)
        let badArgument = #expect(throws: LuaError.self) { try vm.evaluate("coroutine.create(42)") }
        #expect(badArgument?.message.contains("bad argument #1") == true)
    }

    @Test("a memory bomb hits the ceiling and the VM recovers")
    func memoryBomb() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 0, memoryBytes: 8 << 20))
        let error = #expect(throws: LuaError.self) {
            try vm.evaluate("local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1024) .. i end")
        }
        #expect(error?.isMemoryError == true)
        let huge = #expect(throws: LuaError.self) { try vm.evaluate("return string.rep('x', 1 << 30)") }
        #expect(huge?.isMemoryError == true)
        vm.collectGarbage()
        #expect(vm.memoryInUse < 2 << 20)
        #expect(try vm.evaluate("return #string.rep('y', 1000)") == [.integer(1000)])
    }

    @Test("the ceiling holds for small blocks reused from the free lists too")
    func ceilingOnReusedBlocks() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 0, memoryBytes: 64 << 20))
        // About 20 MiB of small blocks, then collected: they wait on the free lists.
        _ = try vm.evaluate("local head for i = 1, 200000 do head = { next = head, i } end return true")
        vm.collectGarbage()
        vm.limits = LuaLimits(instructions: 0, memoryBytes: 4 << 20)
        // A chain of small tables (about 100 bytes a link): every block it takes can come from
        // those lists, and the refusal must come near 4 MiB, not once the lists run dry.
        let error = #expect(throws: LuaError.self) {
            try vm.evaluate("local head for i = 1, 1e9 do head = { next = head, i }; links = i end")
        }
        #expect(error?.isMemoryError == true)
        let links = try vm.evaluate("return links")
        guard case .integer(let count)? = links.first else { Issue.record("links: \(links)"); return }
        #expect(count > 10_000 && count < 60_000, "links made under a 4 MiB ceiling: \(count)")
        vm.collectGarbage()
        #expect(try vm.evaluate("return #string.rep('y', 1000)") == [.integer(1000)])
    }

    @Test("blocks of every size keep their contents as they grow, shrink and are reused")
    func allocatorSizes() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 0, memoryBytes: 64 << 20))
        let before = vm.memoryInUse
        // Strings of 1…2000 bytes cross every pool size class and the malloc boundary; tables
        // grown one element at a time reallocate from class to class and out of the pool.
        let script = """
            local strings, tables = {}, {}
            for n = 1, 2000 do strings[n] = string.rep(string.char(65 + n % 26), n) end
            for k = 1, 200 do
              local t = {}
              for i = 1, k do t[i] = i * k end
              tables[k] = t
            end
            local sum = 0
            for n = 1, 2000 do
              local s = strings[n]
              if #s ~= n or s:byte(1) ~= 65 + n % 26 or s:byte(n) ~= 65 + n % 26 then error("string " .. n .. " changed") end
            end
            for k = 1, 200 do
              local t = tables[k]
              for i = 1, k do sum = sum + t[i] end
              for i = k, 1, -1 do t[i] = nil end   -- shrink again
            end
            return sum
            """
        // sum over k of k * k(k+1)/2
        let expected = (1...200).reduce(0) { $0 + $1 * $1 * ($1 + 1) / 2 }
        for _ in 0..<3 { #expect(try vm.evaluate(script) == [.integer(Int64(expected))]) }
        vm.collectGarbage()
        #expect(vm.memoryInUse < before + (256 << 10))
    }

    @Test("a Swift function allocating past the ceiling fails in C, not with a longjmp through Swift")
    func hostAllocationPastCeiling() throws {
        let vm = try LuaVM(limits: LuaLimits(instructions: 0, memoryBytes: 4 << 20))
        vm.setGlobal("big") { stack in stack.push(bytes: [UInt8](repeating: 0x41, count: 8 << 20)); return 1 }
        let error = #expect(throws: LuaError.self) { try vm.evaluate("local s = big() return #s") }
        #expect(error?.isMemoryError == true)
        #expect(try vm.evaluate("return 2") == [.integer(2)])
    }

    @Test("tables convert to Swift values and back")
    func tables() throws {
        let vm = try LuaVM()
        let out = try vm.evaluate("return { 10, 20, name = 'n' }")
        #expect(out[0][("name")] == .text("n"))
        vm.stack.push(LuaValue.table([.init(key: .text("k"), value: .integer(7))]))
        lua_setglobal(vm.state, "t")
        #expect(try vm.evaluate("return t.k") == [.integer(7)])
    }
}

/// Runs `code` in `vm` on a thread of its own and waits at most `seconds` for the error that
/// stops it. A runaway that the code under test fails to stop then fails the test instead of
/// hanging the whole run (its thread spins on until the process exits, keeping the VM).
/// `nil` (a failure already recorded): the caller must not touch the VM again.
func stoppedRunaway(_ vm: LuaVM, _ code: String, within seconds: Double = 20,
                    sourceLocation: SourceLocation = #_sourceLocation) -> LuaError? {
    final class Outcome: @unchecked Sendable {
        let vm: LuaVM
        var error: LuaError?
        var returned = false
        init(_ vm: LuaVM) { self.vm = vm }
    }
    let outcome = Outcome(vm), done = DispatchSemaphore(value: 0)
    Thread {
        do { _ = try outcome.vm.evaluate(code); outcome.returned = true } catch { outcome.error = error as? LuaError }
        done.signal()
    }.start()
    guard done.wait(timeout: .now() + seconds) == .success else {
        Issue.record("not stopped within \(Int(seconds)) s: \(code)", sourceLocation: sourceLocation)
        return nil
    }
    if outcome.returned { Issue.record("returned instead of being stopped: \(code)", sourceLocation: sourceLocation) }
    if outcome.error == nil && !outcome.returned { Issue.record("failed with an error that is not a LuaError: \(code)", sourceLocation: sourceLocation) }
    return outcome.error
}

import Testing
@testable import LuaBridge

@Suite("Sandbox")
struct SandboxTests {
    @Test("dangerous globals are gone", arguments: [
        "os.execute", "os.exit", "os.remove", "os.rename", "os.getenv", "io", "debug", "package",
        "dofile", "loadfile", "string.dump", "require", "os.tmpname", "os.setlocale",
    ])
    func removed(_ name: String) throws {
        let vm = try LuaVM()
        #expect(try vm.evaluate("return \(name) == nil") == [.boolean(true)])
    }

    @Test("what the whitelist keeps still works")
    func kept() throws {
        let vm = try LuaVM()
        let out = try vm.evaluate("""
        return string.format("%d-%s", 7, ("x"):rep(2)), math.max(1, 5), table.concat({ "a", "b" }, ","),
               utf8.char(233), type(os.time()), coroutine.wrap(function() coroutine.yield(3) end)(),
               type(collectgarbage("count")), pcall(collectgarbage, "stop")
        """)
        #expect(Array(out.prefix(7)) == [.text("7-xx"), .integer(5), .text("a,b"), .text("é"), .text("number"), .integer(3), .text("number")])
        #expect(out[7] == .boolean(false))
    }

    @Test("os.execute and io.open cannot be called")
    func cannotCall() throws {
        let vm = try LuaVM()
        let e1 = #expect(throws: LuaError.self) { try vm.evaluate("os.execute('touch /tmp/moonmock-pwned')") }
        #expect(e1?.message.contains("execute") == true)
        #expect(throws: LuaError.self) { try vm.evaluate("io.open('/etc/passwd')") }
    }

    @Test("load accepts text and refuses binary chunks")
    func loadTextOnly() throws {
        let vm = try LuaVM()
        #expect(try vm.evaluate("return load('return 1 + 1')()") == [.integer(2)])
        let out = try vm.evaluate("""
        local f1, e1 = load("\\27Lua", "x", "b")
        local f2, e2 = load("\\27LuaT\\0", "x")
        return f1 == nil, e1, f2 == nil, e2
        """)
        #expect(out[0] == .boolean(true))
        #expect(out[1].stringValue?.contains("only text chunks") == true)
        #expect(out[2] == .boolean(true))
        #expect(out[3].stringValue?.contains("binary chunks are not allowed") == true)
    }

    @Test("a binary chunk given to the loader itself is refused")
    func binaryChunkLoad() throws {
        let unsafe = try LuaVM(sandboxed: false)
        let dumped = try unsafe.evaluate("return string.dump(function() return 1 end)")
        guard case .string(let bytes) = dumped[0] else { Issue.record("no dump"); return }
        let vm = try LuaVM()
        let error = #expect(throws: LuaError.self) { try vm.load(bytes, chunkName: "=bin") }
        #expect(error?.message.contains("binary") == true)
    }

    @Test("the string metatable is locked")
    func stringMetatable() throws {
        let vm = try LuaVM()
        #expect(try vm.evaluate("return getmetatable('')") == [.boolean(false)])
        #expect(try vm.evaluate("return ('abc'):upper()") == [.text("ABC")])
    }

    @Test("unsafe mode keeps the full library")
    func unsafeMode() throws {
        let vm = try LuaVM(sandboxed: false)
        #expect(try vm.evaluate("return type(io.open), type(string.dump)") == [.text("function"), .text("function")])
    }
}

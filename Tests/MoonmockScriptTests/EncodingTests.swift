import CLua
import Foundation
import MoonmockCore
import Testing
@testable import MoonmockScript

@Suite("JSON encoding")
struct EncodingTests {
    /// Random values of every kind the encoders meet, from a seeded generator in Lua: nested
    /// objects and arrays, empty tables, `mock.json.array`, `mock.null`, booleans, integers at the
    /// extremes, floats, plain and escaped and non-ASCII strings (also as keys), sparse and mixed
    /// tables.
    static let generator = #"""
    local seed = 12345
    local function rand(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n end
    local strings = { "", "a", "id", "name", "Zebra", "a b", "quote\"d", "back\\slash", "tab\tx", "caf\u{E9}",
                      "\u{1F600}", "nul\0byte", "User 7", "aa", "ab", "a", "~", "0", "10", "9" }
    local function str() return strings[rand(#strings) + 1] end
    local value
    local function tbl(depth)
      local kind = rand(6)
      local t = {}
      if kind == 0 then for i = 1, rand(5) do t[i] = value(depth + 1) end
      elseif kind == 1 then for _ = 1, rand(6) do t[str()] = value(depth + 1) end
      elseif kind == 2 then t = mock.json.array(); for i = 1, rand(3) do t[i] = value(depth + 1) end
      elseif kind == 3 then t[1] = value(depth + 1); t[3] = value(depth + 1)
      elseif kind == 4 then t[1] = value(depth + 1); t.k = value(depth + 1)
      end
      return t
    end
    value = function(depth)
      local kind = rand(depth > 3 and 8 or 10)
      if kind == 0 then return nil
      elseif kind == 1 then return mock.null
      elseif kind == 2 then return rand(2) == 0
      elseif kind == 3 then return ({ 0, 1, -1, 42, math.maxinteger, math.mininteger, 1e15 // 1 })[rand(7) + 1]
      elseif kind == 4 then return ({ 0.5, -2.25, 1e300, 3.0, 0.1 })[rand(5) + 1]
      elseif kind == 5 or kind == 6 or kind == 7 then return str()
      else return tbl(depth) end
    end
    function values(n)
      local out = {}
      for i = 1, n do out[i] = tbl(0) end
      return out
    end
    """#

    @Test("the C encoder writes exactly what the Swift encoder writes, for 3,000 random values")
    func sameBytes() throws {
        let generation = try ScriptGeneration.load(source: Self.generator, engine: Engine())
        var compared = 0, takenByC = 0
        try generation.withVM(nil) {
            let stack = generation.vm.stack
            let L = stack.L
            let top = stack.top
            defer { stack.top = top }
            lua_getglobal(L, "values")
            lua_pushinteger(L, 3000)
            try generation.vm.call(arguments: 1, results: 1)
            let list = stack.top
            for k in 1...3000 {
                lua_rawgeti(L, list, lua_Integer(k))
                defer { stack.pop() }
                let swift = try generation.encodeJSONInSwift(at: -1, stack)
                let both = try generation.encodeJSON(at: -1, stack)
                #expect(both == swift, "value \(k): \(String(decoding: both, as: UTF8.self)) vs \(String(decoding: swift, as: UTF8.self))")
                if mm_json_encode(L, -1, generation.refs.resp, generation.refs.array, generation.jsonBuffer) == MM_JSON_OK { takenByC += 1 }
                compared += 1
            }
        }
        #expect(compared == 3000)
        // Both paths were exercised: most values have one spelling, many do not.
        #expect(takenByC > 300 && takenByC < 2700, "\(takenByC) of 3000 encoded in C")
    }

    @Test("values the C encoder declines still fail with the Swift encoder's message, and the stack is left as found")
    func declined() throws {
        let generation = try ScriptGeneration.load(source: """
        function bad() return { ok = { 1, 2 }, f = function() end } end
        function deep() local t = {}; local c = t; for _ = 1, 200 do c.x = {}; c = c.x end; return t end
        """, engine: Engine())
        try generation.withVM(nil) {
            let stack = generation.vm.stack
            let top = stack.top
            defer { stack.top = top }
            for (name, message) in [("bad", "cannot encode a function as JSON"), ("deep", "nested deeper than 128 levels")] {
                lua_getglobal(stack.L, name)
                try generation.vm.call(arguments: 0, results: 1)
                let before = stack.top
                let error = #expect(throws: (any Error).self) { try generation.encodeJSON(at: -1, stack) }
                #expect("\(error.map { String(describing: $0) } ?? "")".contains(message))
                #expect(stack.top == before)
                stack.pop()
            }
        }
    }
}

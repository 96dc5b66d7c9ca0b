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
                      "\u{1F600}", "nul\0byte", "User 7", "aa", "ab", "a", "~", "0", "10", "9",
                      -- Past eight bytes (read a word at a time): the odd byte early, late and at the end.
                      "a plain string longer than a word", "eight by\"tes then a quote", "0123456789abcde\\",
                      "sixteen bytes ok\tthen a tab", "non-ASCII after a word: caf\u{E9}" }
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

@Suite("JSON decoding")
struct DecodingDifferentialTests {
    /// Deep equality in Lua: types, integer vs float, string bytes, metatables, table contents.
    static let script = #"""
    function same(a, b)
      if type(a) ~= type(b) then return false end
      if type(a) == "number" then return math.type(a) == math.type(b) and (a == b or (a ~= a and b ~= b)) end
      if type(a) ~= "table" then return a == b end
      if getmetatable(a) ~= getmetatable(b) then return false end
      for k, v in pairs(a) do if not same(v, b[k]) then return false end end
      for k in pairs(b) do if a[k] == nil then return false end end
      return true
    end
    """#

    /// Seeded random JSON-ish texts: valid and invalid, every kind of number, string and nesting.
    static func texts(_ count: Int) -> [[UInt8]] {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func rand(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        let numbers = ["0", "-0", "7", "-12", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.5", "-0.25",
                       "1e5", "1E+5", "2.5e-3", "1e400", "1e-400", "01", "-", ".5", "1.", "1e", "3.0", "123456789012345678901234567890"]
        let strings = [#""""#, #""a""#, #""User 7""#, #""line\nbreak""#, #""q\"uote""#, #""back\\slash""#, #""sl\/ash""#,
                       #""tab\tand\r\b\f""#, #""caf\u00e9""#, #""\ud83d\ude00""#, #""\ud800x""#, "\"caf\u{e9}\"", "\"\u{1F600}\"",
                       "\"raw\u{7}ctl\"", "\"bad\\q\"", "\"unterminated",
                       // Past eight bytes (scanned a word at a time): the odd byte early, late and at the end.
                       #""a plain string longer than a word""#, #""eight by\"tes then a quote""#, #""0123456789abcde\\""#,
                       "\"sixteen bytes ok\u{1}then a control\"", "\"non-ASCII after a word: caf\u{e9}\"",
                       // Longer than the short-string cache's 24 bytes, and alike in length, middle and last byte
                       // (so in the same slot of the long-string cache): each must come back as itself.
                       #""query GetUser { user { id name } }""#, #""quxry GetUser { user { id name } }""#]
        let spaces = ["", " ", "\n", "\t ", "\r\n"]
        func value(_ depth: Int) -> String {
            switch rand(depth > 3 ? 6 : 8) {
            case 0: return numbers[rand(numbers.count)]
            case 1: return strings[rand(strings.count)]
            case 2: return ["true", "false", "null", "tru", "nul"][rand(5)]
            case 3, 4: return numbers[rand(numbers.count)]
            case 5: return strings[rand(strings.count)]
            case 6:
                let items = (0..<rand(4)).map { _ in spaces[rand(5)] + value(depth + 1) + spaces[rand(5)] }
                return "[" + items.joined(separator: ",") + (rand(20) == 0 ? "," : "") + "]"
            default:
                let members = (0..<rand(4)).map { _ in spaces[rand(5)] + strings[rand(8)] + spaces[rand(5)] + ":" + value(depth + 1) }
                return "{" + members.joined(separator: ",") + (rand(20) == 0 ? "," : "") + "}"
            }
        }
        var out: [[UInt8]] = []
        for n in 0..<count {
            var bytes = Array((spaces[rand(5)] + value(0) + spaces[rand(5)]).utf8)
            if n % 50 == 0, !bytes.isEmpty { bytes.insert(0xFF, at: rand(bytes.count)) }   // invalid UTF-8 somewhere
            if n % 97 == 0 { bytes += Array("x".utf8) }                                       // trailing garbage
            out.append(bytes)
        }
        return out
    }

    @Test("the C decoder gives the Swift decoder's values when it decodes, and declines the rest")
    func sameValues() throws {
        let generation = try ScriptGeneration.load(source: Self.script, engine: Engine())
        var takenByC = 0, validForSwift = 0
        let bodies = Self.texts(4000) + [Array(#"{"operationName":"GetUser","variables":{"id":"7"},"query":"query { a }"}"#.utf8)]
        try generation.withVM(nil) {
            let stack = generation.vm.stack
            let L = stack.L
            let top = stack.top
            defer { stack.top = top }
            for body in bodies {
                let text = String(decoding: body, as: UTF8.self)
                let base = stack.top
                let swiftOK = generation.pushDecodedJSONInSwift(body, stack)
                #expect(stack.top == base + (swiftOK ? 1 : 0), "\(text)")
                if swiftOK { validForSwift += 1 }
                let cOK = body.withUnsafeBufferPointer { b in
                    b.withMemoryRebound(to: CChar.self) { mm_json_decode(L, $0.baseAddress, $0.count, generation.refs.array, generation.jsonBuffer,
                                                              generation.refs.jsonStrings, generation.jsonStrings) }
                } == MM_JSON_OK
                #expect(stack.top == base + (swiftOK ? 1 : 0) + (cOK ? 1 : 0), "\(text)")
                if cOK {
                    takenByC += 1
                    #expect(swiftOK, "C decoded what Swift refuses: \(text)")
                    if swiftOK {
                        lua_getglobal(L, "same")
                        lua_pushvalue(L, -3)
                        lua_pushvalue(L, -3)
                        try generation.vm.call(arguments: 2, results: 1)
                        #expect(stack.bool(at: -1), "different values for \(text)")
                        stack.pop()
                    }
                }
                #expect(generation.pushDecodedJSON(body, stack) == swiftOK, "\(text)")
                stack.top = base
            }
        }
        #expect(takenByC > 500 && takenByC < validForSwift, "C took \(takenByC) of \(validForSwift) valid bodies")
    }

    @Test("the decoder's string cache never hands back a string that differs from the body's in one byte")
    func cachedStringsAreExact() throws {
        let generation = try ScriptGeneration.load(source: "", engine: Engine())
        generation.withVM(nil) {
            let stack = generation.vm.stack
            let L = stack.L
            let top = stack.top
            defer { stack.top = top }
            // Every length the short-string cache holds and a little past it; for each, strings
            // that agree but for one byte, at every position in turn. Alike in length, first and
            // last byte, most share a cache slot, so each decode meets the other's bytes there.
            let letters = Array("abcdefghijklmnopqrstuvwxyz")
            for length in 1...26 {
                let plain = (0..<length).map { letters[$0 % 26] }
                var texts = [String(plain)]
                for position in 0..<length {
                    var changed = plain
                    changed[position] = "Z"
                    texts.append(String(changed))
                }
                for text in texts + texts.reversed() + texts {
                    let body = Array("{\"\(text)\":\"\(text)\"}".utf8)
                    let base = stack.top
                    let decoded = body.withUnsafeBufferPointer { b in
                        b.withMemoryRebound(to: CChar.self) { mm_json_decode(L, $0.baseAddress, $0.count, generation.refs.array, generation.jsonBuffer,
                                                                  generation.refs.jsonStrings, generation.jsonStrings) }
                    } == MM_JSON_OK
                    #expect(decoded, "\(text)")
                    guard decoded else { continue }
                    // The one key, and its value, each exactly the text.
                    lua_pushnil(L)
                    #expect(lua_next(L, -2) != 0)
                    #expect(stack.string(at: -2) == text && stack.string(at: -1) == text, "decoded \(text)")
                    stack.top = base
                }
            }
        }
    }
}

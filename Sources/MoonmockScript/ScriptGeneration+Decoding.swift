import CLua
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// Decodes JSON bytes straight into Lua values (no intermediate ``JSONValue``), with the same
    /// mapping as ``push(json:_:)``: arrays get the `mock.json.array` metatable, null is `mock.null`,
    /// integers stay integers. Leaves one value on the stack, or nothing and `false` when the
    /// bytes are not JSON.
    func pushDecodedJSON(_ bytes: [UInt8], _ stack: LuaStack) -> Bool {
        // The C decoder takes unambiguous bodies; anything else (and every invalid body) is the
        // Swift decoder's below.
        let decoded = bytes.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { mm_json_decode(stack.L, $0.baseAddress, $0.count, refs.array, jsonBuffer, refs.jsonStrings, jsonStrings) }
        }
        if decoded == MM_JSON_OK { return true }
        return pushDecodedJSONInSwift(bytes, stack)
    }

    /// The Swift decoder alone: every body.
    func pushDecodedJSONInSwift(_ bytes: [UInt8], _ stack: LuaStack) -> Bool {
        let top = stack.top
        let ok = bytes.withUnsafeBufferPointer { b -> Bool in
            var decoder = LuaJSONDecoder(b: b, stack: stack, arrayRef: refs.array)
            decoder.space()
            guard decoder.value(depth: 0), (decoder.space(), decoder.i == b.count).1 else { return false }
            return true
        }
        if !ok { stack.top = top }
        return ok
    }
}

/// A JSON parser whose output is pushed onto a Lua stack.
private struct LuaJSONDecoder {
    let b: UnsafeBufferPointer<UInt8>
    let stack: LuaStack
    let arrayRef: Int32
    var i = 0

    init(b: UnsafeBufferPointer<UInt8>, stack: LuaStack, arrayRef: Int32) {
        self.b = b
        self.stack = stack
        self.arrayRef = arrayRef
    }

    mutating func space() { while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }

    mutating func value(depth: Int) -> Bool {
        guard i < b.count, depth < 200, stack.ensure(3) else { return false }
        let L = stack.L
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            stack.newTable()
            space()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return true }
            while true {
                space()
                guard i < b.count, b[i] == UInt8(ascii: "\""), string() else { return false }
                space()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { return false }
                i += 1
                space()
                guard value(depth: depth + 1) else { return false }
                lua_rawset(L, -3)
                space()
                guard i < b.count else { return false }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; return true }
                return false
            }
        case UInt8(ascii: "["):
            i += 1
            stack.newTable()
            lua_rawgeti(L, mm_registryindex(), lua_Integer(arrayRef))
            lua_setmetatable(L, -2)
            space()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return true }
            var n: Int64 = 0
            while true {
                space()
                guard value(depth: depth + 1) else { return false }
                n += 1
                lua_rawseti(L, -2, n)
                space()
                guard i < b.count else { return false }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; return true }
                return false
            }
        case UInt8(ascii: "\""):
            return string()
        case UInt8(ascii: "t"):
            guard literal("true") else { return false }
            stack.push(true)
            return true
        case UInt8(ascii: "f"):
            guard literal("false") else { return false }
            stack.push(false)
            return true
        case UInt8(ascii: "n"):
            guard literal("null") else { return false }
            lua_pushlightuserdata(L, nil)
            return true
        default:
            return number()
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        for k in 0..<n where b[i + k] != word.utf8Start[k] { return false }
        i += n
        return true
    }

    /// A string at `i` (on the quote): pushed with escapes decoded; the fast path copies once.
    mutating func string() -> Bool {
        i += 1
        let start = i
        while i < b.count, b[i] != UInt8(ascii: "\""), b[i] != UInt8(ascii: "\\"), b[i] >= 0x20 { i += 1 }
        guard i < b.count else { return false }
        if b[i] == UInt8(ascii: "\"") {
            stack.push(bytes: UnsafeBufferPointer(rebasing: b[start..<i]))
            i += 1
            return true
        }
        // Escapes (or a control character): let the Swift parser decode this one string.
        var end = i
        while end < b.count, b[end] != UInt8(ascii: "\"") { end += b[end] == UInt8(ascii: "\\") ? 2 : 1 }
        guard end < b.count, let decoded = (try? JSONValue(parsing: b[(start - 1)...end]))?.stringValue else { return false }
        stack.push(decoded)
        i = end + 1
        return true
    }

    mutating func number() -> Bool {
        let start = i
        var integral = true
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        while i < b.count {
            let c = b[i]
            if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") { i += 1; continue }
            if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") || c == UInt8(ascii: "+")
                || (c == UInt8(ascii: "-") && i > start) { integral = false; i += 1; continue }
            break
        }
        guard i > start else { return false }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        if integral, let v = Int64(text) { stack.push(v); return true }
        guard let d = Double(text), d.isFinite else { return false }
        stack.push(d)
        return true
    }
}

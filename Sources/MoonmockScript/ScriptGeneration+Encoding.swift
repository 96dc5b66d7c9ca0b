import CLua
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// Encodes the Lua value at `i` straight to JSON bytes (no intermediate ``JSONValue``):
    /// tables with keys 1…n (and tables made by `mock.json.array`) are arrays, other tables are
    /// objects with sorted keys, integers stay integers, `mock.null` is null.
    func appendJSON(at i: Int32, _ stack: LuaStack, into out: inout [UInt8], depth: Int = 0) throws {
        let L = stack.L
        switch stack.type(at: i) {
        case LUA_TNIL, LUA_TNONE: out += [0x6E, 0x75, 0x6C, 0x6C]
        case LUA_TLIGHTUSERDATA where lua_touserdata(L, i) == nil: out += [0x6E, 0x75, 0x6C, 0x6C]
        case LUA_TBOOLEAN: JSONValue.bool(stack.bool(at: i)).encode(into: &out)
        case LUA_TNUMBER:
            if lua_isinteger(L, i) != 0 {
                JSONValue.integer(lua_tointegerx(L, i, nil)).encode(into: &out)
            } else {
                let d = lua_tonumberx(L, i, nil)
                guard d.isFinite else { throw LuaError.host("cannot encode \(d) as JSON") }
                JSONValue.double(d).encode(into: &out)
            }
        case LUA_TSTRING:
            var length = 0
            let p = lua_tolstring(L, i, &length)!
            p.withMemoryRebound(to: UInt8.self, capacity: length) { appendJSONString(UnsafeBufferPointer(start: $0, count: length), into: &out) }
        case LUA_TTABLE:
            guard depth < 128 else { throw LuaError.host("cannot encode a table nested deeper than 128 levels (a cycle?)") }
            guard stack.ensure(4) else { throw LuaError.host("stack overflow while encoding JSON") }
            let t = stack.absolute(i)
            if hasMetatable(t, refs.resp, stack) {
                throw LuaError.host("cannot encode a response value (mock.json/mock.text/...) as JSON")
            }
            if hasMetatable(t, refs.array, stack) {
                try appendArray(t, count: stack.rawLength(t), stack, into: &out, depth: depth)
                return
            }
            try appendTable(t, stack, into: &out, depth: depth)
        default:
            throw LuaError.host("cannot encode a \(stack.typeName(at: i)) as JSON")
        }
    }

    /// A key of a table being encoded: a copy of it sits in stack slot `slot`.
    private struct Key {
        var slot: Int32
        var index: Int64
        var bytes: UnsafeBufferPointer<UInt8>?
    }

    /// Keys 1…n make an array, any other keys an object with sorted keys (integer keys then
    /// become strings). The keys are copied onto the stack while the table is walked, sorted
    /// by their bytes, and each value is encoded straight into `out`: no buffer per table.
    private func appendTable(_ t: Int32, _ stack: LuaStack, into out: inout [UInt8], depth: Int) throws {
        let L = stack.L
        let base = stack.top
        defer { lua_settop(L, base) }
        var count = 0
        lua_pushnil(L)
        while lua_next(L, t) != 0 {
            stack.pop()
            let type = lua_type(L, -1)
            guard type == LUA_TSTRING || (type == LUA_TNUMBER && lua_isinteger(L, -1) != 0) else {
                throw LuaError.host("cannot encode a table with \(stack.typeName(at: -1)) keys as JSON")
            }
            count += 1
            guard stack.ensure(4) else { throw LuaError.host("table too large to encode as JSON") }
            lua_pushvalue(L, -1)   // the copy drives lua_next; the original stays in its slot
        }
        if count == 0 {
            out += [UInt8(ascii: "{"), UInt8(ascii: "}")]
            return
        }
        try withUnsafeTemporaryAllocation(of: Key.self, capacity: count) { buffer in
            var keys = buffer
            var onlyIndices = true
            for n in 0..<count {
                let slot = base + 1 + Int32(n)
                if lua_type(L, slot) == LUA_TNUMBER {
                    keys.initializeElement(at: n, to: Key(slot: slot, index: lua_tointegerx(L, slot, nil), bytes: nil))
                } else {
                    var length = 0
                    let p = lua_tolstring(L, slot, &length)!
                    let bytes = p.withMemoryRebound(to: UInt8.self, capacity: length) { UnsafeBufferPointer(start: $0, count: length) }
                    keys.initializeElement(at: n, to: Key(slot: slot, index: 0, bytes: bytes))
                    onlyIndices = false
                }
            }
            if onlyIndices {
                keys.sort { $0.index < $1.index }
                if keys[0].index == 1 && keys[count - 1].index == Int64(count) {
                    try appendArray(t, count: count, stack, into: &out, depth: depth)
                    return
                }
            }
            // Integer keys of a sparse or mixed table are written as strings: rare, so they
            // pay for a String each.
            var names: [Int32: [UInt8]] = [:]
            for key in keys where key.bytes == nil { names[key.slot] = Array(String(key.index).utf8) }
            func withName<R>(_ key: Key, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
                if let bytes = key.bytes { return body(bytes) }
                return names[key.slot]!.withUnsafeBufferPointer(body)
            }
            keys.sort { a, b in withName(a) { x in withName(b) { y in x.lexicographicallyPrecedes(y) } } }
            out.append(UInt8(ascii: "{"))
            for n in 0..<count {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                withName(keys[n]) { appendJSONString($0, into: &out) }
                out.append(UInt8(ascii: ":"))
                lua_pushvalue(L, keys[n].slot)
                lua_rawget(L, t)
                try appendJSON(at: -1, stack, into: &out, depth: depth + 1)
                stack.pop()
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private func appendArray(_ t: Int32, count: Int, _ stack: LuaStack, into out: inout [UInt8], depth: Int) throws {
        out.append(UInt8(ascii: "["))
        for k in 0..<count {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            stack.getIndex(t, Int64(k + 1))
            defer { stack.pop() }
            try appendJSON(at: -1, stack, into: &out, depth: depth + 1)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// JSON bytes for the value at `i`.
    func encodeJSON(at i: Int32, _ stack: LuaStack) throws -> [UInt8] {
        // The C encoder takes the values whose JSON has one spelling; it hands anything else
        // (floats, escapes, sparse tables, errors) back to the encoder below.
        if mm_json_encode(stack.L, i, refs.resp, refs.array, jsonBuffer) == MM_JSON_OK {
            let b = jsonBuffer.pointee
            return b.len == 0 ? [] : Array(UnsafeRawBufferPointer(start: b.data, count: b.len))
        }
        return try encodeJSONInSwift(at: i, stack)
    }

    /// The Swift encoder alone: every value, every error message.
    func encodeJSONInSwift(at i: Int32, _ stack: LuaStack) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        try appendJSON(at: i, stack, into: &out)
        return out
    }
}

/// Writes Lua string bytes as a JSON string literal. Valid UTF-8 is copied as is (quotes,
/// backslashes and control characters escaped); invalid UTF-8 is repaired, as JSON is text.
func appendJSONString(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
    var plain = true
    for c in bytes where c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c >= 0x80 {
        plain = false
        break
    }
    if plain {
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: bytes)
        out.append(UInt8(ascii: "\""))
        return
    }
    JSONValue.encodeString(String(decoding: bytes, as: UTF8.self), into: &out)
}

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
        case LUA_TSTRING: JSONValue.encodeString(stack.string(at: i) ?? "", into: &out)
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
            // One pass to classify the keys: 1...n integers make an array, otherwise an object.
            var stringKeys: [String] = []
            var integerCount = 0
            var maxInteger: Int64 = 0
            lua_pushnil(L)
            while lua_next(L, t) != 0 {
                stack.pop()
                if lua_type(L, -1) == LUA_TNUMBER, lua_isinteger(L, -1) != 0 {
                    integerCount += 1
                    maxInteger = max(maxInteger, lua_tointegerx(L, -1, nil))
                } else if lua_type(L, -1) == LUA_TSTRING {
                    stringKeys.append(stack.string(at: -1) ?? "")
                } else {
                    let type = stack.typeName(at: -1)
                    lua_settop(L, t)
                    throw LuaError.host("cannot encode a table with \(type) keys as JSON")
                }
            }
            if stringKeys.isEmpty && integerCount > 0 && maxInteger == Int64(integerCount) {
                try appendArray(t, count: integerCount, stack, into: &out, depth: depth)
                return
            }
            if integerCount > 0 {
                // A sparse or mixed table: integer keys become strings, as in any JSON object.
                lua_pushnil(L)
                while lua_next(L, t) != 0 {
                    stack.pop()
                    if lua_type(L, -1) == LUA_TNUMBER { stringKeys.append(String(lua_tointegerx(L, -1, nil))) }
                }
            }
            stringKeys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            out.append(UInt8(ascii: "{"))
            for (n, key) in stringKeys.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.encodeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                if stack.getField(t, key) == LUA_TNIL, let k = Int64(key) {
                    stack.pop()
                    stack.getIndex(t, k)
                }
                defer { stack.pop() }
                try appendJSON(at: -1, stack, into: &out, depth: depth + 1)
            }
            out.append(UInt8(ascii: "}"))
        default:
            throw LuaError.host("cannot encode a \(stack.typeName(at: i)) as JSON")
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
        var out: [UInt8] = []
        out.reserveCapacity(128)
        try appendJSON(at: i, stack, into: &out)
        return out
    }
}

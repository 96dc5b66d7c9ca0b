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
            // One pass: each value is encoded once into `scratch`; keys 1…n make an array, any
            // other keys an object with sorted keys (integer keys then become strings).
            struct Member {
                var key: UnsafeBufferPointer<UInt8>?
                var index: Int64
                var value: Range<Int>
            }
            var members: [Member] = []
            var scratch: [UInt8] = []
            var onlyIndices = true
            lua_pushnil(L)
            while lua_next(L, t) != 0 {
                let start = scratch.count
                try appendJSON(at: -1, stack, into: &scratch, depth: depth + 1)
                stack.pop()
                if lua_type(L, -1) == LUA_TNUMBER, lua_isinteger(L, -1) != 0 {
                    members.append(Member(key: nil, index: lua_tointegerx(L, -1, nil), value: start..<scratch.count))
                } else if lua_type(L, -1) == LUA_TSTRING {
                    var length = 0
                    let p = lua_tolstring(L, -1, &length)!
                    let key = p.withMemoryRebound(to: UInt8.self, capacity: length) { UnsafeBufferPointer(start: $0, count: length) }
                    members.append(Member(key: key, index: 0, value: start..<scratch.count))
                    onlyIndices = false
                } else {
                    let type = stack.typeName(at: -1)
                    lua_settop(L, t)
                    throw LuaError.host("cannot encode a table with \(type) keys as JSON")
                }
            }
            if onlyIndices && !members.isEmpty {
                members.sort { $0.index < $1.index }
                if members.first?.index == 1 && members.last?.index == Int64(members.count) {
                    out.append(UInt8(ascii: "["))
                    for (n, m) in members.enumerated() {
                        if n > 0 { out.append(UInt8(ascii: ",")) }
                        out.append(contentsOf: scratch[m.value])
                    }
                    out.append(UInt8(ascii: "]"))
                    return
                }
            }
            // Integer keys of a sparse or mixed table are written as strings.
            var names: [[UInt8]] = []
            names.reserveCapacity(members.count)
            for m in members { names.append(m.key.map { Array($0) } ?? Array(String(m.index).utf8)) }
            let order = members.indices.sorted { names[$0].lexicographicallyPrecedes(names[$1]) }
            out.append(UInt8(ascii: "{"))
            for (n, index) in order.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                names[index].withUnsafeBufferPointer { appendJSONString($0, into: &out) }
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: scratch[members[index].value])
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

import CLua

/// A non-owning view of a `lua_State` (the main thread or a coroutine) with typed, non-raising
/// helpers. Every helper here is safe to use from a Swift host function: none of them raises
/// a Lua error, so no `longjmp` can cross a Swift frame.
public struct LuaStack {
    public let L: OpaquePointer

    public init(_ L: OpaquePointer) { self.L = L }

    /// Index of the top element (= number of values on the stack).
    public var top: Int32 {
        get { lua_gettop(L) }
        nonmutating set { lua_settop(L, newValue) }
    }

    /// Pops `n` values.
    public func pop(_ n: Int32 = 1) { mm_pop(L, n) }

    /// Grows the stack for `n` more values; `false` when Lua cannot (the caller reports it).
    public func ensure(_ n: Int32) -> Bool { lua_checkstack(L, n) != 0 }

    public func type(at i: Int32) -> Int32 { lua_type(L, i) }
    public func isNil(at i: Int32) -> Bool { lua_type(L, i) <= LUA_TNIL }
    public func isTable(at i: Int32) -> Bool { lua_type(L, i) == LUA_TTABLE }
    public func isFunction(at i: Int32) -> Bool { lua_type(L, i) == LUA_TFUNCTION }
    public func isString(at i: Int32) -> Bool { lua_type(L, i) == LUA_TSTRING }
    public func typeName(at i: Int32) -> String { String(cString: lua_typename(L, lua_type(L, i))) }

    // MARK: reading

    /// The bytes of a string value (numbers are not converted); binary-safe.
    public func bytes(at i: Int32) -> [UInt8]? {
        guard lua_type(L, i) == LUA_TSTRING else { return nil }
        var len = 0
        guard let p = lua_tolstring(L, i, &len) else { return nil }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) { Array(UnsafeBufferPointer(start: $0, count: len)) }
    }

    /// A string value as Swift text; numbers are formatted as Lua would.
    public func string(at i: Int32) -> String? {
        let t = lua_type(L, i)
        if t == LUA_TNUMBER {
            if lua_isinteger(L, i) != 0 { return String(lua_tointegerx(L, i, nil)) }
            // Let Lua format the float (%.14g) on a copy, so Swift and tostring() agree.
            lua_pushvalue(L, i)
            defer { mm_pop(L, 1) }
            var len = 0
            guard let p = lua_tolstring(L, -1, &len) else { return nil }
            return p.withMemoryRebound(to: UInt8.self, capacity: len) {
                String(decoding: UnsafeBufferPointer(start: $0, count: len), as: UTF8.self)
            }
        }
        guard t == LUA_TSTRING else { return nil }
        var len = 0
        guard let p = lua_tolstring(L, i, &len) else { return nil }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) {
            String(decoding: UnsafeBufferPointer(start: $0, count: len), as: UTF8.self)
        }
    }

    /// An integer, or a float with an integral value.
    public func integer(at i: Int32) -> Int64? {
        guard lua_type(L, i) == LUA_TNUMBER else { return nil }
        if lua_isinteger(L, i) != 0 { return lua_tointegerx(L, i, nil) }
        let d = lua_tonumberx(L, i, nil)
        guard d.rounded() == d, let v = Int64(exactly: d) else { return nil }
        return v
    }

    public func number(at i: Int32) -> Double? {
        guard lua_type(L, i) == LUA_TNUMBER else { return nil }
        return lua_tonumberx(L, i, nil)
    }

    public func bool(at i: Int32) -> Bool { lua_toboolean(L, i) != 0 }

    /// Argument helpers for host functions: they throw (never raise), naming the argument.
    public func checkString(_ i: Int32, _ what: String = "") throws -> String {
        guard let s = string(at: i) else { throw argError(i, "string", what) }
        return s
    }
    public func checkBytes(_ i: Int32, _ what: String = "") throws -> [UInt8] {
        guard let s = bytes(at: i) else { throw argError(i, "string", what) }
        return s
    }
    public func checkInteger(_ i: Int32, _ what: String = "") throws -> Int64 {
        guard let v = integer(at: i) else { throw argError(i, "integer", what) }
        return v
    }
    public func checkNumber(_ i: Int32, _ what: String = "") throws -> Double {
        guard let v = number(at: i) else { throw argError(i, "number", what) }
        return v
    }

    private func argError(_ i: Int32, _ expected: String, _ what: String) -> LuaError {
        let name = what.isEmpty ? "argument #\(i)" : what
        return .host("bad \(name) (\(expected) expected, got \(isNil(at: i) ? "no value" : typeName(at: i)))")
    }

    // MARK: writing

    public func pushNil() { lua_pushnil(L) }
    public func push(_ b: Bool) { lua_pushboolean(L, b ? 1 : 0) }
    public func push(_ i: Int64) { lua_pushinteger(L, i) }
    public func push(_ i: Int) { lua_pushinteger(L, Int64(i)) }
    public func push(_ d: Double) { lua_pushnumber(L, d) }
    public func push(_ s: String) {
        // In place when the string is native (`withUTF8` is mutating: a copy, retained, first).
        if s.utf8.withContiguousStorageIfAvailable({ push(bytes: $0) }) != nil { return }
        var s = s
        s.withUTF8 { push(bytes: $0) }
    }
    public func push<C: Collection>(bytes: C) where C.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buf in
            buf.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
        }
        if done == nil { push(bytes: Array(bytes)) }
    }
    public func newTable(array: Int32 = 0, hash: Int32 = 0) { lua_createtable(L, array, hash) }
    public func pushValue(at i: Int32) { lua_pushvalue(L, i) }

    /// `t[key] = top` without metamethods, popping the value; `t` is an absolute index.
    public func setField(_ t: Int32, _ key: String) {
        push(key)
        lua_rotate(L, -2, 1)
        lua_rawset(L, t < 0 ? t - 1 : t)
    }
    /// Pushes `t[key]` without metamethods and returns its type.
    @discardableResult
    public func getField(_ t: Int32, _ key: String) -> Int32 {
        let abs = lua_absindex(L, t)
        push(key)
        return lua_rawget(L, abs)
    }
    /// `t[n] = top` without metamethods, popping the value.
    public func setIndex(_ t: Int32, _ n: Int64) {
        lua_rawseti(L, t, n)
    }
    @discardableResult
    public func getIndex(_ t: Int32, _ n: Int64) -> Int32 { lua_rawgeti(L, t, n) }

    /// Raw length of a table or string.
    public func rawLength(_ i: Int32) -> Int { Int(lua_rawlen(L, i)) }

    /// An absolute index for `i`.
    public func absolute(_ i: Int32) -> Int32 { lua_absindex(L, i) }

    // MARK: Swift values

    /// Copies the value at `i` into a ``LuaValue``, tables recursively (at most `depth` deep).
    public func value(at i: Int32, depth: Int = 32) -> LuaValue {
        switch lua_type(L, i) {
        case LUA_TNIL, LUA_TNONE: return .nil
        case LUA_TBOOLEAN: return .boolean(lua_toboolean(L, i) != 0)
        case LUA_TNUMBER:
            return lua_isinteger(L, i) != 0 ? .integer(lua_tointegerx(L, i, nil)) : .number(lua_tonumberx(L, i, nil))
        case LUA_TSTRING: return .string(bytes(at: i) ?? [])
        case LUA_TTABLE:
            guard depth > 0, ensure(3) else { return .opaque("table") }
            let t = lua_absindex(L, i)
            var entries: [LuaValue.Entry] = []
            lua_pushnil(L)
            while lua_next(L, t) != 0 {
                entries.append(.init(key: value(at: -2, depth: depth - 1), value: value(at: -1, depth: depth - 1)))
                mm_pop(L, 1)
            }
            return .table(entries)
        default: return .opaque(typeName(at: i))
        }
    }

    /// Pushes a ``LuaValue``; `.opaque` values become `nil`.
    public func push(_ value: LuaValue) {
        _ = ensure(4)
        switch value {
        case .nil, .opaque: lua_pushnil(L)
        case .boolean(let b): push(b)
        case .integer(let i): push(i)
        case .number(let d): push(d)
        case .string(let s): push(bytes: s)
        case .table(let entries):
            lua_createtable(L, 0, Int32(clamping: entries.count))
            for e in entries {
                push(e.key); push(e.value)
                if lua_type(L, -2) == LUA_TNIL { mm_pop(L, 2); continue }
                lua_rawset(L, -3)
            }
        }
    }
}


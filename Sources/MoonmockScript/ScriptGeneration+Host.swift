import CLua
import Foundation
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// Builds the `mock` global: host functions in a private table handed to the prelude.
    func installAPI() throws {
        let s = vm.stack
        let L = vm.state
        let registry = mm_registryindex()

        // Pristine string.find for mock.match, before any script can replace it.
        lua_getglobal(L, "string")
        s.getField(-1, "find")
        refs.stringFind = luaL_ref(L, registry)
        s.pop()

        s.newTable()
        let H = s.top
        for name in ["RESP", "ARRAY", "MATCHER"] {
            s.newTable()
            s.pushValue(at: -1)
            let ref = luaL_ref(L, registry)
            switch name {
            case "RESP": refs.resp = ref
            case "ARRAY": refs.array = ref
            default: refs.matcher = ref
            }
            s.setField(H, name)
        }
        installRequestMetatable()
        s.newTable(array: MM_JSON_CACHE_TABLE_SIZE)
        refs.jsonStrings = luaL_ref(L, registry)

        vm.setFunction("register", in: H) { [unowned self] stack in try self.hostRegister(stack) }
        vm.setFunction("bundle", in: H) { [unowned self] stack in try self.hostBundle(stack) }
        vm.setFunction("stubs", in: H) { [unowned self] stack in try self.hostStubs(stack) }
        vm.setFunction("cors", in: H) { [unowned self] stack in try self.hostCORS(stack) }
        vm.setFunction("spec", in: H) { [unowned self] stack in try self.hostSpec(stack) }
        vm.setFunction("openapi", in: H) { [unowned self] stack in try self.hostOpenAPI(stack) }
        installWebSocketHost(H)
        installGRPCHost(H)
        vm.setFunction("validate_response", in: H) { [unowned self] stack in
            do { _ = try self.responseSpec(at: 1, stack) } catch { stack.pushNil(); stack.push(message(error)); return 2 }
            stack.push(true); return 1
        }
        vm.setFunction("json_encode", in: H) { [unowned self] stack in
            do {
                stack.push(bytes: try self.encodeJSON(at: 1, stack))
                return 1
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        vm.setFunction("json_decode", in: H) { [unowned self] stack in
            do {
                let value = try JSONValue(parsing: try stack.checkBytes(1))
                self.push(json: value, stack)
                return 1
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        vm.setFunction("read", in: H) { [unowned self] stack in
            do {
                stack.push(bytes: try self.readFile(try stack.checkString(1, "path")))
                return 1
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        vm.setFunction("template", in: H) { [unowned self] stack in
            do {
                let (id, contentType) = try self.compileTemplate(try stack.checkString(1))
                stack.push(id); stack.push(contentType)
                return 2
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        vm.setFunction("loading", in: H) { [unowned self] stack in stack.push(self.loading); return 1 }
        vm.setFunction("sequence_id", in: H) { [unowned self] stack in
            guard self.loading else {
                stack.pushNil(); stack.push("sequences must be created while the script loads, not inside a handler")
                return 2
            }
            self.sequenceCount += 1
            stack.push(self.sequenceCount)
            return 1
        }
        vm.setFunction("log", in: H) { [unowned self] stack in
            let line = stack.string(at: 1) ?? ""
            if let current = self.current { current.log(line) } else { self.loadLogs.append(line) }
            self.options.log?(line)
            return 0
        }
        vm.setFunction("now", in: H) { [unowned self] stack in stack.push(self.engine.environment.now()); return 1 }
        vm.setFunction("uuid", in: H) { [unowned self] stack in stack.push(self.engine.environment.uuid()); return 1 }
        vm.setFunction("random", in: H) { [unowned self] stack in try self.hostRandom(stack) }
        vm.setFunction("find_module", in: H) { [unowned self] stack in
            do {
                let (source, chunk) = try self.findModule(try stack.checkString(1, "module name"))
                stack.push(bytes: source); stack.push(chunk)
                return 2
            } catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        installStateFunctions(H)
        installFakeHost(H)
        installResourceHost(H)
        installOutboundHost(H)

        // prelude(H, debug.getinfo, null) -> mock
        try vm.load(Prelude.source, chunkName: Prelude.chunkName)
        s.pushValue(at: H)
        lua_getfield(L, registry, LuaVM.debugRegistryKey)
        s.getField(-1, "getinfo")
        mm_remove(L, -2)
        lua_pushlightuserdata(L, nil)
        try vm.call(arguments: 3, results: 1)
        lua_setglobal(L, "mock")
        s.pop()   // H
        try snapshotForSharingCheck()
    }

    /// Keeps the globals and the `mock` API as they are before the script runs, for
    /// ``checkSharing()`` (see ``SharingCheck/snapshotSource``).
    private func snapshotForSharingCheck() throws {
        let L = vm.state
        let registry = mm_registryindex()
        try vm.load(SharingCheck.snapshotSource, chunkName: SharingCheck.chunkName)
        lua_rawgeti(L, registry, lua_Integer(LUA_RIDX_GLOBALS))
        lua_getglobal(L, "mock")
        lua_getfield(L, registry, LuaVM.debugRegistryKey)
        lua_getfield(L, -1, "getmetatable")
        mm_remove(L, -2)
        try vm.call(arguments: 3, results: 1)
        lua_setfield(L, registry, SharingCheck.pristineKey)
    }

    /// A state write's `ttl_seconds`: absent, or a number; anything else is an error (a table
    /// such as `{ ttl = 5 }` would otherwise keep the value for ever).
    private static func ttl(at i: Int32, _ stack: LuaStack, _ method: String) throws -> Double? {
        if stack.isNil(at: i) { return nil }
        guard let seconds = stack.number(at: i), seconds.isFinite else {
            throw LuaError.host("mock.state:\(method): ttl_seconds must be a number of seconds, got \(stack.number(at: i).map { String($0) } ?? stack.typeName(at: i))")
        }
        return seconds
    }

    /// `state_get` … `state_flush` in the table at `H`, on `store` (the engine's own by default;
    /// ``SpecRunner`` hands its spec VM the store of the engine under test).
    func installStateFunctions(_ H: Int32, store: StateStore? = nil) {
        let state = store ?? engine.state
        vm.setFunction("state_get", in: H) { [unowned self] stack in
            let key = try stack.checkString(1, "key")
            if let channel = storeChannel(for: state, stack) { return try waitForStore(.get(key), state, channel, stack) }
            pushState(try state.get(key), stack); return 1
        }
        vm.setFunction("state_set", in: H) { [unowned self] stack in
            let key = try stack.checkString(1, "key")
            let value = try stateValue(at: 2, stack), ttl = try Self.ttl(at: 3, stack, "set")
            if let channel = storeChannel(for: state, stack) { return try waitForStore(.set(key, value, ttl: ttl), state, channel, stack) }
            try state.set(key, value, ttl: ttl)
            return 0
        }
        vm.setFunction("state_add", in: H) { [unowned self] stack in
            let key = try stack.checkString(1, "key")
            guard let value = try stateValue(at: 2, stack) else { throw LuaError.host("state:add needs a value") }
            let ttl = try Self.ttl(at: 3, stack, "add")
            if let channel = storeChannel(for: state, stack) { return try waitForStore(.add(key, value, ttl: ttl), state, channel, stack) }
            stack.push(try state.add(key, value, ttl: ttl))
            return 1
        }
        vm.setFunction("state_incr", in: H) { [unowned self] stack in
            let key = try stack.checkString(1, "key")
            let by = stack.isNil(at: 2) ? StateValue.integer(1) : try number(at: 2, stack, "increment")
            let initial = stack.isNil(at: 3) ? StateValue.integer(0) : try number(at: 3, stack, "initial value")
            if let channel = storeChannel(for: state, stack) { return try waitForStore(.incr(key, by: by, initial: initial), state, channel, stack) }
            do { pushState(try state.incr(key, by: by, initial: initial), stack); return 1 }
            catch let full as StateStore.LimitExceeded { throw full }   // raised: a full store is no value to test
            catch let away as StoreUnavailable { throw away }   // raised too: the request answers 503
            catch { stack.pushNil(); stack.push(message(error)); return 2 }
        }
        vm.setFunction("state_delete", in: H) { [unowned self] stack in
            let key = try stack.checkString(1, "key")
            if let channel = storeChannel(for: state, stack) { return try waitForStore(.delete(key), state, channel, stack) }
            stack.push(try state.delete(key)); return 1
        }
        vm.setFunction("state_keys", in: H) { stack in
            let keys = try state.keys()
            guard stack.ensure(3) else { throw LuaError.host("stack overflow") }
            stack.newTable(array: Int32(clamping: keys.count))
            for (i, k) in keys.enumerated() { stack.push(k); stack.setIndex(-2, Int64(i + 1)) }
            return 1
        }
        vm.setFunction("state_flush", in: H) { _ in try state.flush(); return 0 }
    }

    private func hostRandom(_ stack: LuaStack) throws -> Int32 {
        let random = engine.environment.random
        switch stack.top {
        case 0:
            stack.push(random.unit())
        case 1:
            let m = try stack.checkInteger(1, "upper bound")
            guard m >= 1 else { throw LuaError.host("bad argument #1 to 'random' (interval is empty)") }
            stack.push(random.integer(in: 1...m))
        default:
            let lo = try stack.checkInteger(1, "lower bound"), hi = try stack.checkInteger(2, "upper bound")
            guard lo <= hi else { throw LuaError.host("bad argument #2 to 'random' (interval is empty)") }
            stack.push(random.integer(in: lo...hi))
        }
        return 1
    }
}

/// Runs a host function body that reports failure as `nil, message` (for the prelude to raise at
/// the script's line) instead of raising: `true` on success.
func reportingFailure(_ stack: LuaStack, _ body: () throws -> Void) -> Int32 {
    do {
        try body()
        stack.push(true)
        return 1
    } catch {
        stack.pushNil()
        stack.push(message(error))
        return 2
    }
}

/// The text of an error thrown inside a host function.
func message(_ error: Error) -> String {
    if let e = error as? LuaError { return e.message }
    return String(describing: error)
}

func pushState(_ value: StateValue?, _ stack: LuaStack) {
    switch value {
    case nil: stack.pushNil()
    case .bool(let b)?: stack.push(b)
    case .integer(let i)?: stack.push(i)
    case .double(let d)?: stack.push(d)
    case .string(let s)?: stack.push(s)
    }
}

private func stateValue(at i: Int32, _ stack: LuaStack) throws -> StateValue? {
    switch stack.type(at: i) {
    case LUA_TNIL, LUA_TNONE: return nil
    case LUA_TBOOLEAN: return .bool(stack.bool(at: i))
    case LUA_TNUMBER:
        if lua_isinteger(stack.L, i) != 0 { return .integer(lua_tointegerx(stack.L, i, nil)) }
        return .double(stack.number(at: i) ?? 0)
    case LUA_TSTRING: return .string(stack.string(at: i) ?? "")
    default: throw LuaError.host("mock.state values are nil, booleans, numbers or strings, got \(stack.typeName(at: i))")
    }
}

private func number(at i: Int32, _ stack: LuaStack, _ what: String) throws -> StateValue {
    guard stack.type(at: i) == LUA_TNUMBER else { throw LuaError.host("bad \(what) (number expected, got \(stack.typeName(at: i)))") }
    if lua_isinteger(stack.L, i) != 0 { return .integer(lua_tointegerx(stack.L, i, nil)) }
    return .double(stack.number(at: i) ?? 0)
}

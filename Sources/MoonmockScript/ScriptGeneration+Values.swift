import CLua
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// Converts the Lua value at `i` to a ``JSONValue`` (for predicates built at load time),
    /// through the one Lua-to-JSON encoder, ``appendJSON(at:_:into:depth:)``.
    func json(at i: Int32, _ stack: LuaStack) throws -> JSONValue {
        try JSONValue(parsing: encodeJSON(at: i, stack))
    }

    /// Pushes JSON as Lua values: arrays get the `mock.json.array` metatable (so `[]` stays
    /// `[]` when encoded again), null becomes `mock.null`.
    func push(json value: JSONValue, _ stack: LuaStack) {
        _ = stack.ensure(4)
        switch value {
        case .null: lua_pushlightuserdata(stack.L, nil)
        case .bool(let b): stack.push(b)
        case .integer(let i): stack.push(i)
        case .double(let d): stack.push(d)
        case .string(let s): stack.push(s)
        case .array(let items):
            stack.newTable(array: Int32(clamping: items.count))
            for (k, item) in items.enumerated() {
                push(json: item, stack)
                stack.setIndex(-2, Int64(k + 1))
            }
            lua_rawgeti(stack.L, mm_registryindex(), lua_Integer(refs.array))
            lua_setmetatable(stack.L, -2)
        case .object(let members):
            stack.newTable(hash: Int32(clamping: members.count))
            for (k, v) in members {
                push(json: v, stack)
                stack.setField(-2, k)
            }
        }
    }

    /// Whether the table at absolute index `t` has the metatable stored under `ref`.
    func hasMetatable(_ t: Int32, _ ref: Int32, _ stack: LuaStack) -> Bool {
        guard lua_getmetatable(stack.L, t) != 0 else { return false }
        lua_rawgeti(stack.L, mm_registryindex(), lua_Integer(ref))
        defer { stack.pop(2) }
        return lua_rawequal(stack.L, -1, -2) != 0
    }

    // MARK: the request table

    func installRequestMetatable() {
        let s = vm.stack
        s.newTable()
        vm.setFunction("__index", in: -1) { [unowned self] stack in try self.requestIndex(stack) }
        refs.requestMeta = luaL_ref(vm.state, mm_registryindex())
    }

    /// Pushes the `req` table for `context` (DESIGN §2.3). `method`, `path`, `params` and `id`
    /// are filled in; every other field is computed on first access (and then cached on the
    /// table), so a handler pays only for what it reads. Fields are available while the handler
    /// runs.
    func pushRequest(_ context: RequestContext, _ stack: LuaStack) {
        let r = context.request
        _ = stack.ensure(6)
        // Room for the fields set here and the two or so a handler reads (cached on first read).
        stack.newTable(hash: 4)
        let t = stack.top
        // method, path and id come from __index, like the other lazy fields: most handlers read
        // none of them, and each field set here costs a string lookup and a table insert.
        // (The sets below are raw: the table has no metatable yet. lua_setfield with a constant
        // C string hits Lua's string cache, keyed by the pointer.)
        // A route without captures gets its (empty) params table from __index if it asks.
        if context.captures.count > 0 {
            pushParams(context.captures, stack)
            lua_setfield(stack.L, t, "params")
        }
        // A GraphQL rule's handler reads req.json nearly always: decoded now, it skips the
        // __index round trip through the host (same value as the lazy path would give).
        if context.ruleRequiresGraphQLOperation, !r.hasDecodedJSON, !r.body.isEmpty, pushDecodedJSON(r.body, stack) {
            lua_setfield(stack.L, t, "json")
        }
        lua_rawgeti(stack.L, mm_registryindex(), lua_Integer(refs.requestMeta))
        lua_setmetatable(stack.L, t)
    }

    /// `req.params`: a route's captures by name.
    private func pushParams(_ captures: RouteCaptures, _ stack: LuaStack) {
        stack.newTable(hash: Int32(captures.count))
        // Key, then value, then a raw set: no rotation into place (the table is new: no metatable).
        captures.forEach { k, v in stack.push(k); stack.push(v); lua_rawset(stack.L, -3) }
    }

    /// `__index` of request tables: the lazily computed fields.
    private func requestIndex(_ stack: LuaStack) throws -> Int32 {
        guard let key = stack.string(at: 2), let context = current else { stack.pushNil(); return 1 }
        let request = context.request
        _ = stack.ensure(6)
        switch key {
        case "method": stack.push(request.method)
        case "path": stack.push(request.path)
        case "id": stack.push(request.id)
        case "params": pushParams(context.captures, stack)
        case "url": stack.push(request.url)
        case "scheme": stack.push(request.scheme)
        case "host": stack.push(request.host)
        case "port":
            guard let port = request.effectivePort else { stack.pushNil(); return 1 }
            stack.push(port)
        case "body": stack.push(bytes: request.body)
        case "query":
            stack.newTable()
            for item in request.queryItems {
                let seen = stack.getField(-1, item.name) != LUA_TNIL
                stack.pop()
                if seen { continue }   // the first value wins; query_all has them all
                stack.push(item.value ?? "")
                stack.setField(-2, item.name)
            }
        case "headers":
            stack.newTable(hash: Int32(clamping: request.headers.fields.count))
            for field in request.headers {
                let name = field.name.asciiLowercased
                if stack.getField(-1, name) == LUA_TSTRING {
                    let joined = (stack.string(at: -1) ?? "") + ", " + field.value
                    stack.pop()
                    stack.push(joined)
                } else {
                    stack.pop()
                    stack.push(field.value)
                }
                stack.setField(-2, name)
            }
        case "json":
            if request.hasDecodedJSON {
                guard let json = request.json else { stack.pushNil(); return 1 }
                push(json: json, stack)
            } else if request.body.isEmpty || !pushDecodedJSON(request.body, stack) {
                stack.pushNil()
                return 1
            }
        case "cookies":
            stack.newTable()
            for (k, v) in request.cookies { stack.push(v); stack.setField(-2, k) }
        case "query_all":
            stack.newTable()
            var lists: [String: [String]] = [:]
            var order: [String] = []
            for item in request.queryItems {
                if lists[item.name] == nil { order.append(item.name) }
                lists[item.name, default: []].append(item.value ?? "")
            }
            for name in order {
                stack.newTable(array: Int32(lists[name]!.count))
                for (i, v) in lists[name]!.enumerated() { stack.push(v); stack.setIndex(-2, Int64(i + 1)) }
                stack.setField(-2, name)
            }
        default:
            stack.pushNil()
            return 1
        }
        // cache on the table: rawset(req, key, value)
        stack.pushValue(at: -1)
        stack.setField(1, key)
        return 1
    }
}

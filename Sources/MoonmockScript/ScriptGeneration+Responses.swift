import CLua
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// Converts the value at `i` to a response: `nil`/`false` → `nil` (fall through), a string →
    /// `text/plain`, a `mock.*` response value, or any other table → JSON 200.
    func responseSpec(at i: Int32, _ stack: LuaStack) throws -> ResponseSpec? {
        switch stack.type(at: i) {
        case LUA_TNIL, LUA_TNONE: return nil
        case LUA_TBOOLEAN where !stack.bool(at: i): return nil
        case LUA_TSTRING:
            return .fixed(MockResponse(status: 200, headers: textHeaders, body: stack.bytes(at: i) ?? []), explicitStatus: false)
        case LUA_TTABLE:
            let t = stack.absolute(i)
            if hasMetatable(t, refs.resp, stack) { return try responseValue(t, stack) }
            let body = try encodeJSON(at: t, stack)
            // This VM's own copy of the header list: retaining the shared static one for every
            // response would move its reference count between the workers' cores.
            return .fixed(MockResponse(status: 200, headers: jsonHeaders, body: body), explicitStatus: false)
        default:
            throw LuaError.host("a handler must return a table, a string, a mock.* response or nil, not a \(stack.typeName(at: i))")
        }
    }

    private func responseValue(_ t: Int32, _ stack: LuaStack) throws -> ResponseSpec {
        guard stack.ensure(6) else { throw LuaError.host("stack overflow") }
        stack.getField(t, "kind")
        let kind = stack.string(at: -1) ?? ""
        stack.pop()

        if kind == "sequence" {
            stack.getField(t, "id")
            let id = Int(stack.integer(at: -1) ?? 0)
            stack.pop()
            stack.getField(t, "items")
            defer { stack.pop() }
            let items = stack.top
            var specs: [ResponseSpec] = []
            for k in 1...max(1, stack.rawLength(items)) {
                stack.getIndex(items, Int64(k))
                defer { stack.pop() }
                guard let spec = try responseSpec(at: -1, stack) else { throw LuaError.host("sequence item \(k) is nil") }
                specs.append(spec)
            }
            return .sequence(id: id, items: specs)
        }

        var response = MockResponse()
        var explicit = false
        if stack.getField(t, "status") == LUA_TNUMBER {
            response.status = Int(stack.integer(at: -1) ?? 200)
            explicit = true
        }
        stack.pop()
        stack.getField(t, "body")
        response.body = stack.bytes(at: -1) ?? []
        stack.pop()
        stack.getField(t, "empty")
        let empty = stack.bool(at: -1)
        stack.pop()

        switch kind {
        case "json": response.headers["Content-Type"] = "application/json; charset=utf-8"
        case "text":
            if !empty {
                response.headers["Content-Type"] = "text/plain; charset=utf-8"
                response.headers["Accept-Ranges"] = "bytes"
            }
        case "file":
            stack.getField(t, "path")
            response.headers["Content-Type"] = MIMEType.forPath(stack.string(at: -1) ?? "")
            response.headers["Accept-Ranges"] = "bytes"
            stack.pop()
        case "template":
            stack.getField(t, "content_type")
            response.headers["Content-Type"] = stack.string(at: -1)
            stack.pop()
        case "fault", "raw": break
        case "stream": response.fault = .stream(try streamPlan(t, stack, into: &response))
        case "websocket":
            response.headers["Content-Type"] = "text/plain; charset=utf-8"
            response.fault = .websocket(try webSocketRoute(t, stack))
        case "proxy": response.proxy = try proxyTarget(t, stack)
        case "variants": throw LuaError.host("mock.variants must be a rule's response itself, not returned by a handler or nested")
        default: throw LuaError.host("unknown response kind '\(kind)'")
        }

        var headerTemplates: [HeaderTemplate] = []
        if stack.getField(t, "headers") == LUA_TTABLE {
            for (name, value) in try headerValues(at: -1, stack) {
                switch value {
                case .list(let values):
                    response.headers[name] = nil
                    for value in values { response.headers.add(name, value) }
                case .template(let template):
                    headerTemplates.append(HeaderTemplate(name: name, template: template))
                }
            }
        }
        stack.pop()
        stack.getField(t, "delay")
        response.delay = try delaySpec(at: -1, stack)
        stack.pop()

        if stack.getField(t, "fault") != LUA_TNIL {
            let name = stack.string(at: -1) ?? ""
            stack.getField(t, "bytes_per_second")
            let bps = stack.integer(at: -1)
            stack.pop()
            if let bps, bps <= 0 { stack.pop(); throw LuaError.host("bytes_per_second must be positive") }
            guard let fault = Fault(name: name, bytesPerSecond: bps.map { Int($0) }) else {
                stack.pop()
                throw LuaError.host("unknown fault '\(name)' (expected one of: \(Fault.names.joined(separator: ", ")))")
            }
            response.fault = fault
            if kind == "fault", case .dribble = fault {} else if kind == "fault" { response.status = 0 }
        }
        stack.pop()

        stack.getField(t, "conditional")
        let conditional = stack.bool(at: -1)
        stack.pop()
        let spec = try responseBody(kind, t, response, headerTemplates, explicit, stack)
        return conditional ? .conditional(spec) : spec
    }

    /// The spec of a built response: fixed, or rendered per request when it has templates.
    private func responseBody(_ kind: String, _ t: Int32, _ response: MockResponse, _ headerTemplates: [HeaderTemplate],
                              _ explicit: Bool, _ stack: LuaStack) throws -> ResponseSpec {
        if kind == "template" {
            stack.getField(t, "template")
            let id = Int(stack.integer(at: -1) ?? 0)
            stack.pop()
            let escape = response.headers["Content-Type"]?.contains("json") ?? false
            return .template(templates[id], headers: headerTemplates, base: response, escapeJSON: escape, explicitStatus: explicit)
        }
        if !headerTemplates.isEmpty {
            return .template(nil, headers: headerTemplates, base: response, escapeJSON: false, explicitStatus: explicit)
        }
        return .fixed(response, explicitStatus: explicit)
    }

    /// A `mock.proxy(base, opts)` value's target; a header given as `false` is removed.
    func proxyTarget(_ t: Int32, _ stack: LuaStack) throws -> ProxyTarget {
        stack.getField(t, "base")
        let base = stack.string(at: -1) ?? ""
        stack.pop()
        stack.getField(t, "timeout")
        let timeout = stack.number(at: -1).map { Int($0.rounded(.up)) } ?? 30_000
        stack.pop()
        stack.getField(t, "insecure")
        let insecure = stack.bool(at: -1)
        stack.pop()
        var headers: [(name: String, value: String)] = []
        if stack.getField(t, "proxy_headers") == LUA_TTABLE {
            let h = stack.top
            lua_pushnil(stack.L)
            while lua_next(stack.L, h) != 0 {
                defer { stack.pop() }
                guard let name = stack.string(at: -2), stack.isString(at: -2) else { lua_settop(stack.L, h); throw LuaError.host("mock.proxy headers: names must be strings") }
                if stack.type(at: -1) == LUA_TBOOLEAN && !stack.bool(at: -1) {
                    headers.append((name, ""))
                } else if let value = stack.string(at: -1) {
                    headers.append((name, value))
                } else {
                    lua_settop(stack.L, h)
                    throw LuaError.host("mock.proxy headers.\(name) must be a string (or false to remove it)")
                }
            }
        }
        stack.pop()
        return ProxyTarget(base: base, headers: headers.sorted { $0.name < $1.name }, timeoutMilliseconds: timeout, insecure: insecure)
    }

    /// `{ name = value }` pairs of strings (numbers accepted as values), sorted by name.
    /// A response header's value in the script: a string, a list of strings (the field
    /// repeated: `Set-Cookie`, `Link`), or a `mock.template(...)` rendered per request.
    enum HeaderValue {
        case list([String])
        case template(Template)
    }

    /// The `headers` table at `i`, sorted by name.
    func headerValues(at i: Int32, _ stack: LuaStack) throws -> [(String, HeaderValue)] {
        let t = stack.absolute(i)
        var pairs: [(String, HeaderValue)] = []
        lua_pushnil(stack.L)
        while lua_next(stack.L, t) != 0 {
            defer { stack.pop() }
            guard stack.isString(at: -2), let key = stack.string(at: -2) else {
                lua_settop(stack.L, t)
                throw LuaError.host("headers names must be strings")
            }
            if let value = stack.string(at: -1) {
                pairs.append((key, .list([value])))
                continue
            }
            let v = stack.absolute(-1)
            func failure() -> LuaError {
                let type = stack.typeName(at: v)
                lua_settop(stack.L, t)
                return LuaError.host("headers.\(key) must be a string, a list of strings or a mock.template(...), got \(type)")
            }
            guard stack.isTable(at: v) else { throw failure() }
            if hasMetatable(v, refs.resp, stack) {
                stack.getField(v, "kind")
                let kind = stack.string(at: -1)
                stack.pop()
                guard kind == "template" else { throw failure() }
                stack.getField(v, "template")
                let id = Int(stack.integer(at: -1) ?? 0)
                stack.pop()
                pairs.append((key, .template(templates[id])))
                continue
            }
            let n = stack.rawLength(v)
            guard n > 0 else { throw failure() }
            var values: [String] = []
            for k in 1...n {
                stack.getIndex(v, Int64(k))
                let value = stack.string(at: -1)
                stack.pop()
                guard let value else { throw failure() }
                values.append(value)
            }
            pairs.append((key, .list(values)))
        }
        return pairs.sorted { $0.0 < $1.0 }
    }

    func stringPairs(at i: Int32, _ stack: LuaStack, _ what: String) throws -> [(String, String)] {
        let t = stack.absolute(i)
        var pairs: [(String, String)] = []
        lua_pushnil(stack.L)
        while lua_next(stack.L, t) != 0 {
            defer { stack.pop() }
            guard stack.isString(at: -2), let key = stack.string(at: -2) else {
                lua_settop(stack.L, t)
                throw LuaError.host("\(what) names must be strings")
            }
            guard let value = stack.string(at: -1) else {
                let type = stack.typeName(at: -1)
                lua_settop(stack.L, t)
                throw LuaError.host("\(what).\(key) must be a string, got \(type)")
            }
            pairs.append((key, value))
        }
        return pairs.sorted { $0.0 < $1.0 }
    }

    /// `delay`: milliseconds, `{ min =, max = }` or `{ median =, sigma = }`.
    func delaySpec(at i: Int32, _ stack: LuaStack) throws -> DelaySpec? {
        switch stack.type(at: i) {
        case LUA_TNIL, LUA_TNONE: return nil
        case LUA_TNUMBER:
            let ms = stack.number(at: i) ?? 0
            guard ms >= 0 else { throw LuaError.host("delay must not be negative") }
            return .fixed(ms)
        case LUA_TTABLE:
            let t = stack.absolute(i)
            func field(_ name: String) -> Double? {
                stack.getField(t, name)
                defer { stack.pop() }
                return stack.number(at: -1)
            }
            if let lo = field("min"), let hi = field("max") {
                guard lo >= 0, hi >= lo else { throw LuaError.host("delay needs 0 <= min <= max") }
                return .uniform(min: lo, max: hi)
            }
            if let median = field("median"), let sigma = field("sigma") {
                guard median > 0, sigma >= 0 else { throw LuaError.host("delay needs median > 0 and sigma >= 0") }
                return .logNormal(median: median, sigma: sigma)
            }
            throw LuaError.host("delay must be milliseconds, { min =, max = } or { median =, sigma = }")
        default:
            throw LuaError.host("delay must be a number or a table, got \(stack.typeName(at: i))")
        }
    }
}

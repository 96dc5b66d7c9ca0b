import CLua
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// `H.register(spec)`: turns the prelude's rule table into a ``Rule``. Returns `true`, or
    /// `nil, message` for the prelude to raise at the script's line.
    func hostRegister(_ stack: LuaStack) throws -> Int32 {
        reportingFailure(stack) { registered.append(try makeRule(stack)) }
    }

    private func makeRule(_ stack: LuaStack) throws -> Rule {
        guard stack.isTable(at: 1), stack.ensure(8) else { throw LuaError.host("bad rule") }
        let L = stack.L
        func string(_ key: String, in t: Int32 = 1) -> String? {
            stack.getField(t, key)
            defer { stack.pop() }
            return stack.string(at: -1)
        }

        let method = string("method")
        let patternText = string("path") ?? "/"
        let pattern: RoutePattern
        do { pattern = try RoutePattern(patternText) } catch { throw LuaError.host(String(describing: error)) }
        var location = string("where") ?? ""
        if location.hasSuffix(": ") { location.removeLast(2) }

        // rule opts
        stack.getField(1, "opts")
        let opts = stack.top
        var defaults = RuleDefaults()
        var times: Int?
        var priority = 0
        var name = string("name", in: opts) ?? string("default_name")
        if stack.getField(opts, "status") != LUA_TNIL {
            guard let s = stack.integer(at: -1), (100...599).contains(s) else {
                let given = stack.type(at: -1) == LUA_TNUMBER ? (stack.number(at: -1).map { "\($0)" } ?? "number")
                    : stack.type(at: -1) == LUA_TSTRING ? "string \"\(stack.string(at: -1) ?? "")\"" : String(cString: lua_typename(stack.L, stack.type(at: -1)))
                throw LuaError.host("status must be an integer from 100 to 599, got \(given)")
            }
            defaults.status = Int(s)
        }
        stack.pop()
        if stack.getField(opts, "headers") == LUA_TTABLE {
            for (k, v) in try headerValues(at: -1, stack) {
                guard case .list(let values) = v else { throw LuaError.host("headers.\(k): a rule's default headers are strings, not templates") }
                for value in values { defaults.headers.add(k, value) }
            }
        } else if !stack.isNil(at: -1) {
            throw LuaError.host("headers must be a table")
        }
        stack.pop()
        stack.getField(opts, "delay")
        defaults.delay = try delaySpec(at: -1, stack)
        stack.pop()
        if stack.getField(opts, "times") != LUA_TNIL {
            guard let n = stack.integer(at: -1), n >= 1 else { throw LuaError.host("times must be a positive integer") }
            times = Int(n)
        }
        stack.pop()
        if stack.getField(opts, "priority") != LUA_TNIL {
            guard let n = stack.integer(at: -1) else { throw LuaError.host("priority must be an integer") }
            priority = Int(n)
        }
        stack.pop()
        if name != nil && name!.isEmpty { name = nil }
        var chaosPolicy: ChaosPolicy?
        if stack.getField(opts, "chaos") != LUA_TNIL {
            guard stack.isTable(at: -1) else { throw LuaError.host("chaos must be a table such as { error_rate = 0.1 }") }
            do { chaosPolicy = try ChaosPolicy(json: try json(at: -1, stack), scoped: false) } catch { throw LuaError.host(Self.unprefixed(String(describing: error))) }
        }
        stack.pop()
        stack.pop()   // opts

        // predicates
        var predicates: [Predicate] = []
        if let host = string("host") {
            let want = host.asciiLowercased
            predicates.append(Predicate("host = \(want)") { req, _ in
                req.host == want ? nil : "host: expected \(want), got \(req.host)"
            })
        }
        let operation = string("graphql")
        if let operation { predicates.append(.graphQL(operation: operation)) }
        var queryNames: Set<String> = [], singleQueryNames: Set<String> = []
        for (field, make) in [("query", Predicate.query), ("headers", Predicate.header)] as [(String, (String, ValueMatcher) -> Predicate)] {
            if stack.getField(1, field) == LUA_TTABLE {
                let t = stack.top
                var entries: [(String, Predicate)] = []
                lua_pushnil(L)
                while lua_next(L, t) != 0 {
                    guard let key = stack.isString(at: -2) ? stack.string(at: -2) : nil else {
                        throw LuaError.host("\(field) names must be strings")
                    }
                    if field == "query", let values = try stringList(at: -1, stack, "query.\(key)") {
                        entries.append((key, .queryValues(key, values)))
                        queryNames.insert(key)
                    } else {
                        let matcher = try valueMatcher(at: -1, stack, "\(field).\(key)")
                        entries.append((key, make(key, matcher)))
                        if field == "query", case .absent = matcher {} else if field == "query" {
                            queryNames.insert(key)
                            singleQueryNames.insert(key)
                        }
                    }
                    stack.pop()
                }
                predicates += entries.sorted { $0.0 < $1.0 }.map(\.1)
            } else if !stack.isNil(at: -1) {
                throw LuaError.host("\(field) must be a table")
            }
            stack.pop()
        }
        stack.getField(1, "exact_query")
        let exactQuery = stack.bool(at: -1)
        stack.pop()
        if exactQuery { predicates.append(.queryExactly(declared: queryNames, single: singleQueryNames)) }
        if stack.getField(1, "json") != LUA_TNIL {
            guard stack.isTable(at: -1) else { throw LuaError.host("json must be a table (a subset of the expected body)") }
            predicates.append(.json(try json(at: -1, stack)))
        }
        stack.pop()
        if stack.getField(1, "variables") != LUA_TNIL {
            predicates.append(.graphQLVariables(try json(at: -1, stack)))
        }
        stack.pop()
        if stack.getField(1, "body") != LUA_TNIL {
            predicates.append(.body(try valueMatcher(at: -1, stack, "body")))
        }
        stack.pop()
        // The prelude's own handlers (mock.resource's, mock.grpc's) name the script functions they
        // call (`checks`) for the VM-sharing check, which reads those instead of the prelude's code.
        var vouched = false
        if stack.getField(1, "checks") == LUA_TTABLE {
            vouched = true
            for i in stride(from: 1, through: stack.rawLength(-1), by: 1) {
                if stack.getIndex(-1, Int64(i)) == LUA_TFUNCTION { perRequestFunctions.append(luaL_ref(L, mm_registryindex())) } else { stack.pop() }
            }
        }
        stack.pop()
        if stack.getField(1, "when") == LUA_TFUNCTION {
            let ref = luaL_ref(L, mm_registryindex())
            if !vouched { perRequestFunctions.append(ref) }
            predicates.append(Predicate("when(req)", isCustomCode: true) { [unowned self] req, params in
                self.callWhen(ref, req, params)
            })
        } else {
            stack.pop()
        }

        // responder
        let ruleDefaults = defaults
        let ruleID = name ?? Rule.defaultID(method: method, pattern: pattern)
        stack.getField(1, "respond")
        let responder: Responder
        var callsLua = true
        var fixed = false
        var waits = false
        if let variants = try variantHandlers(at: -1, stack, vouched: vouched) {
            stack.pop()
            variantDeclarations.append(.init(rule: ruleID, names: variants.names, defaultName: variants.defaultName))
            let engine = self.engine
            responder = { [unowned self] context in
                let active = engine.variants.active(for: ruleID) ?? variants.defaultName
                guard let handler = variants.handlers[active] else { return nil }
                let result: (MockResponse, explicitStatus: Bool)?
                switch handler {
                case .function(let ref): result = try self.callHandler(ref, context, ruleDefaults)
                case .value(let spec): result = try spec.realize(context, self)
                }
                return result.map { ruleDefaults.apply(to: $0.0, explicitStatus: $0.explicitStatus) }
            }
        } else if stack.isFunction(at: -1) {
            let ref = luaL_ref(L, mm_registryindex())
            // The prelude's own handlers (mock.resource's) name the script functions they call
            // (hooks) for the VM-sharing check; their own per-VM caches follow the shared store.
            waits = true
            if vouched {
                // mock.resource's handlers use the store from Swift too; mock.grpc's may wait (`waits`).
                stack.getField(1, "waits")
                waits = stack.bool(at: -1)
                stack.pop()
            } else {
                perRequestFunctions.append(ref)
            }
            responder = { [unowned self] context in
                guard let (response, explicit) = try self.callHandler(ref, context, ruleDefaults) else { return nil }
                return ruleDefaults.apply(to: response, explicitStatus: explicit)
            }
        } else {
            guard let spec = try responseSpec(at: -1, stack) else { throw LuaError.host("missing handler") }
            stack.pop()
            try Self.checkParameters(of: spec, against: pattern)
            callsLua = false   // a value (fixed, template, sequence) is realized in Swift
            if case .fixed = spec { fixed = true }
            // A fixed answer or a sequence uses the store only for its budget or its position,
            // both of which a loop with its own store connection counts without blocking.
            if case .fixed = spec { waits = true } else if case .sequence = spec { waits = true }
            responder = { [unowned self] context in
                let (response, explicit) = try spec.realize(context, self)
                if case .suspended(let s)? = response.fault {   // a sequence's position in the shared store
                    return .fault(.suspended(s.mapped { ruleDefaults.apply(to: $0, explicitStatus: true) }))
                }
                return ruleDefaults.apply(to: response, explicitStatus: explicit)
            }
        }
        let rule = Rule(id: name, method: method, pattern: pattern, predicates: predicates, times: times,
                        priority: priority, location: location.isEmpty ? nil : location, graphQLOperation: operation,
                        mayUseStore: !fixed || predicates.contains(where: \.isCustomCode),
                        storeWaits: waits,
                        chaos: chaosPolicy.map { ChaosRunner($0, seed: SeededRandom.mix(engine.environment.seed, SeededRandom.seed("rule:\(name ?? Rule.defaultID(method: method, pattern: pattern))@\(location)"))) },
                        answerCache: string("cache_version").map(AnswerCache.init(versionKey:)),
                        liveStream: { stack.getField(1, "live"); defer { stack.pop() }; return stack.bool(at: -1) }(),
                        responder: responder)
        if callsLua { luaResponders.insert(ObjectIdentifier(rule)) }
        return rule
    }

    /// A template's `{{req.params.NAME}}` that the rule's pattern can never fill is a load error.
    static func checkParameters(of spec: ResponseSpec, against pattern: RoutePattern) throws {
        switch spec {
        case .template(let template, let headers, _, _, _):
            let known = pattern.parameterNames
            for name in (template?.parameterNames ?? []) + headers.flatMap(\.template.parameterNames) where !known.contains(name) {
                let has = known.isEmpty ? "it has none" : "it has: " + known.joined(separator: ", ")
                let near = EditDistance.nearest(to: name, among: known).map { "; did you mean {{req.params.\($0)}}?" } ?? ""
                throw LuaError.host("{{req.params.\(name)}}: the pattern \(pattern.source) has no parameter '\(name)' (\(has))\(near)")
            }
        case .sequence(_, let items):
            for item in items { try checkParameters(of: item, against: pattern) }
        case .conditional(let spec):
            try checkParameters(of: spec, against: pattern)
        case .fixed:
            break
        }
    }

    /// A rule's `mock.variants{...}`: each variant a handler function or a response value.
    struct Variants {
        enum Handler {
            case function(Int32)
            case value(ResponseSpec)
        }
        let names: [String]
        let defaultName: String
        let handlers: [String: Handler]
    }

    /// The variants at `i` when it is a `mock.variants{...}` value, else `nil`.
    private func variantHandlers(at i: Int32, _ stack: LuaStack, vouched: Bool = false) throws -> Variants? {
        guard stack.isTable(at: i) else { return nil }
        let t = stack.absolute(i)
        guard hasMetatable(t, refs.resp, stack) else { return nil }
        stack.getField(t, "kind")
        defer { stack.pop() }
        guard stack.string(at: -1) == "variants" else { return nil }
        stack.getField(t, "default")
        let defaultName = stack.string(at: -1) ?? ""
        stack.pop()
        stack.getField(t, "items")
        let items = stack.top
        defer { stack.pop() }
        var handlers: [String: Variants.Handler] = [:]
        lua_pushnil(stack.L)
        while lua_next(stack.L, items) != 0 {
            let name = stack.string(at: -2) ?? ""
            if stack.isFunction(at: -1) {
                let ref = luaL_ref(stack.L, mm_registryindex())   // pops the value
                if !vouched { perRequestFunctions.append(ref) }
                handlers[name] = .function(ref)
                continue
            }
            defer { stack.pop() }
            guard let spec = try responseSpec(at: -1, stack) else { throw LuaError.host("variant '\(name)' has no response") }
            handlers[name] = .value(spec)
        }
        return Variants(names: handlers.keys.sorted(), defaultName: defaultName, handlers: handlers)
    }

    /// A string (equality), a number (as text), `mock.present`, `mock.absent` or `mock.match(p)`.
    /// A plain table at `i` as a list of strings (every value of a query parameter, in order);
    /// `nil` for anything else (a matcher, a string).
    private func stringList(at i: Int32, _ stack: LuaStack, _ what: String) throws -> [String]? {
        let t = stack.absolute(i)
        guard stack.isTable(at: t), !hasMetatable(t, refs.matcher, stack) else { return nil }
        let n = stack.rawLength(t)
        var values: [String] = []
        if n > 0 {
            for k in 1...n {
                stack.getIndex(t, Int64(k))
                defer { stack.pop() }
                guard stack.type(at: -1) == LUA_TSTRING || stack.type(at: -1) == LUA_TNUMBER, let v = stack.string(at: -1) else {
                    throw LuaError.host("\(what)[\(k)] must be a string, got \(stack.typeName(at: -1))")
                }
                values.append(v)
            }
        }
        guard !values.isEmpty else { throw LuaError.host("\(what) must be a string, a list of strings, mock.present, mock.absent or mock.match(...)") }
        return values
    }

    private func valueMatcher(at i: Int32, _ stack: LuaStack, _ what: String) throws -> ValueMatcher {
        switch stack.type(at: i) {
        case LUA_TSTRING, LUA_TNUMBER:
            return .equals(stack.string(at: i) ?? "")
        case LUA_TTABLE where hasMetatable(stack.absolute(i), refs.matcher, stack):
            let t = stack.absolute(i)
            stack.getField(t, "kind")
            let kind = stack.string(at: -1)
            stack.pop()
            switch kind {
            case "present": return .present
            case "absent": return .absent
            default:
                stack.getField(t, "pattern")
                let pattern = stack.string(at: -1) ?? ""
                stack.pop()
                return .checked("match '\(pattern)'") { [unowned self] value in self.luaFind(pattern, in: value) }
            }
        default:
            throw LuaError.host("\(what) must be a string, mock.present, mock.absent or mock.match(...), got \(stack.typeName(at: i))")
        }
    }

    // MARK: calls into the VM at request time

    /// Calls the Lua function under `ref` with the `req` table of `context` and lets `read`
    /// inspect its one result, all with exclusive use of the VM.
    func call<T>(_ ref: Int32, with context: RequestContext, _ read: (LuaStack) throws -> T) throws -> T {
        try withVM(context) {
            let stack = vm.stack
            let top = stack.top
            defer { stack.top = top }
            lua_rawgeti(vm.state, mm_registryindex(), lua_Integer(ref))
            pushRequest(context, stack)
            try vm.call(arguments: 1, results: 1)
            return try read(stack)
        }
    }

    /// `string.find(value, pattern)` with the sandbox's function: `nil` when it finds the pattern,
    /// else a reason (``Predicate/stoppedMarker`` first when the budget stopped it).
    func luaFind(_ pattern: String, in value: String) -> String? {
        withVM(nil) {
            let stack = vm.stack
            let top = stack.top
            defer { stack.top = top }
            lua_rawgeti(vm.state, mm_registryindex(), lua_Integer(refs.stringFind))
            stack.push(value)
            stack.push(pattern)
            do {
                try vm.call(arguments: 2, results: 1)
                return stack.isNil(at: -1) ? "no match" : nil
            } catch {
                let text = message(error)
                return text.contains("backtracks too much") ? Predicate.stoppedMarker + text : "no match (\(text))"
            }
        }
    }
}

import CLua
import LuaBridge
import MoonmockCore

extension SpecRunner {
    /// The host side of ``SpecPrelude``: a table of Swift functions, handed to the prelude with
    /// `debug.getinfo`. Runs with the spec generation's VM lock held.
    func installSpecAPI(_ spec: ScriptGeneration) throws {
        let vm = spec.vm, L = vm.state, s = vm.stack
        s.newTable()
        let S = s.top
        vm.setFunction("register", in: S) { [unowned self] stack in
            let name = try stack.checkString(1, "test name")
            let location = stack.string(at: 3) ?? "?"
            lua_pushvalue(stack.L, 2)
            pending.append((name, luaL_ref(stack.L, mm_registryindex()), location))
            return 0
        }
        vm.setFunction("request", in: S) { [unowned self] stack in
            guard let engine else { throw LuaError.host("request: only inside a test") }
            let method = try stack.checkString(1, "method")
            let target = try stack.checkString(2, "url")
            var headers = HTTPHeaders()
            if stack.type(at: 3) == LUA_TTABLE {
                lua_pushnil(stack.L)
                while lua_next(stack.L, 3) != 0 {
                    if let name = stack.string(at: -2), let value = stack.string(at: -1) { headers.add(name, value) }
                    stack.pop()
                }
            }
            let url = target.hasPrefix("/") ? "http://localhost" + target : target
            guard url.contains("://") else {
                throw LuaError.host("request: url must start with / (a path) or a scheme, got '\(target)'")
            }
            let exchange = engine.handle(MockRequest(method: method, url: url, headers: headers, body: stack.bytes(at: 4) ?? []))
            // The client waited for the delay: the clock moves by it.
            if exchange.delayMilliseconds > 0 { clock.advance(by: exchange.delayMilliseconds / 1000) }
            let response = exchange.response
            guard stack.ensure(6) else { throw LuaError.host("stack overflow") }
            stack.push(response.status)
            stack.newTable()
            for field in response.headers { stack.push(field.value); stack.setField(-2, field.name.asciiLowercased) }
            var body = response.body
            if case .stream(let plan)? = response.fault {
                // A streamed answer is read whole (a stream that stays open, up to its last piece):
                // the clock moves by its intervals, as a client reading it would see it.
                let cursor = plan.start()
                var reading = true, pieces = 0
                while reading, pieces < 10_000, let step = cursor.next() {
                    switch step {
                    case .send(let bytes):
                        body += bytes
                        pieces += 1
                    case .wait(let ms):
                        if !plan.closes && cursor.transcript.chunks >= plan.chunks.count { reading = false } else { clock.advance(by: ms / 1000) }
                    }
                }
            }
            stack.push(bytes: method == "HEAD" ? [] : body)
            stack.push(exchange.delayMilliseconds)
            switch response.fault {
            case nil: stack.pushNil()
            case .dribble?: stack.push("dribble")   // the body arrives whole, only slowly
            case let fault?: stack.push(fault.description)
            }
            return 5
        }
        vm.setFunction("advance", in: S) { [unowned self] stack in
            let ms = stack.number(at: 1) ?? 0
            clock.advance(by: ms / 1000)
            return 0
        }
        vm.setFunction("reset", in: S) { [unowned self] _ in
            do { engine = try freshEngine() } catch { throw LuaError.host("reset: \(error)") }
            return 0
        }
        spec.installStateFunctions(S, store: store)
        try vm.load(SpecPrelude.source, chunkName: SpecPrelude.chunkName)
        s.pushValue(at: S)
        lua_getfield(L, mm_registryindex(), LuaVM.debugRegistryKey)
        s.getField(-1, "getinfo")
        mm_remove(L, -2)
        try vm.call(arguments: 2, results: 0)
        s.pop()   // S
    }
}

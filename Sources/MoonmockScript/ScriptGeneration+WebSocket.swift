import CLua
import Dispatch
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// `H.ws_send(id, data, binary)`, `H.ws_close(id, code, reason)`, `H.ws_after(id, ms, token)`,
    /// `H.ws_list(pattern)`: what a `ws` object and `mock.websockets` do, on the engine's sockets.
    func installWebSocketHost(_ H: Int32) {
        vm.setFunction("ws_send", in: H) { [unowned self] stack in
            reportingFailure(stack) {
                let id = Int(try stack.checkInteger(1, "socket id"))
                let data = try stack.checkBytes(2)
                guard let socket = engine.websockets.socket(id) else { throw LuaError.host("ws:send: socket \(id) is closed") }
                if stack.bool(at: 3) {
                    socket.send(.binary(data))
                } else {
                    guard let text = String(validating: data, as: UTF8.self) else {
                        throw LuaError.host("ws:send: a text message must be UTF-8 (send bytes with ws:send_binary)")
                    }
                    socket.send(.text(text))
                }
            }
        }
        vm.setFunction("ws_close", in: H) { [unowned self] stack in
            reportingFailure(stack) {
                let id = Int(try stack.checkInteger(1, "socket id"))
                let code = Int(stack.integer(at: 2) ?? 1000)
                guard code == 1000 || (3000...4999).contains(code) || (1001...1014).contains(code) && ![1004, 1005, 1006].contains(code) else {
                    throw LuaError.host("ws:close: code must be 1000, 1001-1003, 1007-1014 or 3000-4999, got \(code)")
                }
                engine.websockets.socket(id)?.close(code: code, reason: stack.string(at: 3) ?? "")
            }
        }
        vm.setFunction("ws_after", in: H) { [unowned self] stack in
            reportingFailure(stack) {
                let id = Int(try stack.checkInteger(1, "socket id"))
                let ms = stack.number(at: 2) ?? 0
                guard ms >= 0, ms.isFinite else { throw LuaError.host("ws:after: give milliseconds >= 0") }
                engine.websockets.socket(id)?.after(ms, token: Int(try stack.checkInteger(3, "timer")))
            }
        }
        vm.setFunction("ws_list", in: H) { [unowned self] stack in
            let pattern = stack.string(at: 1).flatMap { try? RoutePattern($0) }
            if stack.string(at: 1) != nil && pattern == nil {
                stack.pushNil()
                stack.push("mock.websockets: not a route pattern: \(stack.string(at: 1) ?? "")")
                return 2
            }
            let sockets = engine.websockets.list(matching: pattern)
            stack.newTable(array: Int32(sockets.count))
            let list = stack.top
            for (i, socket) in sockets.enumerated() {
                _ = stack.ensure(3)
                stack.newTable()
                stack.push(Int64(socket.id))
                stack.setField(-2, "id")
                stack.push(socket.request.path)
                stack.setField(-2, "path")
                lua_rawseti(stack.L, list, lua_Integer(i + 1))
            }
            return 1
        }
    }

    /// A `websocket` response value: `dispatch` (the route's Lua function that builds the `ws`
    /// object and calls the handlers), `pattern`. Its plain answer is the `426` the value holds.
    func webSocketRoute(_ t: Int32, _ stack: LuaStack) throws -> WebSocketRoute {
        guard stack.ensure(2) else { throw LuaError.host("stack overflow") }
        stack.getField(t, "pattern")
        let pattern = try stack.string(at: -1).map { try RoutePattern($0) }
        stack.pop()
        guard stack.getField(t, "dispatch") == LUA_TFUNCTION else {
            stack.pop()
            throw LuaError.host("mock.websocket: no handlers")
        }
        let ref = luaL_ref(stack.L, mm_registryindex())
        return WebSocketRoute(endpoint: LuaWebSocketEndpoint(generation: self, dispatch: ref, pattern: pattern))
    }

    /// Calls the route's dispatch function: `dispatch(kind, id, path, a, b)` where `push` pushes
    /// `a` and `b`; `context` serves `req` in `open`. An error closes the socket with 1011.
    func dispatchSocket(_ ref: Int32, _ kind: String, _ socket: WebSocketSession, context: RequestContext?,
                        _ push: (LuaStack) -> Void) {
        let failure: String? = withVM(context) {
            let stack = vm.stack
            let top = stack.top
            defer { stack.top = top }
            _ = stack.ensure(8)
            lua_rawgeti(vm.state, mm_registryindex(), lua_Integer(ref))
            stack.push(kind)
            stack.push(Int64(socket.id))
            stack.push(socket.request.path)
            let before = stack.top
            push(stack)
            while stack.top < before + 2 { stack.pushNil() }
            do {
                try vm.call(arguments: 5, results: 0)
                return nil
            } catch {
                return message(error)
            }
        }
        if let failure {
            socket.note(error: "\(kind): \(failure)")
            socket.close(code: 1011, reason: "handler error")
        }
    }
}

/// A `mock.websocket` route's handlers, in the VM of the generation that loaded them.
final class LuaWebSocketEndpoint: WebSocketEndpoint, @unchecked Sendable {
    private let generation: ScriptGeneration
    private let dispatch: Int32
    private let pattern: RoutePattern?

    init(generation: ScriptGeneration, dispatch: Int32, pattern: RoutePattern?) {
        self.generation = generation
        self.dispatch = dispatch
        self.pattern = pattern
    }

    func opened(_ socket: WebSocketSession, _ request: MockRequest) {
        let params = pattern?.match(request) ?? [:]
        let context = RequestContext.probe(request: request, params: params, engine: generation.engine)
        generation.dispatchSocket(dispatch, "open", socket, context: context) { stack in generation.pushRequest(context, stack) }
    }

    func received(_ socket: WebSocketSession, _ message: WebSocketMessage) {
        generation.dispatchSocket(dispatch, "message", socket, context: nil) { stack in
            stack.newTable()
            switch message {
            case .text(let text): stack.push(text); stack.setField(-2, "text")
            case .binary(let data): stack.push(bytes: data); stack.setField(-2, "binary")
            }
        }
    }

    func fired(_ socket: WebSocketSession, timer token: Int) {
        generation.dispatchSocket(dispatch, "timer", socket, context: nil) { stack in stack.push(Int64(token)) }
    }

    func closed(_ socket: WebSocketSession, code: Int, reason: String) {
        generation.dispatchSocket(dispatch, "close", socket, context: nil) { stack in
            stack.push(Int64(code))
            stack.push(reason)
        }
    }
}

import CLua
import LuaBridge
import MoonmockCore

extension ScriptGeneration {
    /// `mock.cors{ origins =, headers =, credentials =, max_age = }`: the socket server's CORS
    /// policy while this generation serves.
    func hostCORS(_ stack: LuaStack) throws -> Int32 {
        reportingFailure(stack) {
            func strings(_ i: Int32, _ what: String) throws -> [String] {
                switch stack.type(at: i) {
                case LUA_TNIL, LUA_TNONE: return []
                case LUA_TSTRING: return stack.string(at: i) == "*" ? [] : [stack.string(at: i) ?? ""]
                case LUA_TTABLE:
                    var out: [String] = []
                    var k: Int64 = 1
                    while true {
                        lua_rawgeti(stack.L, i, lua_Integer(k))
                        defer { stack.pop() }
                        if stack.isNil(at: -1) { break }
                        guard let s = stack.string(at: -1), stack.isString(at: -1) else { throw LuaError.host("\(what)[\(k)] must be a string") }
                        out.append(s)
                        k += 1
                    }
                    return out.contains("*") ? [] : out
                default: throw LuaError.host("\(what) must be a list of strings (or \"*\")")
                }
            }
            let origins = try strings(1, "origins"), headers = try strings(2, "headers")
            guard stack.isNil(at: 3) || stack.type(at: 3) == LUA_TBOOLEAN else { throw LuaError.host("credentials must be true or false") }
            let maxAge = stack.isNil(at: 4) ? 600 : Int(try stack.checkInteger(4, "max_age"))
            guard corsDeclaration == nil else { throw LuaError.host("declared twice: one mock.cors per script") }
            corsDeclaration = CORSPolicy(origins: origins, headers: headers, credentials: stack.bool(at: 3), maxAgeSeconds: maxAge)
        }
    }
}

import CLua

/// A Swift function callable from Lua. It reads its arguments from the stack, pushes its
/// results and returns how many. Throwing raises a Lua error (catchable with `pcall`) that
/// carries the caller's `chunk:line:` and the error's description.
public typealias HostFunction = (LuaStack) throws -> Int32

extension LuaVM {
    /// Pushes `function` as a Lua function value.
    ///
    /// ```swift
    /// vm.pushFunction { stack in stack.push("pong"); return 1 }
    /// ```
    public func pushFunction(_ function: @escaping HostFunction) {
        hostFunctions.append(function)
        mm_push_host_function(state, luaBridgeDispatch, Int64(hostFunctions.count - 1))
    }

    /// Sets the global `name` to a Swift function.
    ///
    /// ```swift
    /// vm.setGlobal("now") { stack in stack.push(42); return 1 }
    /// ```
    public func setGlobal(_ name: String, _ function: @escaping HostFunction) {
        pushFunction(function)
        lua_setglobal(state, name)
    }

    /// Sets `table[name]` (table at `index`) to a Swift function.
    public func setFunction(_ name: String, in index: Int32, _ function: @escaping HostFunction) {
        let t = lua_absindex(state, index)
        pushFunction(function)
        stack.setField(t, name)
    }
}

/// The single C-callable entry point for all host functions (reached through `mm_trampoline`).
/// It catches every Swift error and turns it into an error message plus -1, so the raise
/// itself happens in C after this frame has returned.
private func luaBridgeDispatch(_ L: OpaquePointer?) -> Int32 {
    guard let L, let owner = mm_extraspace(L).pointee else { return 0 }
    let vm = Unmanaged<LuaVM>.fromOpaque(owner).takeUnretainedValue()
    let index = Int(lua_tointegerx(L, mm_upvalueindex(2), nil))
    do {
        return try vm.hostFunctions[index](LuaStack(L))
    } catch {
        let message = (error as? LuaError)?.message ?? String(describing: error)
        _ = lua_checkstack(L, 2)
        LuaStack(L).push(callerPosition(L) + message)
        return -1
    }
}

/// `"chunk:line: "` of the nearest Lua caller whose chunk is user code. Chunks named with a
/// leading `=` (host preludes such as `=moonmock`) are skipped, so an error raised by a host
/// function called through a prelude wrapper points at the script line that called it.
private func callerPosition(_ L: OpaquePointer) -> String {
    var ar = lua_Debug()
    var level: Int32 = 1
    while lua_getstack(L, level, &ar) != 0 {
        level += 1
        guard lua_getinfo(L, "Sl", &ar) != 0, ar.currentline > 0, let source = ar.source else { continue }
        if source.pointee == UInt8(ascii: "=") { continue }
        let shortSource = withUnsafeBytes(of: &ar.short_src) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return "\(shortSource):\(ar.currentline): "
    }
    return ""
}

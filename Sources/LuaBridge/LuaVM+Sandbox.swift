import CLua

extension LuaVM {
    /// Registry key under which the unsandboxed `debug` table stays reachable for host preludes.
    public static let debugRegistryKey = "moonmock.debug"

    /// Removes everything that reaches outside the VM (DESIGN §2.6). Runs once, from `init`.
    func installSandbox() throws {
        let L = state
        // Keep `debug` for host code (tracebacks, error positions) before it leaves _G.
        lua_getglobal(L, "debug")
        lua_setfield(L, mm_registryindex(), Self.debugRegistryKey)
        guard sandboxed else { return }
        try evaluate(Self.sandboxPrelude, chunkName: "=sandbox")
    }

    private static let sandboxPrelude = """
    local load0, getmetatable0, select = load, getmetatable, select
    io, debug, package, dofile, loadfile = nil, nil, nil, nil, nil
    require = nil
    string.dump = nil
    for _, name in ipairs { "execute", "exit", "remove", "rename", "tmpname", "getenv", "setlocale" } do
      os[name] = nil
    end
    -- text chunks only; a 4th argument (even nil) sets the chunk's environment, as in Lua
    load = function(chunk, name, mode, ...)
      if mode ~= nil and mode ~= "t" then
        return nil, "load: only text chunks are allowed (mode '" .. tostring(mode) .. "' refused)"
      end
      if type(chunk) == "string" and chunk:byte(1) == 27 then
        return nil, "load: binary chunks are not allowed"
      end
      if select("#", ...) > 0 then return load0(chunk, name, "t", ...) end
      return load0(chunk, name, "t")
    end
    getmetatable0("").__metatable = false
    """
}

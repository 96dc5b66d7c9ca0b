import CLua

extension LuaVM {
    /// Registry key under which the unsandboxed `debug` table stays reachable for host preludes.
    public static let debugRegistryKey = "moonmock.debug"
    /// Registry key of the unsandboxed `string.dump`, for host code that reads bytecode.
    public static let dumpRegistryKey = "moonmock.dump"

    /// Removes everything that reaches outside the VM (DESIGN §2.6). Runs once, from `init`.
    func installSandbox() throws {
        let L = state
        // Keep `debug` for host code (tracebacks, error positions) before it leaves _G.
        lua_getglobal(L, "debug")
        lua_setfield(L, mm_registryindex(), Self.debugRegistryKey)
        lua_getglobal(L, "string")
        lua_getfield(L, -1, "dump")
        lua_setfield(L, mm_registryindex(), Self.dumpRegistryKey)
        lua_settop(L, -2)
        try installPatternGuard()
        guard sandboxed else { return }
        try evaluate(Self.sandboxPrelude, chunkName: "=sandbox")
    }

    /// A whitelist: every global and library function not named here is removed, so a Lua
    /// upgrade that adds a function cannot widen the sandbox by accident.
    private static let sandboxPrelude = """
    local allowed = {
      assert = true, error = true, getmetatable = true, ipairs = true, next = true, pairs = true,
      pcall = true, print = true, rawequal = true, rawget = true, rawlen = true, rawset = true,
      select = true, setmetatable = true, tonumber = true, tostring = true, type = true, xpcall = true,
      _G = true, _VERSION = true, load = true, collectgarbage = true,
      coroutine = "*", math = "*", table = "*", utf8 = "*",
      string = { byte = 1, char = 1, find = 1, format = 1, gmatch = 1, gsub = 1, len = 1, lower = 1,
                 match = 1, pack = 1, packsize = 1, rep = 1, reverse = 1, sub = 1, unpack = 1, upper = 1 },
      os = { clock = 1, date = 1, difftime = 1, time = 1 },
    }
    local load0, getmetatable0, select0, pairs0, next0, type0 = load, getmetatable, select, pairs, next, type
    local gc0 = collectgarbage
    local names = {}
    for name in pairs0(_G) do names[#names + 1] = name end
    for _, name in ipairs(names) do
      local rule = allowed[name]
      if not rule then
        _G[name] = nil
      elseif type0(rule) == "table" then
        local lib = _G[name]
        local fields = {}
        for field in pairs0(lib) do fields[#fields + 1] = field end
        for _, field in ipairs(fields) do
          if not rule[field] then lib[field] = nil end
        end
      end
    end
    -- text chunks only; a 4th argument (even nil) sets the chunk's environment, as in Lua
    load = function(chunk, name, mode, ...)
      if mode ~= nil and mode ~= "t" then
        return nil, "load: only text chunks are allowed (mode '" .. tostring(mode) .. "' refused)"
      end
      if type0(chunk) == "string" and chunk:byte(1) == 27 then
        return nil, "load: binary chunks are not allowed"
      end
      if select0("#", ...) > 0 then return load0(chunk, name, "t", ...) end
      return load0(chunk, name, "t")
    end
    -- stopping or retuning the collector would let one script starve the others of memory
    local gc_allowed = { collect = true, count = true, step = true, isrunning = true }
    collectgarbage = function(opt, ...)
      opt = opt or "collect"
      if not gc_allowed[opt] then error("collectgarbage('" .. tostring(opt) .. "') is not allowed in the sandbox", 2) end
      return gc0(opt, ...)
    end
    getmetatable0("").__metatable = false
    """
}

/// The check behind `--vms auto` (DESIGN §5, "VMs and threads"): whether a script's
/// per-request code can run on several Lua VMs without any answer showing that each VM has its
/// own copy of the script's locals and globals.
///
/// It reads the bytecode of every function a request runs (handlers, variants, `when`
/// predicates) and of every function they call, following values the script made when it
/// loaded. A script is shareable when none of that code
/// - assigns a variable kept from the load (an upvalue or a global), or a field of a table made
///   at load (`counts[id] = …`, `table.insert(log, …)`);
/// - iterates with `pairs` or `next` (Lua's order differs from VM to VM);
/// - turns a load-time table or function into text (`tostring`, `%s`: an address);
/// - calls a function the check cannot see into (a C function it does not know, a value it
///   cannot follow).
/// Per-request values (the request, tables and closures a handler makes) may be changed freely.
/// Host services (`mock.state`, `mock.log`, the builders, `mock.uuid`, `math.random`) are shared
/// by every VM already. The check also fingerprints what the script made at load (values, code,
/// upvalues), so that VMs whose loads differ (`mock.uuid()` at load) are caught.
///
/// Anything it cannot prove gives one VM and a reason, never a wrong answer.
enum SharingCheck {
    static let chunkName = "=moonmock-sharing"

    /// Registry key of the snapshot ``snapshotSource`` makes.
    static let pristineKey = "moonmock.pristine"

    /// Run after the prelude and before the script: the globals, libraries and `mock` API as
    /// the host made them, which the check trusts (the script may replace any of them).
    static let snapshotSource = #"""
    local G, mock, getmeta = ...
    local function copy(t) local c = {}; for k, v in next, t do c[k] = v end; return c end
    local p = copy(G)
    for _, lib in ipairs { "string", "math", "table", "utf8", "os", "coroutine", "io", "debug" } do
      if type(G[lib]) == "table" then p[lib] = copy(G[lib]) end
    end
    -- `mock`, `mock.json` and `mock.state` are read-only faces whose __pairs lists the real tables.
    local function copyFace(t) local c = {}; for k, v in pairs(t) do c[k] = v end; return c end
    p.mock, p.json, p.state, p.fake = copyFace(mock), copyFace(mock.json), copyFace(mock.state), copyFace(mock.fake)
    p.faces = { mock, mock.json, mock.state, mock.fake }
    local face = getmeta(mock.json)
    local real = face and rawget(face, "__index")
    local jm = type(real) == "table" and getmeta(real) or face
    p.jsonCall = jm and rawget(jm, "__call")
    -- What reads of a missing global, mock.* or mock.state.* name call: they only raise.
    local function indexer(t) local m = getmeta(t); local f = m and rawget(m, "__index"); return type(f) == "function" and f or nil end
    p.raisers = { indexer(G) }
    for _, f in ipairs { mock, mock.state, mock.fake } do
      local m = getmeta(f)
      local real = m and rawget(m, "__index")
      if type(real) == "table" then p.raisers[#p.raisers + 1] = indexer(real) end
    end
    return p
    """#

    /// Called, with ``pristineKey``'s table as its `_ENV`, with (entries, globals, pristine,
    /// requestMeta, string.dump, debug.getupvalue, debug.getmetatable, debug.getinfo); returns
    /// `true, fingerprint` or `false, reason`.
    static let source = [prologueSource, trustSource, interpreterSource, callsSource].joined(separator: "\n")
}

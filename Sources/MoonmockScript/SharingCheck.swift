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
    p.mock, p.json, p.state = copyFace(mock), copyFace(mock.json), copyFace(mock.state)
    p.faces = { mock, mock.json, mock.state }
    local face = getmeta(mock.json)
    local real = face and rawget(face, "__index")
    local jm = type(real) == "table" and getmeta(real) or face
    p.jsonCall = jm and rawget(jm, "__call")
    -- What reads of a missing global, mock.* or mock.state.* name call: they only raise.
    local function indexer(t) local m = getmeta(t); local f = m and rawget(m, "__index"); return type(f) == "function" and f or nil end
    p.raisers = { indexer(G) }
    for _, f in ipairs { mock, mock.state } do
      local m = getmeta(f)
      local real = m and rawget(m, "__index")
      if type(real) == "table" then p.raisers[#p.raisers + 1] = indexer(real) end
    end
    return p
    """#

    /// Called, with ``pristineKey``'s table as its `_ENV`, with (entries, globals, pristine,
    /// requestMeta, string.dump, debug.getupvalue, debug.getmetatable, debug.getinfo); returns
    /// `true, fingerprint` or `false, reason`.
    static let source = #"""
-- Whether a script's per-request code can run on several VMs without a difference showing.
-- Called as check(entries, world, pristine, requestMeta, dump, getupvalue, getmeta, getinfo)
-- and returns true, fingerprint  or  false, reason. Its _ENV is `pristine`: the globals and
-- libraries as they were before the script ran (the script may replace any of them), and it
-- never uses a string method (the string metatable is the script's to change).
local entries, env, pristine, requestMeta, dump, getupvalue, getmeta, getinfo = ...
local type, pairs, ipairs, next, tostring, error, pcall = type, pairs, ipairs, next, tostring, error, pcall
local rawget, sunpack, concat, sort, mtype = rawget, string.unpack, table.concat, table.sort, math.type
local sbyte, ssub, sformat, sgsub, setmetatable = string.byte, string.sub, string.format, string.gsub, setmetatable
local mock = pristine.mock
-- What `("x"):name` finds: the string metatable's __index, which the script may have changed.
local strlib = rawget(getmeta("") or {}, "__index")
if type(strlib) ~= "table" then strlib = {} end

-- Abstract values: LOC (made for this request: strings, numbers, the request table, tables and
-- closures a handler makes), UNK (anything, possibly shared), or a box { v = value } (a value
-- known at analysis time, read from what the script made when it loaded).
local LOC, UNK, KNIL = { "local" }, { "unknown" }, { const = true }
-- What `next(t)` gave, with one result: which key comes first is the VM's, whether there is one
-- is not. It may only be moved and tested against nil; anything it joins with stays it.
local EMPTY = { "whether a table is empty" }
local boxes = setmetatable({}, { __mode = "k" })
local function konst(v)
  if v == nil then return KNIL end
  local b = boxes[v]
  if not b then b = { const = true, v = v }; boxes[v] = b end
  return b
end
local function isprim(a)
  if not a.const then return false end
  local t = type(a.v)
  return t == "nil" or t == "boolean" or t == "number" or t == "string"
end
local function benign(a) return a == LOC or isprim(a) end
local function join(a, b)
  if a == nil then return b end
  if b == nil or a == b then return a end
  if a == EMPTY or b == EMPTY then return EMPTY end
  if benign(a) and benign(b) then return LOC end
  return UNK
end

-- Failing: the first reason wins and ends the analysis.
local Stop = {}
local where = { "" }   -- user-code position stack: "mocks.lua:12"
local function fail(msg) error({ Stop, (where[#where] ~= "" and where[#where] .. ": " or "") .. msg }, 0) end

-- Names of library functions, for messages.
local names = {}
local function sortedKeys(t)
  local keys = {}
  for k in next, t do if type(k) == "string" then keys[#keys + 1] = k end end
  sort(keys)
  return keys
end
for _, k in ipairs(sortedKeys(pristine)) do
  local v = rawget(pristine, k)
  if type(v) == "function" and not names[v] then names[v] = k
  elseif type(v) == "table" and k ~= "_G" and k ~= "mock" then
    for _, k2 in ipairs(sortedKeys(v)) do
      local v2 = rawget(v, k2)
      if type(v2) == "function" and not names[v2] then names[v2] = k .. "." .. k2 end
    end
  end
end
for _, k in ipairs(sortedKeys(mock)) do
  local v = rawget(mock, k)
  if type(v) == "function" then names[v] = "mock." .. k end
end
local function name(f) return names[f] or (sgsub(tostring(f), ":.*", "")) end

-- Bytecode (Lua 5.4 dump format).
local function parse(s)
  local pos = 1
  local function byte() local b = sbyte(s, pos); pos = pos + 1; return b end
  local function size()
    local x = 0
    repeat local b = byte(); x = x * 128 + (b & 0x7f) until b >= 0x80
    return x
  end
  local function str()
    local n = size()
    if n == 0 then return nil end
    local v = ssub(s, pos, pos + n - 2); pos = pos + n - 1
    return v
  end
  if ssub(s, 1, 4) ~= "\27Lua" or sbyte(s, 5) ~= 0x54 or sbyte(s, 6) ~= 0 or sbyte(s, 13) ~= 4 or sbyte(s, 14) ~= 8 or sbyte(s, 15) ~= 8 then
    return nil
  end
  pos = 16 + 8 + 8 + 1
  local function fn(parentSource)
    local f = { source = str() or parentSource }
    f.linedefined, f.lastline = size(), size()
    f.numparams, f.vararg, f.maxstack = byte(), byte(), byte()
    local code = {}
    for i = 1, size() do code[i] = sunpack("<I4", s, pos); pos = pos + 4 end
    f.code = code
    local k, knil = {}, {}
    for i = 1, size() do
      local t = byte()
      if t == 0x00 then knil[i] = true
      elseif t == 0x01 then k[i] = false
      elseif t == 0x11 then k[i] = true
      elseif t == 0x03 then k[i] = sunpack("<i8", s, pos); pos = pos + 8
      elseif t == 0x13 then k[i] = sunpack("<d", s, pos); pos = pos + 8
      elseif t == 0x04 or t == 0x14 then k[i] = str() or ""
      else return nil end
    end
    f.k, f.knil = k, knil
    local up = {}
    for i = 1, size() do up[i] = { instack = byte(), idx = byte(), kind = byte() } end
    f.up = up
    local protos = {}
    for i = 1, size() do
      protos[i] = fn(f.source)
      if not protos[i] then return nil end
    end
    f.protos = protos
    local lineinfo = {}
    for i = 1, size() do local b = byte(); lineinfo[i] = b >= 128 and b - 256 or b end
    local abs = {}
    for i = 1, size() do abs[i] = { pc = size(), line = size() } end
    f.lineinfo, f.abs = lineinfo, abs
    for _ = 1, size() do str(); size(); size() end
    for i = 1, size() do up[i].name = str() end
    return f
  end
  return fn(nil)
end

local function lineOf(f, pc)   -- pc 0-based, as in luaG_getfuncline
  if #f.lineinfo == 0 then return f.linedefined end
  local base, basepc = f.linedefined, -1
  for _, a in ipairs(f.abs) do if a.pc <= pc then base, basepc = a.line, a.pc else break end end
  for p = basepc + 1, pc do base = base + f.lineinfo[p + 1] end
  return base
end
local function position(f, pc)
  local src = f.source or "?"
  if ssub(src, 1, 1) ~= "@" then return "" end   -- the prelude and the sandbox: keep the caller's
  return (sgsub(ssub(src, 2), "^.*/", "")) .. ":" .. lineOf(f, pc)
end

-- The walk over what the script made when it loaded: every metatable's metamethods are checked
-- (any table a handler touches may call them), and the fingerprint compares VMs.
local budget = 200000
local seen, order, metas = {}, 0, {}
-- The fingerprint, joined every few thousand parts (a table of a million small strings would
-- take many times the memory of the text).
local parts, chunks = {}, {}
local function fp(s)
  parts[#parts + 1] = s
  if #parts == 4096 then chunks[#chunks + 1] = concat(parts); parts = {} end
end
local function walk(v)
  local t = type(v)
  if t == "string" then fp(sformat("s%d:", #v)); fp(v); return
  elseif t == "number" then fp(mtype(v) == "integer" and ("i" .. v) or ("f" .. sformat("%a", v))); return
  elseif t == "boolean" or t == "nil" then fp(tostring(v)); return end
  if seen[v] then fp("@" .. seen[v]); return end
  budget = budget - 1
  if budget < 0 then fail("the script keeps too much data for the check (one VM)") end
  order = order + 1; seen[v] = order
  local mt = getmeta(v)
  if mt ~= nil and t ~= "string" then metas[#metas + 1] = mt end
  if t == "table" then
    local keys, first, mixed = {}, nil, false
    for k in next, v do
      local kt = type(k)
      if kt ~= "string" and kt ~= "number" and kt ~= "boolean" then fail("a table made at load has a " .. kt .. " as a key") end
      keys[#keys + 1] = k
      first = first or kt
      if kt ~= first or kt == "boolean" then mixed = true end
    end
    if not mixed then
      sort(keys)   -- all strings or all numbers: their own order
    else
      sort(keys, function(a, b)
        local ta, tb = type(a), type(b)
        if ta ~= tb then return ta < tb end
        if ta == "boolean" then return (a and 1 or 0) < (b and 1 or 0) end
        return a < b
      end)
    end
    fp("{" .. #keys)
    for _, k in ipairs(keys) do walk(k); walk(rawget(v, k)) end
    fp("}")
    if mt ~= nil then fp("m"); walk(mt) end
  elseif t == "function" then
    local info = getinfo(v, "S")
    if info.what == "C" then fp("c" .. (names[v] or "?")); return end
    fp("l"); fp(dump(v, true))
    local i = 1
    while true do
      local n, uv = getupvalue(v, i)
      if n == nil then break end
      walk(uv); i = i + 1
    end
  else
    fp(t)   -- userdata, threads: the host's own
    if mt ~= nil then fp("m"); walk(mt) end
  end
end

-- Policies for trusted functions: host services, the prelude's builders and the library.
local trusted = {}
local function any(args, from)
  for i = from or 1, #args do if not benign(args[i]) then return false end end
  return true
end
local modeStrict = false      -- fields of a request's tables may hold shared values
local assumptionBroken = false
local function store(v) if not benign(v) then assumptionBroken = true end end
local function fieldOfLocal() return modeStrict and UNK or LOC end
local function pure() return LOC end
local function needLocalTable(a, what)
  if a ~= LOC then fail(what .. " changes a table made when the script loaded; its copy differs per VM") end
end
local analyzeFunction, callValue

-- Library functions are trusted as they were before the script ran, and only C ones: a script
-- that replaces `string.format` with a function of its own gets that function checked.
local function isC(f) return type(f) == "function" and getinfo(f, "S").what == "C" end
local env0 = pristine
for _, lib in ipairs { "math", "utf8", "os", "string" } do
  for _, f in pairs(env0[lib] or {}) do if isC(f) then trusted[f] = pure end end
end
for _, f in ipairs { env0.type, env0.tonumber, env0.rawequal, env0.rawlen } do trusted[f] = pure end
local str0 = env0.string
-- The sandbox's budgeted pattern functions (Lua wrappers around the library's): as pure as it.
for _, k in ipairs { "find", "match", "gmatch" } do if str0[k] then trusted[str0[k]] = pure end end
trusted[str0.format] = function(args)
  if not any(args) then fail("string.format of a table or function made at load gives an address that differs per VM") end
  return LOC
end
trusted[env0.tostring] = function(args)
  if not any(args) then fail("tostring of a table or function made at load gives an address that differs per VM") end
  return LOC
end
trusted[str0.gsub] = function(args)
  local repl = args[3]
  if repl and not benign(repl) then
    if repl.const and type(repl.v) == "table" then return LOC end
    callValue(repl, { LOC, LOC, LOC })
  end
  return LOC
end
trusted[env0.error] = function(args)
  if args[1] and not benign(args[1]) then fail("error() with a table made at load") end
  return LOC
end
trusted[env0.assert] = function(args)
  if args[2] and not benign(args[2]) then fail("assert() with a table made at load") end
  local r = LOC
  for _, a in ipairs(args) do r = join(r, a) end
  return r
end
trusted[env0.select] = function(args)
  local r = LOC
  for i = 2, #args do r = join(r, args[i]) end
  return r
end
trusted[env0.rawget] = function(args)
  local t, k = args[1], args[2]
  if t == LOC then return fieldOfLocal() end
  if t and t.const and type(t.v) == "table" and k and k.const then return konst(rawget(t.v, k.v)) end
  return UNK
end
trusted[env0.rawset] = function(args)
  needLocalTable(args[1], "rawset")
  store(args[2] or KNIL); store(args[3] or KNIL)
  return LOC
end
trusted[env0.setmetatable] = function(args)
  needLocalTable(args[1], "setmetatable")
  local mt = args[2]
  if mt == LOC then assumptionBroken = true end   -- its metamethods may be given anything
  if mt and mt ~= LOC and mt ~= KNIL then
    if not (mt.const and type(mt.v) == "table") then fail("setmetatable with a metatable the check cannot see") end
    assumptionBroken = true   -- fields may now come from the shared metatable
    walk(mt.v)
    metas[#metas + 1] = mt.v  -- its metamethods run on the table: checked with the others
  end
  return LOC
end
trusted[env0.getmetatable] = function() return UNK end
trusted[env0.pcall] = function(args)
  local rest = {}
  for i = 2, #args do rest[#rest + 1] = args[i] end
  return join(LOC, callValue(args[1] or KNIL, rest))
end
trusted[env0.xpcall] = function(args)
  local rest = {}
  for i = 3, #args do rest[#rest + 1] = args[i] end
  callValue(args[2] or KNIL, { LOC })
  return join(LOC, callValue(args[1] or KNIL, rest))
end
local tbl = env0.table or {}
if tbl.concat then trusted[tbl.concat] = pure end
if tbl.insert then trusted[tbl.insert] = function(args)
  needLocalTable(args[1], "table.insert")
  store(args[#args] or KNIL)
  return LOC
end end
if tbl.remove then trusted[tbl.remove] = function(args)
  needLocalTable(args[1], "table.remove")
  return fieldOfLocal()
end end
if tbl.sort then trusted[tbl.sort] = function(args)
  needLocalTable(args[1], "table.sort")
  if args[2] and args[2] ~= KNIL then callValue(args[2], { fieldOfLocal(), fieldOfLocal() }) end
  return LOC
end end
if tbl.unpack then trusted[tbl.unpack] = function(args)
  if args[1] == LOC then return fieldOfLocal() end
  return UNK
end end
if tbl.pack then trusted[tbl.pack] = function(args)
  for _, a in ipairs(args) do store(a) end
  return LOC
end end
if tbl.move then trusted[tbl.move] = function(args)
  local dest = args[5] or args[1]
  needLocalTable(dest, "table.move")
  if args[1] ~= LOC then assumptionBroken = true end
  return LOC
end end
local ipairsAux = env0.ipairs({})
trusted[env0.ipairs] = pure   -- the CALL site sets the three results itself
trusted[ipairsAux] = pure
-- pairs and next follow the order of a table's hash part, which for string keys (and tables or
-- functions as keys) depends on a seed each VM picks. A load-time table whose keys are all
-- numbers or booleans is laid out alike in every VM (same insertions, unseeded hashes).
local function unseededKeys(a)
  if not (a and a.const and type(a.v) == "table") or getmeta(a.v) ~= nil then return false end
  for k in next, a.v do
    local t = type(k)
    if t ~= "number" and t ~= "boolean" then return false end
  end
  return true
end
local function orderFail() fail("iterates a table with pairs or next: Lua's order of its string keys differs per VM") end
trusted[env0.pairs] = function(args) if not unseededKeys(args[1]) then orderFail() end; return UNK end
trusted[env0.next] = function(args) if not unseededKeys(args[1]) then orderFail() end; return UNK end

-- The mock API: builders make fresh values; state, logging, time and ids are the host's.
local function builder(args) return any(args) and LOC or UNK end
local function hostService() return LOC end
for _, k in ipairs { "text", "file", "template", "status", "redirect", "fault", "match" } do
  if mock[k] then trusted[mock[k]] = builder end
end
trusted[mock.json] = function(args)   -- the table, called
  local rest = {}
  for i = 2, #args do rest[#rest + 1] = args[i] end
  return builder(rest)
end
if pristine.jsonCall then trusted[pristine.jsonCall] = builder end
for _, f in ipairs(pristine.raisers or {}) do trusted[f] = hostService end
-- The read-only faces of mock, mock.json and mock.state: setting a field fails the request in
-- every VM alike; calling mock.json builds; iterating follows the real table's order.
for _, face in ipairs(pristine.faces or {}) do
  local mt = getmeta(face)
  if type(mt) == "table" then
    if rawget(mt, "__newindex") then trusted[rawget(mt, "__newindex")] = hostService end
    if rawget(mt, "__pairs") then trusted[rawget(mt, "__pairs")] = function() orderFail() end end
    if rawget(mt, "__call") then trusted[rawget(mt, "__call")] = function(args)
      local rest = {}
      for i = 2, #args do rest[#rest + 1] = args[i] end
      return builder(rest)
    end end
  end
end
local json0 = pristine.json
for _, k in ipairs { "encode", "decode" } do if json0[k] then trusted[json0[k]] = hostService end end
if json0.array then trusted[json0.array] = function(args)
  -- Marks its table as a JSON array: on a table made at load, what other handlers' answers
  -- show would depend on whether this VM has run this one.
  if args[1] and args[1] ~= LOC and args[1] ~= KNIL then fail("mock.json.array marks a table made at load (mark it when the script loads)") end
  return LOC
end end
for _, k in ipairs { "read", "log", "now", "uuid" } do if mock[k] then trusted[mock[k]] = hostService end end
for _, f in pairs(pristine.state) do if type(f) == "function" then trusted[f] = hostService end end
if env0.print then trusted[env0.print] = hostService end
if env0.math and env0.math.randomseed then trusted[env0.math.randomseed] = hostService end
if env0.math and env0.math.random then trusted[env0.math.random] = hostService end
if requestMeta and type(rawget(requestMeta, "__index")) == "function" then trusted[requestMeta.__index] = hostService end

-- The abstract interpreter over one function's bytecode.
local OP = { MOVE = 0, LOADI = 1, LOADF = 2, LOADK = 3, LOADKX = 4, LOADFALSE = 5, LFALSESKIP = 6, LOADTRUE = 7,
  LOADNIL = 8, GETUPVAL = 9, SETUPVAL = 10, GETTABUP = 11, GETTABLE = 12, GETI = 13, GETFIELD = 14, SETTABUP = 15,
  SETTABLE = 16, SETI = 17, SETFIELD = 18, NEWTABLE = 19, SELF = 20, MMBIN = 46, MMBINK = 48, UNM = 49, BNOT = 50,
  NOT = 51, LEN = 52, CONCAT = 53, CLOSE = 54, TBC = 55, JMP = 56, EQ = 57, LT = 58, LE = 59, EQK = 60, GEI = 65,
  TEST = 66, TESTSET = 67,
  CALL = 68, TAILCALL = 69, RETURN = 70, RETURN0 = 71, RETURN1 = 72, FORLOOP = 73, FORPREP = 74, TFORPREP = 75,
  TFORCALL = 76, TFORLOOP = 77, SETLIST = 78, CLOSURE = 79, VARARG = 80, VARARGPREP = 81, EXTRAARG = 82 }
local metaResults = false   -- some metatable has arithmetic or concatenation metamethods

-- Field `key` of a table known at analysis time, following __index tables.
local function constIndex(t, key)
  for _ = 1, 100 do
    local v = rawget(t, key)
    if v ~= nil then return konst(v) end
    local mt = getmeta(t)
    local ix = mt and rawget(mt, "__index")
    if ix == nil then return KNIL end
    if type(ix) ~= "table" then return UNK end
    t = ix
  end
  return UNK
end
-- A field of load-time table t picked by a request's value: any of its values (when t has no
-- __index to look further). Calling it checks every function among them.
local oneOfs = setmetatable({}, { __mode = "k" })
local function oneOf(t)
  local mt = getmeta(t)
  if mt ~= nil and rawget(mt, "__index") ~= nil then return UNK end
  local o = oneOfs[t]
  if not o then o = { oneOf = t }; oneOfs[t] = o end
  return o
end
local function index(obj, key)
  if obj.const then
    local v = obj.v
    if type(v) == "table" then
      if key.const then return constIndex(v, key.v) end
      return oneOf(v)
    end
    if type(v) == "string" then return key.const and konst(strlib[key.v]) or UNK end
    return UNK
  end
  if obj == LOC then return fieldOfLocal() end
  return UNK
end

local memo, active = {}, {}
local fnCount = 0

-- Checks proto `p` run with upvalues `upv` (abstract values; `shared[i]`: the upvalue outlives
-- the request) and parameters `params`; returns the join of what it returns.
local function analyzeProto(p, upv, shared, params)
  fnCount = fnCount + 1
  if fnCount > 20000 then fail("the script is too large for the check (one VM)") end
  local code, K, knil = p.code, p.k, p.knil
  local n, maxstack = #code, p.maxstack
  local function kval(i) if knil[i + 1] then return KNIL end return konst(K[i + 1]) end
  -- Registers some nested closure assigns through an upvalue: read as anything local, too.
  local volatile = {}
  local function writes(q, u)   -- does q (or a closure in it) assign its upvalue u (0-based)?
    for _, ins in ipairs(q.code) do
      if ins & 0x7f == OP.SETUPVAL and (ins >> 16) & 0xff == u then return true end
    end
    for _, q2 in ipairs(q.protos) do
      for j, d in ipairs(q2.up) do if d.instack == 0 and d.idx == u and writes(q2, j - 1) then return true end end
    end
    return false
  end
  for _, q in ipairs(p.protos) do
    for j, d in ipairs(q.up) do if d.instack == 1 and writes(q, j - 1) then volatile[d.idx] = true end end
  end

  local states = {}
  local init = {}
  for r = 0, maxstack - 1 do init[r] = params[r + 1] or LOC end
  states[1] = init
  local work, queued = { 1 }, { [1] = true }
  local summary = nil
  local function flow(st, to)
    if to < 1 or to > n then return end
    local old = states[to]
    if not old then
      local c = {}
      for r = 0, maxstack - 1 do c[r] = st[r] end
      states[to] = c
    else
      local changed = false
      for r = 0, maxstack - 1 do
        local j = join(old[r], st[r])
        if j ~= old[r] then old[r] = j; changed = true end
      end
      if not changed then return end
    end
    if not queued[to] then queued[to] = true; work[#work + 1] = to end
  end

  while #work > 0 do
    local pc = table.remove(work)
    queued[pc] = nil
    local st = {}
    for r = 0, maxstack - 1 do st[r] = states[pc][r] end
    local ins = code[pc]
    local op, A = ins & 0x7f, (ins >> 7) & 0xff
    local k, B, C = (ins >> 15) & 1, (ins >> 16) & 0xff, (ins >> 24) & 0xff
    local Bx = (ins >> 15) & 0x1ffff
    local function keyFail() fail("uses the key next() returned: Lua's order of a table's keys differs per VM") end
    -- A register a closure assigns may hold what the closure stored: local values, or in the
    -- strict pass anything.
    local function read(r)
      local v = st[r] or LOC
      if volatile[r] then v = join(v, modeStrict and UNK or LOC) end
      if v == EMPTY and op ~= OP.MOVE then keyFail() end
      return v
    end
    -- Operands an instruction uses without `read`: arithmetic, lengths, concatenation, tests.
    local function noKey(...)
      for _, r in ipairs { ... } do if st[r] == EMPTY then keyFail() end end
    end
    local function rk(c) if k == 1 then return kval(c) end return read(c) end
    local function clobber(from, v) for r = from, maxstack - 1 do st[r] = v end end
    where[#where + 1] = position(p, pc - 1)
    if where[#where] == "" then where[#where] = where[#where - 1] end
    local next1, next2 = pc + 1, nil
    local function newindex(obj, key, val, what)
      if obj == LOC then store(key); store(val); return end
      fail(what)
    end
    local function fieldName(c) local v = K[c + 1]; return type(v) == "string" and ("'" .. v .. "'") or "a field" end
    local function args(from, count)
      local a = {}
      local last = count and (from + count - 1) or (maxstack - 1)
      for r = from, last do a[#a + 1] = read(r) end
      return a
    end

    if op == OP.MOVE then st[A] = read(B)
    elseif op == OP.LOADI or op == OP.LOADF then st[A] = LOC
    elseif op == OP.LOADK then st[A] = kval(Bx)
    elseif op == OP.LOADKX then st[A] = kval((code[pc + 1] >> 7) & 0x1ffffff); next1 = pc + 2
    elseif op == OP.LOADFALSE then st[A] = konst(false)
    elseif op == OP.LFALSESKIP then st[A] = konst(false); next1 = pc + 2
    elseif op == OP.LOADTRUE then st[A] = konst(true)
    elseif op == OP.LOADNIL then for r = A, A + B do st[r] = KNIL end
    elseif op == OP.GETUPVAL then st[A] = upv[B + 1] or UNK
    elseif op == OP.SETUPVAL then
      if shared[B + 1] then
        fail("assigns the variable '" .. (p.up[B + 1].name or "?") .. "', kept from the script's load; each VM has its own copy (keep it in mock.state)")
      end
      store(read(A))
    elseif op == OP.GETTABUP then st[A] = index(upv[B + 1] or UNK, kval(C))
    elseif op == OP.GETTABLE then st[A] = index(read(B), read(C))
    elseif op == OP.GETI then st[A] = index(read(B), konst(C))
    elseif op == OP.GETFIELD then st[A] = index(read(B), kval(C))
    elseif op == OP.SETTABUP then
      local u = upv[A + 1]
      if shared[A + 1] or u ~= LOC then
        if p.up[A + 1].name == "_ENV" then
          fail("assigns the global " .. fieldName(B) .. "; each VM has its own globals (keep it in mock.state)")
        end
        fail("assigns field " .. fieldName(B) .. " of a table made at load; each VM has its own copy (keep it in mock.state)")
      end
      store(rk(C))
    elseif op == OP.SETTABLE then newindex(read(A), read(B), rk(C), "assigns into a table made at load; each VM has its own copy (keep it in mock.state)")
    elseif op == OP.SETI then newindex(read(A), LOC, rk(C), "assigns into a table made at load; each VM has its own copy (keep it in mock.state)")
    elseif op == OP.SETFIELD then newindex(read(A), LOC, rk(C), "assigns field " .. fieldName(B) .. " of a table made at load; each VM has its own copy (keep it in mock.state)")
    elseif op == OP.NEWTABLE then st[A] = LOC
    elseif op == OP.SELF then
      local obj, key = read(B), rk(C)
      st[A + 1] = obj
      if obj == LOC and key.const and type(key.v) == "string" and not modeStrict then
        st[A] = { method = strlib[key.v] or false }
      else
        st[A] = index(obj, key)
      end
    elseif (op >= 21 and op <= 45) or op == OP.UNM or op == OP.BNOT or op == OP.LEN then
      if op >= 34 and op <= 45 then noKey(B, C) else noKey(B) end
      st[A] = metaResults and UNK or LOC
    elseif op >= OP.MMBIN and op <= OP.MMBINK then -- the arithmetic before it set its register
    elseif op == OP.NOT then st[A] = LOC
    elseif op == OP.CONCAT then
      for r = A, A + B - 1 do noKey(r) end
      clobber(A, LOC); st[A] = metaResults and UNK or LOC
    elseif op == OP.CLOSE then -- nothing
    elseif op == OP.TBC then fail("uses a to-be-closed variable")
    elseif op == OP.JMP then next1 = pc + 1 + (((ins >> 7) & 0x1ffffff) - 0xffffff)
    elseif op >= OP.EQ and op <= OP.GEI or op == OP.TEST then
      -- Only `== nil` and a truth test tell nothing but whether a key came.
      if op == OP.EQ or op == OP.LT or op == OP.LE then noKey(A, B)
      elseif op == OP.EQK then if not knil[B + 1] then noKey(A) end
      elseif op ~= OP.TEST then noKey(A) end
      next2 = pc + 2
    elseif op == OP.TESTSET then st[A] = join(st[A], read(B)); next2 = pc + 2
    elseif op == OP.CALL or op == OP.TAILCALL then
      local callee = read(A)
      local a = args(A + 1, B ~= 0 and B - 1 or nil)
      local result
      if callee.const and callee.v == env0.next and B == 2 and C == 2 and not unseededKeys(a[1]) then
        -- `next(t) == nil`: whether t is empty, the same in every VM; the key itself is not.
        clobber(A, LOC)
        st[A] = EMPTY
        result = nil
      elseif callee.const and callee.v == env0.ipairs then
        clobber(A, LOC)
        st[A] = konst(ipairsAux); st[A + 1] = a[1] or KNIL; st[A + 2] = LOC
        result = nil
      elseif callee.const and callee.v == env0.pairs then
        callValue(callee, a)   -- fails unless the order is the same in every VM
        clobber(A, LOC)
        st[A] = konst(env0.next); st[A + 1] = a[1]; st[A + 2] = KNIL
        result = nil
      else
        result = callValue(callee, a)
        clobber(A, result)
      end
      if op == OP.TAILCALL then summary = join(summary, result or LOC); next1 = nil end
    elseif op == OP.RETURN then
      local last = B ~= 0 and (A + B - 2) or (maxstack - 1)
      for r = A, last do summary = join(summary, read(r)) end
      if B == 1 then summary = join(summary, KNIL) end
      next1 = nil
    elseif op == OP.RETURN0 then summary = join(summary, KNIL); next1 = nil
    elseif op == OP.RETURN1 then summary = join(summary, read(A)); next1 = nil
    elseif op == OP.FORLOOP then for r = A, A + 3 do st[r] = LOC end; next2 = pc + 1 - Bx
    elseif op == OP.FORPREP then for r = A, A + 3 do st[r] = LOC end; next2 = pc + Bx + 2
    elseif op == OP.TFORPREP then next1 = pc + 1 + Bx
    elseif op == OP.TFORCALL then
      local iter, state = read(A), read(A + 1)
      if iter.const and iter.v == ipairsAux then
        clobber(A + 4, LOC)
        st[A + 5] = state == LOC and fieldOfLocal() or UNK
      elseif iter.const and iter.v == env0.next then
        callValue(iter, { state })   -- fails unless the order is the same in every VM
        clobber(A + 4, LOC)
        st[A + 5] = UNK               -- a value of a load-time table
      else
        clobber(A + 4, callValue(iter, { state, read(A + 2) }))
      end
    elseif op == OP.TFORLOOP then st[A + 2] = read(A + 4); next2 = pc + 1 - Bx
    elseif op == OP.SETLIST then
      local t = read(A)
      local last = B ~= 0 and (A + B) or (maxstack - 1)
      for r = A + 1, last do newindex(t, LOC, read(r), "fills a table made at load") end
      if k == 1 then next1 = pc + 2 end
    elseif op == OP.CLOSURE then st[A] = LOC
    elseif op == OP.VARARG then clobber(A, UNK)
    elseif op == OP.VARARGPREP or op == OP.EXTRAARG then -- nothing
    else
      fail("uses an instruction the check does not know (op " .. op .. ")")
    end
    where[#where] = nil
    if next1 then flow(st, next1) end
    if next2 then flow(st, next2) end
  end

  -- What each register ever holds: the closures made here see it through their upvalues.
  local regJoin = {}
  for _, s in pairs(states) do
    for r = 0, maxstack - 1 do regJoin[r] = join(regJoin[r], s[r]) end
  end
  for r in pairs(volatile) do regJoin[r] = join(regJoin[r], modeStrict and UNK or LOC) end
  for _, q in ipairs(p.protos) do
    local qupv, qshared = {}, {}
    for j, d in ipairs(q.up) do
      if d.instack == 1 then qupv[j], qshared[j] = regJoin[d.idx] or LOC, false
      else qupv[j], qshared[j] = upv[d.idx + 1] or UNK, shared[d.idx + 1] end
    end
    -- Outside the strict pass a closure made per request is only called with local values:
    -- calls of local values must pass local arguments, and one used as a metamethod of a
    -- request's table (which may be given anything) sends the check to the strict pass.
    local qparams = {}
    for j = 1, q.numparams do qparams[j] = modeStrict and UNK or LOC end
    local s = analyzeProto(q, qupv, qshared, qparams)
    -- A closure made per request may be called through a local value: what it returns must
    -- be local for calls on local values to give local results.
    if s and not benign(s) then assumptionBroken = true end
  end
  return summary or KNIL
end

local protoCache = setmetatable({}, { __mode = "k" })
local function protoOf(f)
  local p = protoCache[f]
  if p == nil then
    p = parse(dump(f, false)) or false
    protoCache[f] = p
  end
  return p
end

-- Checks Lua function f (a closure made at load) called with `params`.
function analyzeFunction(f, params)
  local sig = {}
  for i, a in ipairs(params) do sig[i] = benign(a) and "L" or "U" end
  local key = concat(sig)
  memo[f] = memo[f] or {}
  local m = memo[f][key]
  if m then return m end
  if active[f] then return UNK end
  local p = protoOf(f)
  if not p then fail("cannot read the bytecode of " .. name(f)) end
  local upv, shared = {}, {}
  for i = 1, #p.up do
    local _, v = getupvalue(f, i)
    upv[i], shared[i] = konst(v), true
  end
  local ps = {}
  for i = 1, p.numparams do ps[i] = (params[i] == nil or benign(params[i])) and LOC or UNK end
  active[f] = true
  local depth = #where
  local ok, s = pcall(analyzeProto, p, upv, shared, ps)
  active[f] = nil
  for i = #where, depth + 1, -1 do where[i] = nil end
  if not ok then
    -- In the prelude or the sandbox: name the call in the user's script, not the host's line.
    if type(s) == "table" and s[1] == Stop and ssub(p.source or "=", 1, 1) == "=" then
      fail("calls " .. name(f) .. " while answering, which changes state each VM keeps")
    end
    error(s, 0)
  end
  memo[f][key] = s
  return s
end

-- A call of an abstract value with abstract arguments; returns what it gives back.
function callValue(callee, args)
  if callee.method ~= nil then
    -- obj:name(...) on a local value: a string method, or a function the request made.
    local m = callee.method
    if type(m) == "function" then callValue(konst(m), args) end
    if not any(args, 2) then fail("passes a value made at load to a method of a local value") end
    return LOC
  end
  if callee == LOC then
    if modeStrict then
      if not any(args) then fail("passes a value made at load to a function made per request") end
      return UNK
    end
    if not any(args) then fail("passes a value made at load to a function made per request") end
    return LOC
  end
  if callee.oneOf ~= nil then
    local r, count = nil, 0
    for _, v in next, callee.oneOf do
      count = count + 1
      if count > 10000 then fail("calls a function picked from a table too large for the check") end
      local t = type(v)
      if t == "function" or t == "table" or t == "userdata" then r = join(r, callValue(konst(v), args)) end
    end
    return r or UNK
  end
  if not callee.const then fail("calls a function the check cannot see") end
  local f = callee.v
  local policy = trusted[f]
  if policy then return policy(args) end
  if type(f) == "function" then
    if getinfo(f, "S").what == "C" then fail("calls " .. name(f) .. ", which may keep state in the VM") end
    return analyzeFunction(f, args)
  end
  local mt = getmeta(f)
  local call = mt and rawget(mt, "__call")
  if call ~= nil then
    local a = { callee }
    for _, x in ipairs(args) do a[#a + 1] = x end
    return callValue(konst(call), a)
  end
  return UNK   -- calling it is an error
end

local arithmetic = { "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm", "__idiv", "__band", "__bor",
  "__bxor", "__shl", "__shr", "__bnot", "__concat", "__len" }

local function run()
  -- The load-time world: what handlers can reach, and the globals.
  for _, f in ipairs(entries) do walk(f) end
  walk(env)
  if requestMeta then walk(requestMeta) end
  for _, mt in ipairs(metas) do
    if type(mt) == "table" then
      for _, mm in ipairs(arithmetic) do if rawget(mt, mm) ~= nil then metaResults = true end end
    end
  end
  for pass = 1, 2 do
    modeStrict = pass == 2
    assumptionBroken = false
    memo, active, fnCount = {}, {}, 0
    for _, f in ipairs(entries) do
      where = { "" }
      callValue(konst(f), { LOC })
    end
    -- Metamethods of load-time tables run on any operation on them.
    local i = 1
    while i <= #metas do
      local mt = metas[i]
      if type(mt) == "table" then
        for mk, mm in next, mt do
          if type(mm) == "function" and type(mk) == "string" and ssub(mk, 1, 2) == "__" and not trusted[mm] then
            where = { "" }
            if isC(mm) then
              -- A library's finalizer, closer or name for its own objects (io's files under
              -- --unsafe): request code reaches them only through calls the check refuses.
              if mk ~= "__gc" and mk ~= "__close" and mk ~= "__tostring" then
                fail("a metamethod (" .. mk .. ") the check cannot see")
              end
            elseif mk == "__gc" then
              fail("a table made at load has a __gc metamethod in Lua (a finalizer runs whenever its VM collects)")
            else
              local s = analyzeFunction(mm, { UNK, UNK, UNK })
              if mk == "__index" and not benign(s) then assumptionBroken = true end
            end
          end
        end
      end
      i = i + 1
    end
    if not assumptionBroken then return true end
  end
  return true
end

local ok, err = pcall(run)
if not ok then
  if type(err) == "table" and err[1] == Stop then return false, err[2] end
  return false, "the check failed: " .. tostring(err)
end
chunks[#chunks + 1] = concat(parts)
return true, concat(chunks)
"""#
}

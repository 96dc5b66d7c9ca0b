extension SharingCheck {
    /// Part of ``source``: the functions the check trusts: host services, builders, the library.
    static let trustSource = #"""
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
for _, k in ipairs { "text", "file", "template", "status", "redirect", "fault", "match", "sse", "stream" } do
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
for _, k in ipairs { "read", "log", "now", "uuid", "schema", "resource_reset", "grpc_error" } do if mock[k] then trusted[mock[k]] = hostService end end
-- mock.fake draws from the request's seeded stream (or a key's): the same in every VM.
for _, f in pairs(pristine.fake or {}) do if type(f) == "function" then trusted[f] = hostService end end
for _, f in pairs(pristine.state) do if type(f) == "function" then trusted[f] = hostService end end
if env0.print then trusted[env0.print] = hostService end
if env0.math and env0.math.randomseed then trusted[env0.math.randomseed] = hostService end
if env0.math and env0.math.random then trusted[env0.math.random] = hostService end
if requestMeta and type(rawget(requestMeta, "__index")) == "function" then trusted[requestMeta.__index] = hostService end

"""#
}

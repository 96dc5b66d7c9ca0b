extension SharingCheck {
    /// Part of ``source``: the abstract values, failing, library names, the bytecode reader and the walk over load-time values.
    static let prologueSource = #"""
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

"""#
}

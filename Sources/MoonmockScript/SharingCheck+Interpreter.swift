extension SharingCheck {
    /// Part of ``source``: the abstract interpreter over one function's bytecode.
    static let interpreterSource = #"""
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

"""#
}

extension SharingCheck {
    /// Part of ``source``: checking closures made at load, and calls of abstract values.
    static let callsSource = #"""
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

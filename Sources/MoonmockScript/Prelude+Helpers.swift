extension Prelude {
    /// The start of ``source``: its arguments and the helpers every `mock.*` function uses to
    /// check its arguments and word its errors (`file:line`, what was given, the nearest name).
    static let helpersSource = #"""
local H, getinfo, null = ...
local type, pairs, ipairs, tostring, select, error, setmetatable, getmetatable, rawget, rawequal =
      type, pairs, ipairs, tostring, select, error, setmetatable, getmetatable, rawget, rawequal
local concat = table.concat

local RESP, ARRAY, MATCHER = H.RESP, H.ARRAY, H.MATCHER
local mock = {}
-- What a coroutine yields when the host is to wait for it (mock.fetch, mock.state on a shared
-- store): a stream generator relays such a yield out of its stretch.
local WAIT = {}

-- "file:line: " of the first caller outside this prelude
local function where()
  local level = 3
  while true do
    local info = getinfo(level, "Sl")
    if not info then return "" end
    if info.source ~= "=moonmock" and info.what ~= "C" then
      return info.short_src .. ":" .. (info.currentline or 0) .. ": "
    end
    level = level + 1
  end
end
local function fail(msg) error(where() .. msg, 0) end
-- what a wrong value was, for messages: a number shows itself, anything else its type
local function given(v)
  if type(v) == "number" then return tostring(v) end
  if type(v) == "string" then return "string \"" .. v .. "\"" end
  return type(v)
end
-- the name in `names` nearest to `name` (edit distance at most a third of its length, and 2
-- at least), or nil
local function nearest(name, names)
  local best, best_d = nil, math.max(2, #name // 3) + 1
  for _, candidate in ipairs(names) do
    local a, b = name:lower(), candidate:lower()
    local prev = {}
    for j = 0, #b do prev[j] = j end
    for i = 1, #a do
      local cur = { [0] = i }
      for j = 1, #b do
        local cost = a:byte(i) == b:byte(j) and 0 or 1
        cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      end
      prev = cur
    end
    if prev[#b] < best_d or (prev[#b] == best_d and best and candidate < best) then best, best_d = candidate, prev[#b] end
  end
  if best_d > math.max(2, #name // 3) then return nil end
  return best
end
-- A response value given where a handler belongs: a function, a table, a string, a builder.
local function check_handler(handler, what, which)
  local t = type(handler)
  if handler == nil then fail(what .. ": missing handler (a function or a response value)") end
  if t ~= "function" and t ~= "table" and t ~= "string" then
    fail(what .. ": " .. which .. " must be a handler function or a response value, got " .. t)
  end
end
local function check_type(v, want, what)
  if type(v) ~= want then fail(what .. " must be a " .. want .. ", got " .. type(v)) end
end
local function check_opts(opts, allowed, what)
  if opts == nil then return {} end
  check_type(opts, "table", what .. " options")
  for k in pairs(opts) do
    if not allowed[k] then
      local names = {}
      for name in pairs(allowed) do names[#names + 1] = name end
      table.sort(names)
      fail(what .. ": unknown option '" .. tostring(k) .. "' (expected one of: " .. concat(names, ", ") .. ")")
    end
  end
  return opts
end
"""#
}

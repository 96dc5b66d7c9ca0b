/// The Lua half of `moonmock test`: `test`, `request`, `expect`, `state`, `advance` and
/// `reset` for spec files, over the host functions of ``SpecRunner``. Its chunk name starts
/// with `=moonmock`, so positions in messages skip it and point into the spec.
enum SpecPrelude {
    static let chunkName = "=moonmock-spec"

    static let source = #"""
local S, getinfo = ...
local type, pairs, ipairs, tostring, error, setmetatable, pcall = type, pairs, ipairs, tostring, error, setmetatable, pcall
local concat, sort = table.concat, table.sort
local json = mock.json

-- "spec_file:line" of the first caller outside Moonmock's own chunks
local function where()
  local level = 3
  while true do
    local info = getinfo(level, "Sl")
    if not info then return "?" end
    if info.what ~= "C" and info.source:sub(1, 9) ~= "=moonmock" then
      return info.short_src .. ":" .. (info.currentline or 0)
    end
    level = level + 1
  end
end

-- An expectation's failure: marked, so that the runner tells it from an error in the spec.
local function failure(message)
  error("\1moonmock-expect\1" .. where() .. "\1" .. message, 0)
end

-- a value as a spec author reads it
local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then
    local ok, text = pcall(json.encode, v)
    if ok then return text end
  end
  return tostring(v)
end

local function keys(t)
  local list = {}
  for k in pairs(t) do list[#list + 1] = k end
  sort(list, function(a, b) return tostring(a) < tostring(b) end)
  return list
end

local function path(prefix, k)
  if type(k) == "number" then return prefix .. "[" .. k .. "]" end
  return prefix == "" and tostring(k) or (prefix .. "." .. tostring(k))
end

-- Differences between `got` and `want`, one line each: every key of both when `exact`, else
-- only the keys of `want` (a subset).
local function diff(got, want, exact, prefix, out)
  if type(want) == "table" and type(got) == "table" then
    for _, k in ipairs(keys(want)) do
      if got[k] == nil then
        out[#out + 1] = "  " .. path(prefix, k) .. ": expected " .. show(want[k]) .. ", missing"
      else
        diff(got[k], want[k], exact, path(prefix, k), out)
      end
    end
    if exact then
      for _, k in ipairs(keys(got)) do
        if want[k] == nil then out[#out + 1] = "  " .. path(prefix, k) .. ": not expected, got " .. show(got[k]) end
      end
    end
  elseif got ~= want then
    out[#out + 1] = "  " .. (prefix == "" and "value" or prefix) .. ": expected " .. show(want) .. ", got " .. show(got)
  end
  return out
end

local Expectation = {}
Expectation.__index = Expectation

function Expectation:equals(want)
  if type(want) ~= "table" or type(self.value) ~= "table" then
    if self.value ~= want then failure("expected " .. show(want) .. ", got " .. show(self.value)) end
    return self
  end
  local lines = diff(self.value, want, true, "", {})
  if #lines > 0 then failure("expected " .. show(want) .. "\n     got " .. show(self.value) .. "\n" .. concat(lines, "\n")) end
  return self
end

function Expectation:contains(want)
  local got = self.value
  if type(want) == "string" and type(got) == "string" then
    if not got:find(want, 1, true) then failure("expected " .. show(got) .. " to contain " .. show(want)) end
    return self
  end
  if type(got) ~= "table" then failure("expected a table containing " .. show(want) .. ", got " .. show(got)) end
  local lines = diff(got, want, false, "", {})
  if #lines > 0 then failure("expected " .. show(got) .. "\n  to contain " .. show(want) .. "\n" .. concat(lines, "\n")) end
  return self
end

function Expectation:matches(pattern)
  if type(self.value) ~= "string" or not self.value:find(pattern) then
    failure("expected " .. show(self.value) .. " to match the pattern " .. show(pattern))
  end
  return self
end

function expect(value) return setmetatable({ value = value }, Expectation) end

function test(name, fn)
  if type(name) ~= "string" then error(where() .. ": test: the name must be a string, got " .. type(name), 0) end
  if type(fn) ~= "function" then error(where() .. ": test: the second argument must be a function, got " .. type(fn), 0) end
  S.register(name, fn, where())
end

function request(spec)
  if type(spec) == "string" then spec = { url = spec } end
  if type(spec) ~= "table" then error(where() .. ": request: give a table { method =, url =, headers =, body =, json = }", 0) end
  local url = spec.url or spec.path
  if type(url) ~= "string" then error(where() .. ": request: url must be a string such as \"/users/7\"", 0) end
  local headers = {}
  for k, v in pairs(spec.headers or {}) do headers[tostring(k)] = tostring(v) end
  local body = spec.body
  if spec.json ~= nil then
    body = json.encode(spec.json)
    local has = false
    for k in pairs(headers) do if k:lower() == "content-type" then has = true end end
    if not has then headers["Content-Type"] = "application/json" end
  end
  if body ~= nil and type(body) ~= "string" then error(where() .. ": request: body must be a string (or give json =)", 0) end
  local method = spec.method or (body ~= nil and "POST" or "GET")
  local status, response_headers, response_body, delay, fault = S.request(method, url, headers, body or "")
  local ok, decoded = pcall(json.decode, response_body)
  return { status = status, headers = response_headers, body = response_body, json = ok and decoded or nil,
           delay = delay, fault = fault }
end

function advance(ms)
  if type(ms) ~= "number" or ms < 0 then error(where() .. ": advance: give milliseconds (a number, 0 or more)", 0) end
  S.advance(ms)
end

function reset() S.reset() end

-- The script's mock.state, seen from the spec: state:get("k") or state.get("k").
state = {}
for _, name in ipairs { "get", "set", "add", "incr", "delete", "keys", "flush" } do
  local f = S["state_" .. name]
  local function call(...)
    local r, err = f(...)
    if err ~= nil then error(err, 3) end
    return r
  end
  state[name] = function(first, ...)
    if first == state then return call(...) end
    return call(first, ...)
  end
end

"""#
}

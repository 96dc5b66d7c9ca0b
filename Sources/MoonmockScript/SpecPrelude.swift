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

-- grpc("pkg.Service/Method", message | { messages... } [, { metadata = {} }]): a call of a
-- mock.grpc method in Connect's streaming JSON, which every kind of method takes. Returns
-- { status = "OK" | "NOT_FOUND" | ..., code = n, message = first answer, messages = all,
--   error = the status message, headers = the answer's fields }.
local codes = { "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED" }
local function envelope(s)
  local n = #s
  return string.char(0, (n >> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255) .. s
end
function grpc(method, message, opts)
  if type(method) ~= "string" or not method:find("/") then
    error(where() .. ": grpc: give the method as \"pkg.Service/Method\", got " .. show(method), 0)
  end
  if message ~= nil and type(message) ~= "table" then error(where() .. ": grpc: the message is a table, got " .. type(message), 0) end
  local messages = { message or {} }
  if type(message) == "table" and type(message[1]) == "table" then messages = message end
  local headers = { ["Content-Type"] = "application/connect+json", ["Connect-Protocol-Version"] = "1" }
  for k, v in pairs((opts or {}).metadata or {}) do headers[tostring(k)] = tostring(v) end
  local body = {}
  for i, m in ipairs(messages) do
    local text = json.encode(m)
    if text == "[]" then text = "{}" end
    body[i] = envelope(text)
  end
  local status, response_headers, response_body = S.request("POST", "/" .. method:gsub("^/", ""), headers, concat(body))
  local result = { status = "OK", code = 0, messages = {}, headers = response_headers }
  local at = 1
  while at + 4 <= #response_body do
    local flags, b1, b2, b3, b4 = response_body:byte(at, at + 4)
    local n = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    local payload = response_body:sub(at + 5, at + 4 + n)
    at = at + 5 + n
    local ok, decoded = pcall(json.decode, payload)
    if flags & 2 ~= 0 then
      local e = ok and type(decoded) == "table" and decoded.error or nil
      if e then
        result.status = string.upper(e.code == "canceled" and "cancelled" or e.code or "unknown")
        for i, name in ipairs(codes) do if name == result.status then result.code = i end end
        result.error = e.message
      end
    elseif ok then
      result.messages[#result.messages + 1] = decoded
    end
  end
  if status ~= 200 then result.status, result.code, result.error = "UNKNOWN", 2, "HTTP " .. status .. ": " .. response_body end
  result.message = result.messages[1]
  return result
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

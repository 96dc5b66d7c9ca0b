/// The Lua half of the `mock` API. It validates arguments where the script author can be
/// told `file:line`, builds response values as tagged tables, and hands rules to the host.
/// Chunk name `=moonmock`, so error positions skip it and point into the user's script.
enum Prelude {
    static let chunkName = "=moonmock"

    static let source = helpersSource + "\n" + mainSource.replacingOccurrences(of: "--@streams\n", with: streamsSource + webSocketSource + fakeSource + resourceSource + chaosSource + waitingSource + grpcSource)

    static let mainSource = #"""
local builder_opts = { status = true, headers = true, delay = true, fault = true, bytes_per_second = true, conditional = true }

-- The options every builder shares (status from `lowest` to 599, headers, delay), then the
-- host's check of the whole value.
local function finish_response(fields, opts, what, lowest)
  if opts.status ~= nil then
    if math.type(opts.status) ~= "integer" or opts.status < lowest or opts.status > 599 then
      fail(what .. ": status must be an integer from " .. lowest .. " to 599, got " .. given(opts.status))
    end
    fields.status = opts.status
  end
  if opts.headers ~= nil then check_type(opts.headers, "table", what .. ": headers") end
  fields.headers = opts.headers
  fields.delay = opts.delay
  if opts.conditional ~= nil then check_type(opts.conditional, "boolean", what .. ": conditional") end
  fields.conditional = opts.conditional
  setmetatable(fields, RESP)
  local ok, err = H.validate_response(fields)
  if not ok then fail(what .. ": " .. err) end
  return fields
end

local function response(kind, fields, opts, what)
  opts = check_opts(opts, builder_opts, what)
  fields.kind = kind
  fields.fault = opts.fault
  fields.bytes_per_second = opts.bytes_per_second
  return finish_response(fields, opts, what, 100)
end

-- mock.json is both a builder and the JSON codec
local json = {
  encode = function(v) local s, err = H.json_encode(v); if s == nil then error(err, 2) end; return s end,
  decode = function(s)
    check_type(s, "string", "mock.json.decode argument")
    local v, err = H.json_decode(s); if err then error(err, 2) end; return v
  end,
  array = function(t)
    if t ~= nil then check_type(t, "table", "mock.json.array argument") end
    return setmetatable(t or {}, ARRAY)
  end,
  null = null,
  -- JSON text answered as written: its key order, spacing and numbers (mock.json sorts keys).
  raw = function(text, opts)
    check_type(text, "string", "mock.json.raw text")
    local _, err = H.json_decode(text)
    if err then fail("mock.json.raw: not JSON: " .. err) end
    return response("json", { body = text }, opts, "mock.json.raw")
  end,
}
setmetatable(json, { __call = function(_, value, opts)
  local body, err = H.json_encode(value)
  if body == nil then fail("mock.json: " .. err) end
  return response("json", { body = body }, opts, "mock.json")
end })
mock.json = json
mock.null = null

function mock.text(s, opts)
  if type(s) ~= "string" and type(s) ~= "number" then fail("mock.text: body must be a string, got " .. type(s)) end
  return response("text", { body = tostring(s) }, opts, "mock.text")
end

function mock.file(path, opts)
  check_type(path, "string", "mock.file path")
  local body, err = H.read(path)
  if body == nil then fail("mock.file: " .. err) end
  return response("file", { body = body, path = path }, opts, "mock.file")
end

function mock.template(source, opts)
  check_type(source, "string", "mock.template source")
  local id, ctype = H.template(source)
  if id == nil then fail("mock.template: " .. ctype) end
  return response("template", { template = id, content_type = ctype }, opts, "mock.template")
end

function mock.status(code, body, opts)
  if math.type(code) ~= "integer" then fail("mock.status: code must be an integer") end
  local o = { status = code }
  for k, v in pairs(check_opts(opts, builder_opts, "mock.status")) do if k ~= "status" then o[k] = v end end
  if type(body) == "table" and getmetatable(body) ~= RESP then return mock.json(body, o) end
  if body ~= nil and type(body) ~= "string" then fail("mock.status: body must be a string or a table") end
  return response("text", { body = body or "", empty = body == nil }, o, "mock.status")
end

function mock.redirect(url, status)
  check_type(url, "string", "mock.redirect url")
  status = status or 302
  if status ~= 301 and status ~= 302 and status ~= 303 and status ~= 307 and status ~= 308 then
    fail("mock.redirect: status must be 301, 302, 303, 307 or 308")
  end
  return response("text", { body = "", empty = true }, { status = status, headers = { Location = url } }, "mock.redirect")
end

function mock.fault(kind, opts)
  if type(kind) == "table" and opts == nil then opts, kind = kind, kind.fault end
  check_type(kind, "string", "mock.fault kind")
  opts = check_opts(opts, builder_opts, "mock.fault")
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.fault = kind
  return response("fault", { body = "" }, o, "mock.fault")
end

function mock.sequence(items)
  check_type(items, "table", "mock.sequence argument")
  if #items == 0 then fail("mock.sequence: needs at least one response") end
  for i, item in ipairs(items) do
    if type(item) == "function" then fail("mock.sequence: item " .. i .. " is a function; use response values") end
  end
  local id, err = H.sequence_id()
  if id == nil then fail("mock.sequence: " .. err) end
  return setmetatable({ kind = "sequence", items = items, id = id }, RESP)
end

-- named alternatives, switched at runtime; the starting one is `default`, else the
-- alphabetically first (Lua tables keep no order)
function mock.variants(spec)
  check_type(spec, "table", "mock.variants argument")
  local items, names, default = {}, {}, nil
  for k, v in pairs(spec) do
    if k == "default" then
      default = v
    else
      if type(k) ~= "string" then fail("mock.variants: variant names must be strings, got " .. type(k)) end
      items[k] = v
      names[#names + 1] = k
    end
  end
  if #names == 0 then fail("mock.variants: needs at least one variant") end
  table.sort(names)
  if default == nil then default = names[1] end
  if type(default) ~= "string" or items[default] == nil then
    fail("mock.variants: default '" .. tostring(default) .. "' is not one of the variants (" .. concat(names, ", ") .. ")")
  end
  return setmetatable({ kind = "variants", items = items, names = names, default = default }, RESP)
end

-- a Mock-Bundle folder (bundle.json) as one rule
function mock.bundle(dir, opts)
  check_type(dir, "string", "mock.bundle folder")
  opts = check_opts(opts, { handle_all = true, name = true }, "mock.bundle")
  local ok, err = H.bundle(dir, opts.name, opts.handle_all == true, where())
  if not ok then fail("mock.bundle: " .. err) end
end

-- a stubs folder: one sub-folder per endpoint, files NAME.STATUS[.EXT]
function mock.stubs(dir, endpoints, opts)
  check_type(dir, "string", "mock.stubs folder")
  check_type(endpoints, "table", "mock.stubs endpoints")
  opts = check_opts(opts, { delay = true }, "mock.stubs")
  if opts.delay ~= nil then check_type(opts.delay, "number", "mock.stubs delay") end
  local ok, err = H.stubs(dir, endpoints, opts.delay, where())
  if not ok then fail("mock.stubs: " .. err) end
end

-- cross-origin access for browser apps (the socket server answers preflights)
function mock.cors(opts)
  opts = check_opts(opts, { origins = true, headers = true, credentials = true, max_age = true }, "mock.cors")
  local ok, err = H.cors(opts.origins, opts.headers, opts.credentials, opts.max_age)
  if not ok then fail("mock.cors: " .. err) end
end

-- an OpenAPI spec the requests and answers are checked against (GET /__moonmock/contract)
function mock.spec(path, opts)
  check_type(path, "string", "mock.spec path")
  opts = check_opts(opts, { mode = true }, "mock.spec")
  if opts.mode ~= nil then check_type(opts.mode, "string", "mock.spec mode") end
  local ok, err = H.spec(path, opts.mode)
  if not ok then fail("mock.spec: " .. err) end
end

-- every operation of an OpenAPI spec served live, below the script's own rules
function mock.openapi(path, opts)
  check_type(path, "string", "mock.openapi path")
  opts = check_opts(opts, { mode = true, seed = true }, "mock.openapi")
  if opts.mode ~= nil then check_type(opts.mode, "string", "mock.openapi mode") end
  if opts.seed ~= nil and math.type(opts.seed) ~= "integer" then fail("mock.openapi: seed must be an integer") end
  local ok, err = H.openapi(path, opts.mode, opts.seed, where())
  if not ok then fail("mock.openapi: " .. err) end
end

-- forwards the request to a real upstream; the door answers with what comes back
function mock.proxy(base, opts)
  check_type(base, "string", "mock.proxy base URL")
  if not base:match("^[hH][tT][tT][pP][sS]?://[^/]") then
    fail("mock.proxy: the base URL must start with http:// or https:// and name a host, got '" .. base .. "'")
  end
  opts = check_opts(opts, { headers = true, timeout = true, insecure = true, delay = true }, "mock.proxy")
  if opts.timeout ~= nil and (type(opts.timeout) ~= "number" or opts.timeout <= 0) then
    fail("mock.proxy: timeout is milliseconds, a positive number, got " .. given(opts.timeout))
  end
  if opts.headers ~= nil then check_type(opts.headers, "table", "mock.proxy headers") end
  if opts.insecure ~= nil then check_type(opts.insecure, "boolean", "mock.proxy insecure") end
  return response("proxy", { base = base, timeout = opts.timeout, insecure = opts.insecure, proxy_headers = opts.headers },
                  { delay = opts.delay }, "mock.proxy")
end

-- matchers for query/headers/body
mock.present = setmetatable({ kind = "present" }, MATCHER)
mock.absent = setmetatable({ kind = "absent" }, MATCHER)
function mock.match(pattern)
  check_type(pattern, "string", "mock.match pattern")
  local ok, err = pcall(string.find, "", pattern)
  if not ok then fail("mock.match: invalid Lua pattern '" .. pattern .. "': " .. tostring(err)) end
  return setmetatable({ kind = "match", pattern = pattern }, MATCHER)
end

-- rules
local rule_opts = { status = true, headers = true, delay = true, times = true, name = true, priority = true, query = true,
                    exact_query = true, chaos = true }
local graphql_opts = { status = true, headers = true, delay = true, times = true, name = true, priority = true, path = true,
                       query = true, exact_query = true, variables = true, chaos = true }

local function register(spec, what)
  spec.where = where()
  local ok, err = H.register(spec)
  if not ok then fail(what .. ": " .. err) end
end

local function verb(method)
  return function(pattern, handler, opts)
    local what = "mock." .. (method and method:lower() or "any")
    check_type(pattern, "string", what .. " pattern")
    check_handler(handler, what, "the second argument")
    opts = check_opts(opts, rule_opts, what)
    register({ method = method, path = pattern, respond = handler, opts = opts, query = opts.query,
               exact_query = opts.exact_query }, what)
  end
end
for _, m in ipairs { "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS" } do mock[m:lower()] = verb(m) end
mock.any = verb(nil)

function mock.graphql(operation, handler, opts)
  check_type(operation, "string", "mock.graphql operation name")
  check_handler(handler, "mock.graphql", "the second argument")
  opts = check_opts(opts, graphql_opts, "mock.graphql")
  local path = opts.path or "/graphql"
  check_type(path, "string", "mock.graphql path")
  if opts.variables ~= nil then check_type(opts.variables, "table", "mock.graphql variables") end
  register({ method = "POST", path = path, respond = handler, opts = opts, graphql = operation, query = opts.query,
             exact_query = opts.exact_query, variables = opts.variables,
             default_name = "graphql " .. operation }, "mock.graphql")
end

local route_keys = { method = true, path = true, url = true, host = true, query = true, headers = true, json = true,
                     body = true, when = true, respond = true, times = true, name = true, priority = true,
                     status = true, delay = true, graphql = true, exact_query = true, variables = true, chaos = true }
function mock.route(spec)
  check_type(spec, "table", "mock.route argument")
  check_opts(spec, route_keys, "mock.route")
  if spec.respond == nil then fail("mock.route: missing respond") end
  check_handler(spec.respond, "mock.route", "respond")
  if spec.path ~= nil and spec.url ~= nil then fail("mock.route: give path or url, not both") end
  if spec.graphql ~= nil then check_type(spec.graphql, "string", "mock.route graphql operation name") end
  local pattern = spec.url or spec.path or (spec.graphql and "/graphql") or "/*"
  check_type(pattern, "string", "mock.route path")
  if spec.method ~= nil then check_type(spec.method, "string", "mock.route method") end
  if spec.when ~= nil then check_type(spec.when, "function", "mock.route when") end
  local method = spec.method and spec.method:upper() or (spec.graphql and "POST") or nil
  if method == "ANY" or method == "*" then method = nil end
  if spec.variables ~= nil then check_type(spec.variables, "table", "mock.route variables") end
  register({ method = method, path = pattern, respond = spec.respond, host = spec.host, query = spec.query,
             exact_query = spec.exact_query, variables = spec.variables,
             headers = spec.headers, json = spec.json, body = spec.body, when = spec.when, graphql = spec.graphql,
             opts = { times = spec.times, name = spec.name, priority = spec.priority, status = spec.status,
                      delay = spec.delay, chaos = spec.chaos } }, "mock.route")
end

-- host services
local state = {}
local state_proxy   -- the read-only face of `state` (below), what `mock.state:get(...)` passes
local function self_arg(first, ...)
  if rawequal(first, state) or rawequal(first, state_proxy) then return ... end
  return first, ...
end
for _, name in ipairs { "get", "set", "add", "incr", "delete", "keys", "flush" } do
  local f = H["state_" .. name]
  state[name] = function(...)
    local r, err, wait = f(self_arg(...))
    if wait then r, err = coroutine.yield(WAIT) end   -- the shared store's reply (sent on the loop's connection)
    if err ~= nil then error(err, 2) end
    return r
  end
end
mock.state = state

function mock.read(path)
  check_type(path, "string", "mock.read path")
  local body, err = H.read(path)
  if body == nil then error(err, 2) end
  return body
end

function mock.log(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  H.log(concat(parts, " "))
end
print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  H.log(concat(parts, "\t"))
end

mock.now = H.now
mock.uuid = H.uuid
math.random = H.random
math.randomseed = function() end

-- require: modules from the script folder and the library folders, loaded once per generation
local loaded = {}
require = function(name)
  check_type(name, "string", "require name")
  local cached = loaded[name]
  if cached ~= nil then return cached end
  local source, chunkname = H.find_module(name)
  if source == nil then error(chunkname, 2) end
  local chunk, err = load(source, chunkname, "t")
  if not chunk then error(err, 0) end
  local result = chunk(name)
  if result == nil then result = true end
  loaded[name] = result
  return result
end

-- Handlers run again and again in one VM: a handler that set `mock.text = nil` would break every
-- later request. So `mock`, `mock.json` and `mock.state` are read-only faces of the real tables.
-- (Told apart by their metatable's __metatable: a table keyed by them would be load-time state
-- the VM-sharing check looks into.)
local FROZEN = "the read-only mock API"
-- A name that is not there is a mistake, not a nil: say which name was meant.
local function suggest(t, name)
  setmetatable(t, { __index = function(_, k)
    local names = {}
    for key in pairs(t) do names[#names + 1] = key end
    local near = type(k) == "string" and nearest(k, names)
    local shown = name .. "." .. tostring(k)
    if near then error(where() .. shown .. " is not a function; did you mean " .. name .. "." .. near .. "?", 0) end
    error(where() .. shown .. " does not exist (the mock API is listed in docs/language.md)", 0)
  end })
end
suggest(mock, "mock")
suggest(state, "mock.state")
--@streams
-- Reading a global nobody set, in a handler, is a typo or a missing definition; nil would only
-- hide it.
-- (Moonmock's own chunks and C functions may look a global up to see whether it is there.)
setmetatable(_ENV, { __index = function(_, k)
  if type(k) ~= "string" then return nil end
  -- (While the script loads, `x = x or 0` is a common way to start a global.)
  if H.loading() then return nil end
  local info = getinfo(2, "S")
  if not info or info.what == "C" or info.source:sub(1, 9) == "=moonmock" then return nil end
  local names = {}
  for key in next, _ENV do if type(key) == "string" then names[#names + 1] = key end end
  local near = nearest(k, names)
  error(where() .. "reading undefined global '" .. k .. "'"
    .. (near and ("; did you mean '" .. near .. "'?") or " (define it before use, or make it a local)"), 0)
end })
local function freeze(t, name, call)
  return setmetatable({}, {
    __index = t,
    __newindex = function(_, k)
      error(where() .. name .. " is read-only (setting " .. name .. "." .. tostring(k)
        .. "): keep your own values in locals of the script or in mock.state", 0)
    end,
    __pairs = function() return next, t, nil end,
    __call = call,
    __metatable = FROZEN,
  })
end
mock.json = freeze(json, "mock.json", function(_, ...) return json(...) end)
state_proxy = freeze(state, "mock.state")
suggest(fake, "mock.fake")
mock.fake = freeze(fake, "mock.fake")
mock.state = state_proxy
if rawset then
  local raw_set = rawset
  rawset = function(t, k, v)
    if getmetatable(t) == FROZEN then error(where() .. "rawset cannot change the read-only mock API", 0) end
    return raw_set(t, k, v)
  end
end
return freeze(mock, "mock")
"""#
}

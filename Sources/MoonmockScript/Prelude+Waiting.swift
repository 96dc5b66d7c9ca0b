extension Prelude {
    /// Handlers that wait: `mock.sleep`, `mock.fetch`, `mock.proxy` with a `transform`,
    /// `mock.webhook` and `mock.after`. A wait is noted by the host, then the handler's
    /// coroutine yields; the door resumes it with the outcome (ScriptGeneration+Waiting).
    static let waitingSource = #"""

local yield = coroutine.yield

-- waits ms milliseconds without holding a thread (handlers and mock.after functions only)
function mock.sleep(ms)
  if type(ms) ~= "number" or ms < 0 or ms ~= ms then fail("mock.sleep: ms must be a number of milliseconds, 0 or more, got " .. given(ms)) end
  -- In a stream generator: the stream's own pause (the door's timer), as stream:sleep.
  if active_stream ~= nil and coroutine.running() == active_co then return active_stream:sleep(ms) end
  local ok, err = H.wait_sleep(ms)
  if not ok then fail("mock.sleep: " .. err) end
  yield()
end

local fetch_opts = { method = true, headers = true, body = true, json = true, timeout = true, insecure = true, ca = true }
local webhook_fields = { url = true, method = true, headers = true, body = true, json = true, timeout = true, insecure = true, ca = true,
                         delay = true, retries = true, backoff = true }

-- method, headers, body (json encoded, with its Content-Type), timeout, insecure, ca: checked
local function outbound(opts, what)
  if opts.method ~= nil then check_type(opts.method, "string", what .. " method") end
  local headers = {}
  if opts.headers ~= nil then
    check_type(opts.headers, "table", what .. " headers")
    for k, v in pairs(opts.headers) do headers[k] = v end
  end
  local body = opts.body
  if opts.json ~= nil then
    if body ~= nil then fail(what .. ": give body or json, not both") end
    local encoded, err = H.json_encode(opts.json)
    if encoded == nil then fail(what .. " json: " .. err) end
    body = encoded
    local typed = false
    for k in pairs(headers) do if type(k) == "string" and k:lower() == "content-type" then typed = true end end
    if not typed then headers["Content-Type"] = "application/json" end
  end
  if body ~= nil and type(body) ~= "string" then fail(what .. ": body must be a string (or use json = a table), got " .. type(body)) end
  if opts.timeout ~= nil and (type(opts.timeout) ~= "number" or opts.timeout <= 0) then
    fail(what .. ": timeout is milliseconds, a positive number, got " .. given(opts.timeout))
  end
  if opts.insecure ~= nil then check_type(opts.insecure, "boolean", what .. " insecure") end
  if opts.ca ~= nil then check_type(opts.ca, "string", what .. " ca") end
  return opts.method or "GET", headers, body, opts.timeout, opts.insecure, opts.ca
end

-- an HTTP(S) request from a handler: { status, headers, body, json } or nil, err
function mock.fetch(url, opts)
  check_type(url, "string", "mock.fetch url")
  opts = check_opts(opts, fetch_opts, "mock.fetch")
  local method, headers, body, timeout, insecure, ca = outbound(opts, "mock.fetch")
  local ok, err = H.wait_fetch(url, method, headers, body, timeout, insecure, ca)
  if not ok then fail("mock.fetch: " .. err) end
  return yield(WAIT)
end

-- mock.proxy with a transform: a handler that forwards, then lets transform(res, req) edit the answer
local plain_proxy = mock.proxy
local function answer_of(res)
  if type(res) ~= "table" or getmetatable(res) == RESP then return res end
  if type(res.status) ~= "number" then return res end   -- the handler's own value: answered as such
  local body = res.body
  if res.json ~= nil and res.body == res.raw_body then body = H.json_encode(res.json) end
  local headers = {}
  for k, v in pairs(res.headers or {}) do
    local name = type(k) == "string" and k:lower()
    if name and name ~= "content-length" and name ~= "transfer-encoding" and name ~= "connection" and name ~= "keep-alive" then headers[k] = v end
  end
  return response("fault", { body = body or "" }, { status = res.status, headers = headers }, "mock.proxy transform")
end
function mock.proxy(base, opts)
  if type(opts) ~= "table" or opts.transform == nil then return plain_proxy(base, opts) end
  local transform = opts.transform
  check_type(transform, "function", "mock.proxy transform")
  local rest = {}
  for k, v in pairs(opts) do if k ~= "transform" then rest[k] = v end end
  if rest.delay ~= nil then fail("mock.proxy: with a transform, give delay as the rule's option") end
  local target = plain_proxy(base, rest)
  return function(req)
    local ok, err = H.wait_proxy(target)
    if not ok then fail("mock.proxy: " .. err) end
    local res, reason = yield(WAIT)
    if res == nil then
      return mock.json({ error = "mock.proxy: upstream " .. base .. " did not answer: " .. tostring(reason), upstream = base }, { status = 502 })
    end
    res.raw_body = res.body
    local out = transform(res, req)
    if out == nil then out = res end
    return answer_of(out)
  end
end

-- a request sent after the answer is written (delay ms later), retried on connection errors and 5xx
function mock.webhook(spec)
  check_type(spec, "table", "mock.webhook argument")
  for k in pairs(spec) do
    if not webhook_fields[k] then
      local names = {}
      for name in pairs(webhook_fields) do names[#names + 1] = name end
      table.sort(names)
      fail("mock.webhook: unknown field '" .. tostring(k) .. "' (expected one of: " .. concat(names, ", ") .. ")")
    end
  end
  check_type(spec.url, "string", "mock.webhook url")
  local method, headers, body, timeout, insecure, ca = outbound(spec, "mock.webhook")
  if spec.method == nil then method = "POST" end
  for _, k in ipairs({ "delay", "backoff" }) do
    if spec[k] ~= nil and (type(spec[k]) ~= "number" or spec[k] < 0) then fail("mock.webhook: " .. k .. " is milliseconds, 0 or more, got " .. given(spec[k])) end
  end
  if spec.retries ~= nil and (math.type(spec.retries) ~= "integer" or spec.retries < 0) then
    fail("mock.webhook: retries must be an integer, 0 or more, got " .. given(spec.retries))
  end
  local ok, err = H.webhook(spec.url, method, headers, body, timeout, insecure, ca, spec.delay, spec.retries, spec.backoff)
  if not ok then fail("mock.webhook: " .. err) end
end

-- runs fn ms milliseconds after the answer is written (it may change state, send webhooks, wait)
function mock.after(ms, fn)
  if type(ms) ~= "number" or ms < 0 then fail("mock.after: ms must be a number of milliseconds, 0 or more, got " .. given(ms)) end
  check_type(fn, "function", "mock.after function")
  local ok, err = H.after(ms, fn)
  if not ok then fail("mock.after: " .. err) end
end

"""#
}

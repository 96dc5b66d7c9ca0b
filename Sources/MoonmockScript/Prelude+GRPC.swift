extension Prelude {
    /// `mock.proto`, `mock.grpc` and `mock.grpc_error`: gRPC, gRPC-Web and Connect calls as
    /// rules on `POST /pkg.Service/Method`. The rule's handler gets the call's messages as Lua
    /// tables (`req.message`, `req.messages`, `req.metadata`) and answers a table (the
    /// message), `mock.stream{...}` of messages (server streaming) or `mock.grpc_error(...)`;
    /// the host encodes that for the protocol the call came in (ScriptGeneration+GRPC).
    static let grpcSource = #"""
local GRPC_ERROR = {}

-- mock.proto("api.proto" | { "a.proto", "b.proto" } [, { include = { "proto/" } }]): protoc, or a descriptor set
function mock.proto(files, opts)
  if type(files) == "string" then files = { files } end
  check_type(files, "table", "mock.proto files")
  opts = check_opts(opts, { include = true }, "mock.proto")
  local include = opts.include
  if type(include) == "string" then include = { include } end
  if include ~= nil then check_type(include, "table", "mock.proto include") end
  local ok, err = H.proto(files, include)
  if not ok then fail("mock.proto: " .. err) end
end

-- mock.grpc_error(code, message, details): a status other than OK (code as a number or "NOT_FOUND")
function mock.grpc_error(code, message, details)
  local n, err = H.grpc_code(code)
  if n == nil then fail("mock.grpc_error: " .. err) end
  if message ~= nil then check_type(message, "string", "mock.grpc_error message") end
  if details ~= nil then check_type(details, "table", "mock.grpc_error details") end
  return setmetatable({ code = n, message = message or "", details = details }, GRPC_ERROR)
end

-- The call's compression: gRPC's grpc-encoding, Connect streaming's connect-content-encoding, Connect unary's content-encoding.
local function grpc_encoding(req)
  return req.headers["grpc-encoding"] or req.headers["connect-content-encoding"] or req.headers["content-encoding"]
end

local grpc_keys = { match = true, trailers = true, headers = true, times = true, delay = true, name = true, priority = true }

-- Server streaming from a generator (mock.stream(function(req, stream) ... end)): each
-- stream:send(message) leaves as it is sent; returning (a mock.grpc_error too) or stream:close() ends the call.
local GRPC_END = {}
local function grpc_generator(method, req, g, opts, delay, call)
  local ctype, connect = req.headers["content-type"], req.headers["connect-protocol-version"] ~= nil
  local _, _, headers = H.grpc_encode(method, ctype, connect, {}, 0, "", nil, opts.headers, opts.trailers, true)
  local ending = nil
  local function encode(m)
    local code, message, details = 0, "", nil
    local list = { m }
    if m == GRPC_END then
      list = {}
      if ending ~= nil then code, message, details = ending.code, ending.message, ending.details end
    end
    local pieces, err = H.grpc_encode(method, ctype, connect, list, code, message, details, opts.headers, opts.trailers, true)
    if pieces == nil then error("stream:send: " .. err, 3) end
    return pieces[1]
  end
  local function run(r, stream)
    local face = {}
    function face.send(self, m) return stream:send(m) end
    function face.sleep(self, ms) return stream:sleep(ms) end
    function face.close(self) stream:send(GRPC_END); return stream:close() end
    local copy = setmetatable({ message = call and call.message or {}, messages = call and call.messages or {},
                                metadata = r.headers }, { __index = r })
    local ret = g.fn(copy, face)
    if getmetatable(ret) == GRPC_ERROR then ending = ret end
    stream:send(GRPC_END)
  end
  local sopts = { headers = headers, delay = delay, interval = g.opts and g.opts.interval }
  return generator(run, sopts, "mock.grpc", encode, "stream", headers["content-type"])(req)
end

-- The answer of one call: its messages (or error), leading metadata and trailers, encoded by the host.
local function grpc_reply(method, req, result, opts, delay, ending, call)
  local ctype, connect = req.headers["content-type"], req.headers["connect-protocol-version"] ~= nil
  local code, message, details, messages, pieces = 0, "", nil, {}, nil
  if getmetatable(result) == GRPC_ERROR then
    code, message, details = result.code, result.message, result.details
  elseif getmetatable(result) == RESP and result.kind == "stream" then
    pieces = result.chunks
    for i, c in ipairs(pieces) do
      local m = c.data
      if type(m) == "string" then m = json.decode(m) end
      messages[i] = m
    end
  elseif type(result) == "function" and stream_generators[result] then
    return grpc_generator(method, req, stream_generators[result], opts, delay, call)
  elseif getmetatable(result) == RESP then
    error("mock.grpc " .. method .. ": answer a table (the message), mock.stream{...} of messages or mock.grpc_error(...), not a " .. tostring(result.kind) .. " response", 0)
  elseif type(result) == "table" then
    messages = { result }
  elseif result ~= nil then
    error("mock.grpc " .. method .. ": answer a table (the message), got " .. type(result), 0)
  end
  if ending ~= nil then code, message, details = ending.code, ending.message, ending.details end   -- messages, then an error
  local body, status, headers = H.grpc_encode(method, ctype, connect, messages, code, message, details, opts.headers,
                                              opts.trailers, pieces ~= nil)
  if body == nil then error("mock.grpc " .. method .. ": " .. status, 0) end
  if pieces == nil then return response("raw", { body = body }, { status = status, headers = headers, delay = delay }, "mock.grpc") end
  local chunks = {}
  for i, data in ipairs(body) do chunks[i] = { data = data, delay = pieces[i] and pieces[i].delay or 0 } end
  return stream_response(chunks, { headers = headers, delay = delay }, "mock.grpc", "stream", headers["content-type"])
end

-- mock.grpc("pkg.Service/Method", handler | message | { on_message = fn(call, msg) } [, opts])
function mock.grpc(method, handler, opts)
  check_type(method, "string", "mock.grpc method")
  if method:sub(1, 1) == "/" then method = method:sub(2) end
  local kind, err = H.grpc_method(method)
  if kind == nil then fail("mock.grpc: " .. err) end
  check_handler(handler, "mock.grpc", "the second argument")
  opts = check_opts(opts, grpc_keys, "mock.grpc")
  if opts.match ~= nil then check_type(opts.match, "table", "mock.grpc match") end
  if opts.trailers ~= nil then check_type(opts.trailers, "table", "mock.grpc trailers") end
  if opts.headers ~= nil then check_type(opts.headers, "table", "mock.grpc headers") end
  local delay = check_ms(opts.delay, "mock.grpc: delay")
  local on_message = type(handler) == "table" and getmetatable(handler) == nil and handler.on_message or nil
  if on_message ~= nil then check_type(on_message, "function", "mock.grpc on_message") end
  -- The handler of one answer (a function, a message, an error, a stream, or bidi's on_message).
  local function answering(handler)
   return function(req)
    local messages, derr = H.grpc_decode(method, req.headers["content-type"], req.headers["connect-protocol-version"] ~= nil, req.body, grpc_encoding(req))
    if messages == nil then return grpc_reply(method, req, mock.grpc_error("INVALID_ARGUMENT", derr), opts, delay) end
    -- The deadline (grpc-timeout): a delay past it ends the call with DEADLINE_EXCEEDED when it is due.
    local deadline = H.grpc_timeout(req.headers["grpc-timeout"])
    if deadline ~= nil and delay ~= nil and delay > deadline then
      return grpc_reply(method, req, mock.grpc_error("DEADLINE_EXCEEDED", "the mock's delay (" .. delay .. " ms) passed the call's deadline"), opts, deadline)
    end
    local call = setmetatable({ message = messages[1] or {}, messages = messages, metadata = req.headers }, { __index = req })
    local result = handler
    if on_message ~= nil then
      -- Bidirectional streaming: each message in, whatever call:send() answers out, in order.
      local out = {}
      function call.send(self, m) out[#out + 1] = m end
      local ending = nil
      for _, m in ipairs(messages) do
        local r = on_message(call, m)
        if getmetatable(r) == GRPC_ERROR then ending = r; break end
      end
      return grpc_reply(method, req, mock.stream(out), opts, delay, ending)
    elseif type(handler) == "function" then
      result = handler(call)
    end
    return grpc_reply(method, req, result, opts, delay, nil, call)
   end
  end
  local respond
  if getmetatable(handler) == RESP and handler.kind == "variants" then
    -- mock.variants of answers: each variant answers the call as a handler would.
    local items = {}
    for name, item in pairs(handler.items) do items[name] = answering(item) end
    respond = setmetatable({ kind = "variants", items = items, names = handler.names, default = handler.default }, RESP)
  else
    respond = answering(handler)
  end
  local when = nil
  if opts.match ~= nil then
    local pattern = opts.match
    when = function(req)
      local messages = H.grpc_decode(method, req.headers["content-type"], req.headers["connect-protocol-version"] ~= nil, req.body, grpc_encoding(req))
      return messages ~= nil and messages[1] ~= nil and H.json_contains(messages[1], pattern)
    end
  end
  if on_message ~= nil and opts.match == nil then
    -- Over HTTP/2 a bidirectional call is live: routed on its headers (H.grpc_live() is true
    -- then), each message handed to on_message as it arrives, each call:send() sent at once.
    local calls = {}
    local function dispatch(kind, id, path, a, b)
      if kind == "open" then
        local call = setmetatable({ metadata = a.headers, messages = {} }, { __index = request_copy(a) })
        local ctype = a.headers["content-type"]
        function call.send(self, m)
          if self ~= call then error("call:send: call it with a colon (call:send{...})", 2) end
          local ok, err = H.grpc_live_send(id, method, ctype, m)
          if not ok then error("call:send: " .. err, 2) end
        end
        calls[id] = { call = call, ctype = ctype }
      elseif kind == "message" then
        local live = calls[id]
        if live == nil then return end
        local msg, err = H.grpc_decode_one(method, live.ctype, a.binary)
        if msg == nil then H.grpc_live_close(id, 3, err); return end
        live.call.message = msg
        local r = on_message(live.call, msg)
        if getmetatable(r) == GRPC_ERROR then H.grpc_live_close(id, r.code, r.message) end
      elseif kind == "close" then
        calls[id] = nil
      end
    end
    local live = setmetatable({ kind = "websocket", status = 426, dispatch = dispatch, body = "a live gRPC call" }, RESP)
    register({ method = "POST", path = "/" .. method, respond = live, when = function() return H.grpc_live() end, live = true,
               checks = { on_message },
               opts = { times = opts.times, name = opts.name, priority = opts.priority },
               default_name = "grpc " .. method }, "mock.grpc")
  end
  -- The VM-sharing check reads the script's own functions (the wrapper keeps no state of its own).
  local checks = {}
  local function vouch(h)
    if type(h) == "function" then checks[#checks + 1] = h
    elseif type(h) == "table" and getmetatable(h) == nil and type(h.on_message) == "function" then checks[#checks + 1] = h.on_message end
  end
  if getmetatable(handler) == RESP and handler.kind == "variants" then
    for _, item in pairs(handler.items) do vouch(item) end
  else
    vouch(handler)
  end
  register({ method = "POST", path = "/" .. method, respond = respond, when = when, checks = checks, waits = true,
             opts = { times = opts.times, name = opts.name, priority = opts.priority },
             default_name = "grpc " .. method }, "mock.grpc")
end
"""#
}

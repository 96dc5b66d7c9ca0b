extension Prelude {
    /// `mock.websocket` and `mock.websockets`: WebSocket routes on the server. The route's
    /// answer is a `websocket` response value holding `dispatch`, which the host calls as
    /// sockets open, receive, fire timers and close; a plain request gets its `426`.
    static let webSocketSource = #"""
local ws_timers, ws_next_timer = {}, 0
local WS = {}
WS.__index = WS
local function ws_object(id, path) return setmetatable({ id = id, path = path }, WS) end
local function ws_check(self, what)
  if getmetatable(self) ~= WS then error(what .. ": call it with a colon (ws:" .. what:match("ws:(.*)") .. "(...))", 3) end
end
function WS.send(self, value)
  ws_check(self, "ws:send")
  if type(value) == "table" then value = json.encode(value) end
  if type(value) ~= "string" and type(value) ~= "number" then error("ws:send: send a string or a table (JSON), got " .. type(value), 2) end
  local ok, err = H.ws_send(self.id, tostring(value), false)
  if not ok then error(err, 2) end
end
function WS.send_binary(self, bytes)
  ws_check(self, "ws:send_binary")
  if type(bytes) ~= "string" then error("ws:send_binary: send a string of bytes, got " .. type(bytes), 2) end
  local ok, err = H.ws_send(self.id, bytes, true)
  if not ok then error(err, 2) end
end
function WS.close(self, code, reason)
  ws_check(self, "ws:close")
  local ok, err = H.ws_close(self.id, code, reason)
  if not ok then error(err, 2) end
end
function WS.after(self, ms, fn)
  ws_check(self, "ws:after")
  if type(fn) ~= "function" then error("ws:after: give milliseconds and a function(ws)", 2) end
  ws_next_timer = ws_next_timer + 1
  ws_timers[ws_next_timer] = fn
  local ok, err = H.ws_after(self.id, ms, ws_next_timer)
  if not ok then ws_timers[ws_next_timer] = nil; error(err, 2) end
end

-- mock.websocket(pattern, { on_open = fn(ws, req), on_message = fn(ws, msg), on_close = fn(ws, code, reason) })
function mock.websocket(pattern, handlers)
  check_type(pattern, "string", "mock.websocket pattern")
  check_type(handlers, "table", "mock.websocket handlers")
  handlers = check_opts(handlers, { on_open = true, on_message = true, on_close = true }, "mock.websocket")
  for _, k in ipairs { "on_open", "on_message", "on_close" } do
    if handlers[k] ~= nil and type(handlers[k]) ~= "function" then
      fail("mock.websocket: " .. k .. " must be a function, got " .. given(handlers[k]))
    end
  end
  local function dispatch(kind, id, path, a, b)
    local ws = ws_object(id, path)
    if kind == "open" then
      if handlers.on_open then handlers.on_open(ws, a) end
    elseif kind == "message" then
      if handlers.on_message then handlers.on_message(ws, a) end
    elseif kind == "timer" then
      local fn = ws_timers[a]
      ws_timers[a] = nil
      if fn then fn(ws) end
    elseif kind == "close" then
      if handlers.on_close then handlers.on_close(ws, a, b) end
    end
  end
  local answer = setmetatable({ kind = "text", status = 426, pattern = pattern, dispatch = dispatch,
    body = "this is a WebSocket route: connect with a WebSocket client (ws:// or wss://)\n",
    headers = { Upgrade = "websocket", Connection = "Upgrade", ["Sec-WebSocket-Version"] = "13" } }, RESP)
  answer.kind = "websocket"
  register({ method = "GET", path = pattern, respond = answer, opts = {}, default_name = "websocket " .. pattern }, "mock.websocket")
end

-- mock.websockets([pattern]): the open sockets (of routes matching pattern), for broadcasts
function mock.websockets(pattern)
  if pattern ~= nil then check_type(pattern, "string", "mock.websockets pattern") end
  local list, err = H.ws_list(pattern)
  if list == nil then error(err, 2) end
  local sockets = {}
  for i, s in ipairs(list) do sockets[i] = ws_object(s.id, s.path) end
  return sockets
end

"""#
}

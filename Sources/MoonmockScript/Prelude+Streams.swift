extension Prelude {
    /// `mock.sse`, `mock.stream` and `mock.llm`: bodies sent in pieces over time. Each builds
    /// a `stream` response value — its chunks with the delay before each — that the doors send
    /// from their timers (``StreamPlan``). `mock.llm` is a handler that answers in a provider's
    /// wire format, streamed when the request asks for it.
    static let streamsSource = #"""
local stream_opts = { status = true, headers = true, delay = true, interval = true, heartbeat = true, close = true, content_type = true }

local function check_ms(v, what)
  if v ~= nil and (type(v) ~= "number" or v < 0 or v ~= v) then fail(what .. " must be a number of milliseconds >= 0, got " .. given(v)) end
  return v
end

local function stream_response(chunks, opts, what, kind, content_type, heartbeat_bytes, extra)
  local fields = extra or {}
  fields.kind, fields.chunks, fields.stream_kind = "stream", chunks, kind
  fields.content_type, fields.close = opts.content_type or content_type, opts.close ~= false
  if opts.heartbeat ~= nil then
    fields.heartbeat = check_ms(opts.heartbeat, what .. ": heartbeat")
    fields.heartbeat_bytes = heartbeat_bytes or "\n"
  end
  return finish_response(fields, opts, what, 200)
end

-- One Server-Sent Event as its lines: event, id, retry, then data (a table is JSON), each
-- line of data on a line of its own, and the blank line that ends the event.
local function sse_bytes(e, what)
  local out = {}
  if e.comment ~= nil then out[#out + 1] = ": " .. tostring(e.comment) .. "\n" end
  if e.event ~= nil then out[#out + 1] = "event: " .. tostring(e.event) .. "\n" end
  if e.id ~= nil then out[#out + 1] = "id: " .. tostring(e.id) .. "\n" end
  if e.retry ~= nil then
    if math.type(e.retry) ~= "integer" or e.retry < 0 then fail(what .. ": retry must be a whole number of milliseconds") end
    out[#out + 1] = "retry: " .. e.retry .. "\n"
  end
  local data = e.data
  if type(data) == "table" then data = json.encode(data) end
  if data ~= nil then
    data = tostring(data)
    for line in (data .. "\n"):gmatch("(.-)\r?\n") do out[#out + 1] = "data: " .. line .. "\n" end
  end
  out[#out + 1] = "\n"
  return table.concat(out)
end

-- mock.sse(events [, opts]): events in order, `interval` ms apart (an event's own `delay` wins)
-- The request's fields, read now: a generator runs on after the handler's call has ended.
local request_fields = { "method", "url", "scheme", "host", "port", "path", "query", "headers", "params",
  "body", "json", "cookies", "id" }
local function request_copy(req)
  local copy = {}
  for _, k in ipairs(request_fields) do copy[k] = req[k] end
  return copy
end

local active_co, active_stream   -- the generator being resumed (mock.sleep in it is stream:sleep)

-- mock.sse(function(req, stream) ... end [, opts]): a generator, a coroutine resumed by the
-- door's timer. stream:send(event) sends, stream:sleep(ms) waits (the VM serves others
-- meanwhile), stream:close() ends; returning ends too.
local function generator(fn, opts, what, encode, kind, content_type, heartbeat)
  opts = check_opts(opts, stream_opts, what)
  return function(req)
    local snapshot = request_copy(req)
    local batch, pending, closed = {}, 0, false
    local stream = {}
    function stream.send(self, e)
      if self ~= stream then error("stream:send: call it with a colon (stream:send{...})", 2) end
      local bytes, id = encode(e)
      batch[#batch + 1] = { data = bytes, delay = pending, id = id }
      pending = 0
    end
    function stream.sleep(self, ms)
      if self ~= stream then error("stream:sleep: call it with a colon (stream:sleep(ms))", 2) end
      if type(ms) ~= "number" or ms < 0 or ms ~= ms then error("stream:sleep: give milliseconds >= 0, got " .. given(ms), 2) end
      pending = pending + ms
      coroutine.yield()
    end
    function stream.close(self)
      if self ~= stream then error("stream:close: call it with a colon (stream:close())", 2) end
      closed = true
      coroutine.yield()
    end
    local co = coroutine.create(function() return fn(snapshot, stream) end)
    -- Resumes the generator; a wait it asks the host for (mock.fetch, mock.state on a shared
    -- store) goes out of this stretch, and what the host gives back goes in.
    local function run(...)
      active_co, active_stream = co, stream
      H.relay(co)
      local ok, err = coroutine.resume(co, ...)
      H.relay(nil)
      active_co, active_stream = nil, nil
      if ok and err == WAIT then return run(coroutine.yield(WAIT)) end
      return ok, err
    end
    -- One stretch: runs until the generator sleeps, closes or returns; gives what it sent,
    -- a wait for its sleep, and whether it is done.
    local function stretch()
      batch = {}
      local ok, err = run()
      if not ok then error(err, 0) end
      local done = closed or coroutine.status(co) == "dead"
      if not done and pending > 0 then
        batch[#batch + 1] = { data = "", delay = pending }
        pending = 0
      end
      return batch, done
    end
    local first, done = stretch()
    local fields = { chunks = first, done = done, more = (not done) and stretch or nil }
    return stream_response(first, opts, what, kind, content_type, heartbeat, fields)
  end
end

local function sse_encode(e)
  if type(e) ~= "table" then e = { data = e } end
  return sse_bytes(e, "stream:send"), e.id ~= nil and tostring(e.id) or nil
end

local function chunk_encode(p)
  if type(p) == "table" then return json.encode(p) .. "\n" end
  if type(p) ~= "string" then error("stream:send: send a string or a table (a JSON line), got " .. type(p), 3) end
  return p
end

function mock.sse(events, opts)
  if type(events) == "function" then
    return generator(events, opts, "mock.sse", sse_encode, "sse", "text/event-stream", ": heartbeat\n\n")
  end
  check_type(events, "table", "mock.sse events")
  opts = check_opts(opts, stream_opts, "mock.sse")
  local interval = check_ms(opts.interval, "mock.sse: interval") or 0
  local chunks = {}
  for i, e in ipairs(events) do
    if type(e) ~= "table" then e = { data = e } end
    local what = "mock.sse: event " .. i
    local delay = check_ms(e.delay, what .. ": delay") or (i > 1 and interval or 0)
    chunks[i] = { data = sse_bytes(e, what), delay = delay, id = e.id ~= nil and tostring(e.id) or nil }
  end
  local r = stream_response(chunks, opts, "mock.sse", "sse", "text/event-stream", ": heartbeat\n\n")
  return r
end

-- The generator functions behind the handlers mock.stream(fn) made (mock.grpc runs them its own way).
local stream_generators = setmetatable({}, { __mode = "k" })

-- mock.stream(chunks [, opts]): pieces of a body (strings, or tables as JSON lines), `interval` ms apart
function mock.stream(pieces, opts)
  if type(pieces) == "function" then
    local handler = generator(pieces, opts, "mock.stream", chunk_encode, "stream", (opts or {}).content_type or "application/x-ndjson")
    stream_generators[handler] = { fn = pieces, opts = opts }
    return handler
  end
  check_type(pieces, "table", "mock.stream chunks")
  opts = check_opts(opts, stream_opts, "mock.stream")
  local interval = check_ms(opts.interval, "mock.stream: interval") or 0
  local chunks = {}
  local ndjson = false
  for i, p in ipairs(pieces) do
    local delay = i > 1 and interval or 0
    local data = p
    if type(p) == "table" and getmetatable(p) == nil and p.data ~= nil then
      delay = check_ms(p.delay, "mock.stream: chunk " .. i .. ": delay") or delay
      data = p.data
    end
    if type(data) == "table" then data = json.encode(data) .. "\n"; ndjson = true end
    if type(data) ~= "string" then fail("mock.stream: chunk " .. i .. " must be a string or a table, got " .. given(data)) end
    chunks[i] = { data = data, delay = delay }
  end
  return stream_response(chunks, opts, "mock.stream", "stream", ndjson and "application/x-ndjson" or "application/octet-stream")
end

-- The pieces of `text` an LLM would send: words (each with the space before it) or characters.
-- (Index loops with string.find and utf8.offset: the VM-sharing check follows these, not
-- the iterators of gmatch and utf8.codes.)
local function llm_tokens(text, by)
  local tokens = {}
  if by == "char" then
    local n = utf8.len(text)
    if n == nil then
      for k = 1, #text do tokens[k] = string.sub(text, k, k) end
    else
      for k = 1, n do tokens[k] = string.sub(text, utf8.offset(text, k), utf8.offset(text, k + 1) - 1) end
    end
    return tokens
  end
  local at = 1
  while true do
    local first, last = string.find(text, "%s*%S+", at)
    if first == nil then break end
    tokens[#tokens + 1] = string.sub(text, first, last)
    at = last + 1
  end
  if at <= #text then tokens[#tokens + 1] = string.sub(text, at) end
  return tokens
end

local function count_words(t)
  local n, at = 0, 1
  while true do
    local _, last = string.find(t, "%S+", at)
    if last == nil then return n end
    n, at = n + 1, last + 1
  end
end

-- Words in the request's messages (and system prompt): the input tokens a usage reports.
local function llm_input_tokens(body)
  local n = 0
  local texts = { body.system }
  if type(body.messages) == "table" then
    for _, m in ipairs(body.messages) do
      if type(m) == "table" then
        if type(m.content) == "table" then
          for _, part in ipairs(m.content) do if type(part) == "table" then texts[#texts + 1] = part.text end end
        else
          texts[#texts + 1] = m.content
        end
      end
    end
  end
  for _, t in ipairs(texts) do
    if type(t) == "string" then n = n + count_words(t) end
  end
  return math.max(n, 1)
end

-- mock.llm{ text =, format =, model =, tokens_per_second =, chunk = }: a chat completion handler
function mock.llm(spec)
  check_type(spec, "table", "mock.llm argument")
  spec = check_opts(spec, { text = true, format = true, model = true, tokens_per_second = true, chunk = true }, "mock.llm")
  local format = spec.format or "openai"
  if format ~= "openai" and format ~= "anthropic" then fail('mock.llm: format must be "openai" or "anthropic", got ' .. given(format)) end
  if type(spec.text) ~= "string" and type(spec.text) ~= "function" then
    fail("mock.llm: text must be a string or a function(req) returning one, got " .. given(spec.text))
  end
  local by = spec.chunk or "word"
  if by ~= "word" and by ~= "char" then fail('mock.llm: chunk must be "word" or "char", got ' .. given(by)) end
  local tps = spec.tokens_per_second or 50
  if type(tps) ~= "number" or tps <= 0 then fail("mock.llm: tokens_per_second must be a positive number, got " .. given(tps)) end
  return function(req)
    local text = spec.text
    if type(text) == "function" then text = text(req) end
    if type(text) ~= "string" then error("mock.llm: text(req) must return a string, got " .. type(text), 0) end
    local body = type(req.json) == "table" and req.json or {}
    -- Ids from the host (no counter here: it would be state each VM keeps on its own).
    local serial = (string.gsub(mock.uuid(), "%-", ""))
    local model = spec.model or body.model or (format == "openai" and "gpt-4o-mini" or "claude-sonnet-4-5")
    local tokens = llm_tokens(text, by)
    local input, output = llm_input_tokens(body), #tokens
    local interval = 1000 / tps
    if format == "openai" then
      local id, created = "chatcmpl-" .. serial, math.floor(mock.now())
      local usage = { prompt_tokens = input, completion_tokens = output, total_tokens = input + output }
      if body.stream ~= true then
        return mock.json({ id = id, object = "chat.completion", created = created, model = model,
          choices = { { index = 0, message = { role = "assistant", content = text, refusal = mock.null },
                        logprobs = mock.null, finish_reason = "stop" } },
          usage = usage })
      end
      -- (Tables built in place: the VM-sharing check follows constructors, not a helper's result.)
      local events = { { data = { id = id, object = "chat.completion.chunk", created = created, model = model,
        choices = { { index = 0, delta = { role = "assistant", content = "" }, logprobs = mock.null, finish_reason = mock.null } } } } }
      for _, t in ipairs(tokens) do
        events[#events + 1] = { delay = interval, data = { id = id, object = "chat.completion.chunk", created = created, model = model,
          choices = { { index = 0, delta = { content = t }, logprobs = mock.null, finish_reason = mock.null } } } }
      end
      events[#events + 1] = { data = { id = id, object = "chat.completion.chunk", created = created, model = model,
        choices = { { index = 0, delta = {}, logprobs = mock.null, finish_reason = "stop" } } } }
      if type(body.stream_options) == "table" and body.stream_options.include_usage then
        events[#events + 1] = { data = { id = id, object = "chat.completion.chunk", created = created, model = model,
          choices = mock.json.array(), usage = usage } }
      end
      events[#events + 1] = { data = "[DONE]" }
      return mock.sse(events)
    end
    local id = "msg_" .. serial
    if body.stream ~= true then
      return mock.json({ id = id, type = "message", role = "assistant", model = model,
        content = { { type = "text", text = text } }, stop_reason = "end_turn", stop_sequence = mock.null,
        usage = { input_tokens = input, output_tokens = output } })
    end
    local events = {
      { event = "message_start", data = { type = "message_start", message = { id = id, type = "message", role = "assistant",
        model = model, content = mock.json.array(), stop_reason = mock.null, stop_sequence = mock.null,
        usage = { input_tokens = input, output_tokens = 1 } } } },
      { event = "content_block_start", data = { type = "content_block_start", index = 0, content_block = { type = "text", text = "" } } },
      { event = "ping", data = { type = "ping" } },
    }
    for _, t in ipairs(tokens) do
      events[#events + 1] = { event = "content_block_delta", delay = interval,
        data = { type = "content_block_delta", index = 0, delta = { type = "text_delta", text = t } } }
    end
    events[#events + 1] = { event = "content_block_stop", data = { type = "content_block_stop", index = 0 } }
    events[#events + 1] = { event = "message_delta", data = { type = "message_delta",
      delta = { stop_reason = "end_turn", stop_sequence = mock.null }, usage = { output_tokens = output } } }
    events[#events + 1] = { event = "message_stop", data = { type = "message_stop" } }
    return mock.sse(events)
  end
end

"""#
}

-- Moonmock quick start. Try it without a server:
--   moonmock request examples/mocks.lua GET http://localhost/users/7
-- Rules are tried top to bottom; the first one that answers wins.

-- a path parameter; a table becomes a JSON 200
mock.get("/users/:id", function(req)
  return { id = tonumber(req.params.id), name = "User " .. req.params.id }
end)

-- a fixture file next to this script (content type from the extension)
mock.get("/users", mock.file("fixtures/users_success.json"))

-- GraphQL by operationName (POST /graphql)
mock.graphql("GetUser", function(req)
  local id = req.json.variables and req.json.variables.id or "1"
  return { data = { user = { id = id, name = "User " .. id } } }
end)

-- state that survives between requests (and hot reloads): fails twice, then succeeds
mock.get("/flaky", function()
  local n = mock.state:incr("flaky", 1, 0)
  if n <= 2 then return mock.json({ attempt = n, error = "try again" }, { status = 503 }) end
  return { ok = true, attempt = n }
end)

-- a template: values from the request, a fresh uuid; templates never run code
mock.post("/orders", mock.template('{"id":"{{uuid}}","sku":"{{req.json.sku}}","status":"created"}', { status = 201 }))

-- full form: every predicate must hold
mock.route {
  method = "PUT", path = "/carts/:id",
  headers = { ["x-tenant"] = "acme" },
  json = { currency = "EUR" },
  when = function(req) return req.json.total > 1000 end,
  respond = mock.json({ error = "payment required" }, { status = 402 }),
}

-- the transport waits 1.5 s before answering; Lua is not blocked
mock.get("/slow", mock.json({ ok = true }, { delay = 1500 }))

-- the first request gets its connection reset, the next ones fall through to later rules
mock.get("/reset", mock.fault("connection_reset"), { times = 1 })
mock.get("/reset", mock.text("recovered"))

-- The benchmark script: about 20 routes of the kinds real apps mock. The measured routes are
-- GET /users/:id and the GraphQL operation GetUser (which decodes the JSON body).

mock.get("/health", { ok = true })
mock.get("/config", mock.json({ feature_flags = { search = true, chat = false }, version = "1.2.3" }))
mock.get("/users", function(req)
  local page = tonumber(req.query.page or "1")
  return { page = page, users = { { id = 1 }, { id = 2 } } }
end)
mock.get("/users/:id", function(req)
  return { id = tonumber(req.params.id), name = "User " .. req.params.id, email = "user" .. req.params.id .. "@example.com" }
end)
mock.post("/users", mock.json({ created = true }, { status = 201 }))
mock.put("/users/:id", function(req) return { id = req.params.id, updated = true } end)
mock.delete("/users/:id", mock.status(204))
mock.get("/users/:id/orders", function(req) return { user = req.params.id, orders = mock.json.array() } end)
mock.get("/orders/:id", function(req) return { id = req.params.id, status = "shipped" } end)
mock.post("/orders", mock.template('{"id":"{{uuid}}","sku":"{{req.json.sku}}"}', { status = 201 }))
mock.get("/products", mock.json({ { sku = "A1", price = 10 }, { sku = "B2", price = 20 } }))
mock.get("/products/:sku", function(req) return { sku = req.params.sku, price = 42 } end)
mock.get("/search", function(req) return { q = req.query.q, results = mock.json.array() } end)
mock.route { method = "POST", path = "/login", json = { user = "admin" }, respond = { token = "t0k3n" } }
mock.post("/login", mock.json({ error = "bad credentials" }, { status = 401 }))
mock.get("/flaky", function()
  local n = mock.state:incr("flaky", 1, 0)
  if n % 3 == 0 then return mock.status(503) end
  return { ok = true }
end)
mock.graphql("GetViewer", { data = { viewer = { id = "me" } } })
mock.graphql("ListPosts", { data = { posts = mock.json.array() } })
mock.graphql("GetUser", function(req)
  local id = req.json.variables.id
  return { data = { user = { id = id, name = "User " .. id } } }
end)
mock.get("/static/*path", function(req) return "file " .. req.params.path end)

-- A realistic API in 30 lines: people who stay the same, a shop that keeps what you POST,
-- orders made from a schema, and a bad day to switch on (PUT /__moonmock/chaos {"profile": "bad-day"}).
mock.cors { origins = "*" }
mock.get("/api/users/:id", function(req)
  local f = mock.fake.seeded("user:" .. req.params.id)
  return { id = tonumber(req.params.id), name = f.name(), email = f.email(), phone = f.phone(),
           address = { street = f.street(), city = f.city(), postcode = f.postcode() },
           company = f.company(), avatar = f.image_url{ w = 128, h = 128 } }
end)
mock.resource("/api/products", {
  seed = { count = 50, item = function()
    return { name = mock.fake.words{ n = 2 }, price = mock.fake.float{ min = 5, max = 500, digits = 2 },
             category = mock.fake.pick{ "books", "games", "garden" }, in_stock = mock.fake.bool{ p = 0.8 } }
  end },
  schema = { type = "object", required = { "name", "price" },
             properties = { name = { type = "string", minLength = 1 }, price = { type = "number", minimum = 0 } } },
  per_page = 10,
})
local Order = { type = "object", required = { "id", "status", "total", "placed_at", "lines" }, properties = {
  id = { type = "string", format = "uuid" }, status = { enum = { "placed", "paid", "shipped" } },
  total = { type = "number", minimum = 1, maximum = 900 }, placed_at = { type = "string", format = "date-time" },
  lines = { type = "array", minItems = 1, maxItems = 4, items = { type = "object", required = { "sku", "qty" }, properties = {
    sku = { type = "string", pattern = "^[A-Z]{2}-[0-9]{5}$" }, qty = { type = "integer", minimum = 1, maximum = 3 } } } } } }
mock.get("/api/orders/:id", function(req) return mock.schema(Order, { seed_key = req.params.id }) end)
mock.chaos_profile("bad-day", { error_rate = 0.1, latency = { dist = "lognormal", median = 80, p99 = 900 } })
mock.chaos{ path = "/api/search", rate_limit = { rps = 5, burst = 5 } }
mock.get("/api/search", function(req)
  return mock.json.array{ mock.fake.seeded(req.query.q or "").name(), mock.fake.seeded((req.query.q or "") .. "2").name() }
end)

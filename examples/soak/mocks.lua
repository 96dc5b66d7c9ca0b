-- The soak test's script: state, delays, a sequence and templates, as a real mock server sees.
-- scripts/soak rewrites VERSION every 30 s to make the server reload under load.
local VERSION = 1

mock.get("/users/:id", function(req)
  local n = mock.state:incr("user:" .. req.params.id, 1, 0)
  return { id = tonumber(req.params.id), seen = n, version = VERSION }
end)

mock.post("/orders", mock.template('{"id":"{{uuid}}","sku":"{{req.json.sku}}"}', { status = 201 }))

mock.get("/slow", mock.json({ ok = true }, { delay = { min = 1, max = 20 } }))

mock.get("/session", function(req)
  mock.state:set("session:" .. (req.query.u or "anon"), mock.uuid(), 60)
  return { ok = true }
end)

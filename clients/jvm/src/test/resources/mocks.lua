mock.get("/users/:id", function(req) return { id = tonumber(req.params.id), name = "User " .. req.params.id } end, { name = "user" })
mock.get("/weather", mock.variants { default = "sunny", sunny = { sky = "clear" }, storm = mock.status(503, { sky = "dark" }) })
mock.get("/count", function() return { n = mock.state:incr("hits") } end)

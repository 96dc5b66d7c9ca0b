-- A shop API for the client's chaos and resource tests.
mock.chaos_profile("bad-day", { error_rate = 1, status = 503 })
mock.resource("/products", { seed = { count = 12, item = function(i) return { name = mock.fake.words{ n = 2 }, price = i * 10 } end } })
mock.get("/ping", "pong")

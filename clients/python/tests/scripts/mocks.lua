-- The Python client's test script.
mock.get("/users/:id", function(req)
  return { id = tonumber(req.params.id), name = "User " .. req.params.id }
end)
mock.get("/me", function() return { user = mock.state:get("user") } end)
mock.get("/checkout", mock.variants {
  default = "ok",
  ok = { status = "paid" },
  declined = mock.json({ error = "card declined" }, { status = 402 }),
})

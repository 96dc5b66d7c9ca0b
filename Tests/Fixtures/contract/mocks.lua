-- Mocks for petstore.yaml: some keep the contract, some break it (the tests say which).
mock.spec("petstore.yaml")

mock.get("/v1/pets", function(req)
  local pets = { { id = 1, name = "Rex", tag = mock.null, status = "available" } }
  if req.query.broken == "1" then pets[1].name = 7 end
  return mock.json(pets, { headers = { ["X-Total-Count"] = "1" } })
end)
mock.post("/v1/pets", function(req)
  local pet = mock.json.decode(req.body) or {}
  pet.id = 2
  return mock.json(pet, { status = 201 })
end)
mock.get("/v1/pets/mine", mock.json({ { id = 3, name = "Mine" } }))
mock.get("/v1/pets/:id", function(req)
  if req.params.id == "404" then return mock.json({ code = 404, message = "no such pet" }, { status = 404 }) end
  if req.params.id == "418" then return mock.json({ teapot = true }, { status = 418 }) end
  return mock.json({ id = tonumber(req.params.id) or req.params.id, name = "Pet " .. req.params.id, secret = req.query.secret })
end)
mock.get("/v1/files/:file", mock.text("hello"))
mock.get("/v1/extra", mock.json({ ok = true }))

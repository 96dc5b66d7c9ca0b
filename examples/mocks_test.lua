-- Specs for examples/mocks.lua. Run with: moonmock test examples/mocks.lua
test("a user by id", function()
  local r = request{ url = "/users/7" }
  expect(r.status):equals(200)
  expect(r.json):equals{ id = 7, name = "User 7" }
end)

test("the users fixture", function()
  local r = request{ url = "/users" }
  expect(r.headers["content-type"]):matches("^application/json")
  expect(r.json[1]):contains{ name = "Ada Lovelace" }
end)

test("GraphQL by operation name", function()
  local r = request{ url = "/graphql", json = { operationName = "GetUser", variables = { id = "3" } } }
  expect(r.json):equals{ data = { user = { id = "3", name = "User 3" } } }
end)

test("flaky: fails twice, then succeeds; each test starts from fresh state", function()
  expect(request{ url = "/flaky" }.status):equals(503)
  expect(request{ url = "/flaky" }.status):equals(503)
  expect(request{ url = "/flaky" }.json):contains{ ok = true, attempt = 3 }
  expect(state:get("flaky")):equals(3)
end)

test("an order from a template", function()
  local r = request{ method = "POST", url = "/orders", json = { sku = "A-1" } }
  expect(r.status):equals(201)
  expect(r.json):contains{ sku = "A-1", status = "created" }
  expect(r.json.id):matches("^%x+%-%x+%-%x+%-%x+%-%x+$")
end)

test("big carts need payment", function()
  local r = request{ method = "PUT", url = "/carts/1", headers = { ["X-Tenant"] = "acme" },
                     json = { currency = "EUR", total = 2000 } }
  expect(r.status):equals(402)
end)

test("a delay is reported, not waited for", function()
  local r = request{ url = "/slow" }
  expect(r.delay):equals(1500)
  expect(r.json):equals{ ok = true }
end)

test("the first reset, then recovered", function()
  expect(request{ url = "/reset" }.fault):equals("connection_reset")
  expect(request{ url = "/reset" }.body):equals("recovered")
end)

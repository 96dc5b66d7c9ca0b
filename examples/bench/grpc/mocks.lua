-- The gRPC benchmark (scripts/bench-http2): unary calls decoded, answered by Lua, encoded.
mock.proto("bench.proto")
mock.grpc("bench.v1.Users/GetUser", function(req)
  local id = req.message.id or 0
  return { id = id, name = "User " .. id, email = "user" .. id .. "@example.com" }
end)

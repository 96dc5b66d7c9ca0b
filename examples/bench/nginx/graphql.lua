-- wrk script: POST the GraphQL GetUser operation (the body Moonmock and nginx+Lua decode).
wrk.method = "POST"
wrk.body = '{"operationName":"GetUser","variables":{"id":"7"},"query":"query GetUser($id: ID!) { user(id: $id) { id name } }"}'
wrk.headers["Content-Type"] = "application/json"

-- wrk script: the GraphQL POST with Connection: close.
wrk.method = "POST"
wrk.body = '{"operationName":"GetUser","variables":{"id":"7"},"query":"query GetUser($id: ID!) { user(id: $id) { id name } }"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Connection"] = "close"

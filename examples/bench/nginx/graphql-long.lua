-- wrk script: POST the GraphQL GetUser operation with a query of real size (about 2.5 KB, as
-- apps send with fragments and many fields): the body's string text is most of what the
-- operation-name check and the JSON decoder read.
local fields = {}
for k = 0, 59 do fields[#fields + 1] = "field" .. k .. " { id name createdAt updatedAt }" end
local query = "query GetUser($id: ID!) { user(id: $id) { " .. table.concat(fields, " ") .. " } }"
wrk.method = "POST"
wrk.body = '{"operationName":"GetUser","variables":{"id":"7"},"query":"' .. query .. '"}'
wrk.headers["Content-Type"] = "application/json"

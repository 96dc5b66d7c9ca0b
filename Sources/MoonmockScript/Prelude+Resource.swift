extension Prelude {
    /// `mock.resource(path, opts)`: a CRUD collection kept in `mock.state` (items under one key
    /// each, `SEQ JSON`; a version key bumped by every write). Each VM keeps the decoded list and
    /// the list pages it answered, and reads them again when the version moved, so a list route
    /// costs one state read while nothing changes — on every VM and every replica alike.
    static let resourceSource = #"""

local resource_opts = { id = true, id_field = true, seed = true, schema = true, on_create = true, on_update = true,
                        per_page = true, name = true }
local sget, sset, sadd, sincr, sdel, skeys = H.state_get, H.state_set, H.state_add, H.state_incr, H.state_delete, H.state_keys
local resources = {}

local function is_object(v) return type(v) == "table" and getmetatable(v) ~= ARRAY and getmetatable(v) ~= RESP end
local function copy(v)
  if type(v) ~= "table" then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = copy(x) end
  return setmetatable(c, getmetatable(v))
end
local function problem(status, message, extra)
  local body = { error = message }
  for k, v in pairs(extra or {}) do body[k] = v end
  return mock.json(body, { status = status })
end
-- RFC 7386: members of the patch replace, null removes, objects merge
local function merge_patch(target, patch)
  if not is_object(patch) then return patch end
  if not is_object(target) then target = {} end
  for k, v in pairs(patch) do
    if v == null then target[k] = nil else target[k] = merge_patch(target[k], v) end
  end
  return target
end
local function url_escape(s)
  return (tostring(s):gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

local function write_item(c, id, seq, item)
  local text, err = H.json_encode(item)
  if text == nil then error(err, 0) end
  sset(c.keys_prefix .. tostring(id), seq .. " " .. text)
end
local function read_item(c, id)
  local v = sget(c.keys_prefix .. tostring(id))
  if v == nil then return nil end
  local seq, text = v:match("^(%d+) (.*)$")
  if seq == nil then return nil end
  return H.json_decode(text), tonumber(seq)
end
local function new_id(c, item, req, seq)
  local preset = item[c.id_field]
  if preset ~= nil and preset ~= null then return preset end
  if c.id == "int" then
    local id = seq
    while sget(c.keys_prefix .. tostring(id)) ~= nil do id = sincr(c.keys_seq) end
    return id
  elseif c.id == "uuid" then
    return mock.fake.uuid()
  end
  local id = c.id(item, req)
  if type(id) ~= "string" and math.type(id) ~= "integer" then
    error(where() .. "mock.resource '" .. c.path .. "': the id function must return a string or an integer, got " .. given(id), 0)
  end
  return id
end

local function seed(c)
  local items = c.seed_items
  for i = 1, c.seed_count do
    local item
    if items then
      item = copy(items[i])
    else
      H.fake_override(c.path .. "#" .. i)
      local ok, made = pcall(c.seed_item, i)
      H.fake_override(nil)
      if not ok then error(made, 0) end
      if not is_object(made) then
        error(where() .. "mock.resource '" .. c.path .. "': seed.item(" .. i .. ") must return a table, got " .. type(made), 0)
      end
      item = made
    end
    local seq = sincr(c.keys_seq)
    H.fake_override(c.path .. "#id#" .. i)
    local ok, id = pcall(new_id, c, item, nil, seq)
    H.fake_override(nil)
    if not ok then error(id, 0) end
    item[c.id_field] = id
    write_item(c, id, seq, item)
  end
end

-- the collection's version, seeding it when the store has none (the first request, after a reset)
local function version(c)
  local v = sget(c.keys_version)
  if v ~= nil then return v end
  if sadd(c.keys_seeded, true) then
    seed(c)
    return sincr(c.keys_version)
  end
  -- another VM or replica is seeding it: its items once it is done
  return H.resource_wait(c.keys_version) or 0
end
local function bump(c) sincr(c.keys_version) end

local function load_items(c)
  local v = version(c)
  if c.version == v then return c.items end
  local list = {}
  local prefix, n = c.keys_prefix, #c.keys_prefix
  for _, key in ipairs(skeys()) do
    if key:sub(1, n) == prefix then
      local text = sget(key)
      local seq, body = (text or ""):match("^(%d+) (.*)$")
      if seq then list[#list + 1] = { seq = tonumber(seq), item = H.json_decode(body) } end
    end
  end
  table.sort(list, function(a, b) return a.seq < b.seq end)
  c.items, c.version, c.pages, c.page_count = list, v, {}, 0
  return list
end

local function compare(a, b)
  if a == b then return nil end
  if a == nil or a == null then return false end
  if b == nil or b == null then return true end
  if type(a) == "number" and type(b) == "number" then return a < b end
  return tostring(a) < tostring(b)
end

local list_keys = { page = true, per_page = true, offset = true, limit = true, sort = true }
local function positive(req, name, least)
  local v = req.query[name]
  if v == nil then return nil end
  if type(v) == "table" then v = v[1] end
  local n = math.tointeger(tonumber(v))
  if n == nil or n < least then return false end
  return n
end

local function list(c, req)
  local entries = load_items(c)
  local cached = c.pages[req.url]
  if cached then return cached end
  local filtered = {}
  local filters = {}
  for k, v in pairs(req.query) do
    if not list_keys[k] then filters[#filters + 1] = { k, type(v) == "table" and v[1] or v } end
  end
  for _, e in ipairs(entries) do
    local keep = true
    for _, f in ipairs(filters) do
      local x = e.item[f[1]]
      if x == nil or x == null or tostring(x) ~= f[2] then keep = false; break end
    end
    if keep then filtered[#filtered + 1] = e end
  end
  local sort = req.query.sort
  if type(sort) == "table" then sort = sort[1] end
  if sort ~= nil and sort ~= "" then
    local fields = {}
    for field in sort:gmatch("[^,]+") do
      local desc = field:sub(1, 1) == "-"
      fields[#fields + 1] = { desc and field:sub(2) or field, desc }
    end
    table.sort(filtered, function(a, b)
      for _, f in ipairs(fields) do
        local less = compare(a.item[f[1]], b.item[f[1]])
        if less ~= nil then
          if f[2] then return not less end
          return less
        end
      end
      return a.seq < b.seq
    end)
  end
  local total = #filtered
  local page, per_page = positive(req, "page", 1), positive(req, "per_page", 1)
  local offset, limit = positive(req, "offset", 0), positive(req, "limit", 1)
  if page == false or per_page == false or offset == false or limit == false then
    return problem(400, "page and per_page are integers from 1, offset an integer from 0, limit from 1")
  end
  local first, count = 1, total
  local headers = { ["X-Total-Count"] = tostring(total), ["Access-Control-Expose-Headers"] = "X-Total-Count, Link" }
  if offset or limit then
    first, count = (offset or 0) + 1, limit or total
  elseif page or per_page or c.per_page then
    page, per_page = page or 1, per_page or c.per_page or 20
    first, count = (page - 1) * per_page + 1, per_page
    local last = math.max(1, (total + per_page - 1) // per_page)
    local rest = {}
    for k, v in pairs(req.query) do
      if k ~= "page" and k ~= "per_page" then rest[#rest + 1] = url_escape(k) .. "=" .. url_escape(type(v) == "table" and v[1] or v) end
    end
    table.sort(rest)
    local base = req.path .. "?" .. (#rest > 0 and (table.concat(rest, "&") .. "&") or "")
    local links = {}
    local function link(n, rel) links[#links + 1] = "<" .. base .. "page=" .. n .. "&per_page=" .. per_page .. ">; rel=\"" .. rel .. "\"" end
    link(1, "first")
    if page > 1 then link(math.min(page - 1, last), "prev") end
    if page < last then link(page + 1, "next") end
    link(last, "last")
    headers.Link = table.concat(links, ", ")
  end
  local out = {}
  for i = first, math.min(total, first + count - 1) do out[#out + 1] = filtered[i].item end
  local answer = mock.json(json.array(out), { headers = headers })
  -- a VM keeps at most 64 pages of one version
  if c.page_count < 64 then c.pages[req.url] = answer; c.page_count = c.page_count + 1 end
  return answer
end

-- a hook's result: nil keeps the item, a table replaces it, a response answers instead
local function run_hook(hook, item, ...)
  if hook == nil then return item end
  local r = hook(item, ...)
  if r == nil then return item end
  if getmetatable(r) == RESP then return nil, r end
  if not is_object(r) then error(where() .. "a mock.resource hook must return nothing, the item or a response, got " .. type(r), 0) end
  return r
end

local function check_body(c, req)
  local body = req.json
  if not is_object(body) then
    return nil, problem(400, "the body must be a JSON object", { resource = c.path })
  end
  return body
end
local function check_schema(c, item)
  if c.schema == nil then return nil end
  local errors = H.resource_check(c.schema, item)
  if errors then return problem(400, "the item does not match the resource's schema", { resource = c.path, errors = errors }) end
end

local function create(c, req)
  local body, bad = check_body(c, req)
  if bad then return bad end
  version(c)
  local item, answer = run_hook(c.on_create, body, req)
  if answer then return answer end
  local invalid = check_schema(c, item)
  if invalid then return invalid end
  local seq = sincr(c.keys_seq)
  local id = new_id(c, item, req, seq)
  if sget(c.keys_prefix .. tostring(id)) ~= nil then
    return problem(409, "an item with this id exists", { resource = c.path, id = id })
  end
  item[c.id_field] = id
  write_item(c, id, seq, item)
  bump(c)
  return mock.json(item, { status = 201, headers = { Location = c.path .. "/" .. url_escape(id) } })
end

local function show(c, req)
  version(c)
  local item = read_item(c, req.params.id)
  if item == nil then return problem(404, "not found", { resource = c.path, id = req.params.id }) end
  return mock.json(item)
end

local function update(c, req, patch)
  version(c)
  local id = req.params.id
  local old, seq = read_item(c, id)
  if old == nil then return problem(404, "not found", { resource = c.path, id = id }) end
  local body, bad = check_body(c, req)
  if bad then return bad end
  local item = patch and merge_patch(copy(old), body) or body
  item[c.id_field] = old[c.id_field]
  local answer
  item, answer = run_hook(c.on_update, item, old, req)
  if answer then return answer end
  item[c.id_field] = old[c.id_field]
  local invalid = check_schema(c, item)
  if invalid then return invalid end
  write_item(c, id, seq, item)
  bump(c)
  return mock.json(item)
end

local function remove(c, req)
  version(c)
  if not sdel(c.keys_prefix .. req.params.id) then
    return problem(404, "not found", { resource = c.path, id = req.params.id })
  end
  bump(c)
  return mock.status(204)
end

function mock.resource(path, opts)
  check_type(path, "string", "mock.resource path")
  path = path:gsub("/+$", "")
  if path:sub(1, 1) ~= "/" or path:find("[:*{}?#]") then
    fail("mock.resource: the path must start with / and have no parameters, such as '/pets', got '" .. path .. "'")
  end
  opts = check_opts(opts, resource_opts, "mock.resource")
  local c = { path = path, id = opts.id or "int", id_field = opts.id_field or "id", per_page = opts.per_page,
              on_create = opts.on_create, on_update = opts.on_update, version = nil, items = {}, pages = {}, page_count = 0,
              seed_count = 0 }
  if c.id ~= "int" and c.id ~= "uuid" and type(c.id) ~= "function" then
    fail("mock.resource: id must be \"int\", \"uuid\" or a function(item, req), got " .. given(c.id))
  end
  check_type(c.id_field, "string", "mock.resource id_field")
  if c.per_page ~= nil and (math.type(c.per_page) ~= "integer" or c.per_page < 1) then
    fail("mock.resource: per_page must be an integer from 1, got " .. given(c.per_page))
  end
  for _, hook in ipairs { "on_create", "on_update" } do
    if opts[hook] ~= nil then check_type(opts[hook], "function", "mock.resource " .. hook) end
  end
  local s = opts.seed
  if type(s) == "string" then
    local text, err = H.read(s)
    if text == nil then fail("mock.resource: seed: " .. err) end
    local list, derr = H.json_decode(text)
    if derr or type(list) ~= "table" or getmetatable(list) ~= ARRAY then fail("mock.resource: seed file '" .. s .. "' must hold a JSON array of objects") end
    s = list
  end
  if type(s) == "table" and (s.count ~= nil or s.item ~= nil) then
    if math.type(s.count) ~= "integer" or s.count < 0 then fail("mock.resource: seed.count must be an integer from 0, got " .. given(s.count)) end
    check_type(s.item, "function", "mock.resource seed.item")
    c.seed_count, c.seed_item = s.count, s.item
  elseif type(s) == "table" then
    for i, item in ipairs(s) do
      if not is_object(item) then fail("mock.resource: seed item " .. i .. " must be a table (an object), got " .. type(item)) end
    end
    c.seed_count, c.seed_items = #s, s
  elseif s ~= nil then
    fail("mock.resource: seed must be a list of items, a JSON file or { count = n, item = function(i) ... end }, got " .. type(s))
  end
  if opts.schema ~= nil then
    if type(opts.schema) ~= "table" and type(opts.schema) ~= "string" then fail("mock.resource: schema must be a table or a file name") end
    local n, err = H.resource_schema(opts.schema)
    if n == nil then fail("mock.resource: schema: " .. err) end
    c.schema = n
  end
  local prefix, vkey, seqkey, seededkey = H.resource_declare(path, c.id_field)
  if prefix == nil then fail("mock.resource: " .. vkey) end
  c.keys_prefix, c.keys_version, c.keys_seq, c.keys_seeded = prefix, vkey, seqkey, seededkey
  resources[path] = c
  -- what the handlers run of the script's own code, for the VM-sharing check
  local checks = {}
  for _, f in ipairs { c.on_create, c.on_update, c.seed_item, type(c.id) == "function" and c.id or nil } do checks[#checks + 1] = f end
  local name = opts.name or ("resource " .. path)
  local function rule(method, pattern, suffix, fn, cache_version)
    register({ method = method, path = pattern, respond = function(req) return fn(c, req) end, checks = checks,
               opts = { name = name .. " " .. suffix }, cache_version = cache_version }, "mock.resource")
  end
  -- a list's answers are kept by the host while the collection's version stays
  rule("GET", path, "list", list, c.keys_version)
  rule("POST", path, "create", create)
  rule("GET", path .. "/:id", "show", show)
  rule("PUT", path .. "/:id", "replace", function(col, req) return update(col, req, false) end)
  rule("PATCH", path .. "/:id", "patch", function(col, req) return update(col, req, true) end)
  rule("DELETE", path .. "/:id", "delete", remove)
  -- seeded now, when the store has none of it yet (the admin API shows it before any request;
  -- a reload keeps what is there), and again after DELETE /__moonmock/resources/PATH
  H.resource_seeder(path, function() version(c) end)
  version(c)
end

-- the collection back to its seed: its items forgotten, the seed written again
function mock.resource_reset(path)
  check_type(path, "string", "mock.resource_reset path")
  local c = resources[path:gsub("/+$", "")]
  if c == nil then
    local names = {}
    for p in pairs(resources) do names[#names + 1] = p end
    table.sort(names)
    fail("mock.resource_reset: no resource '" .. path .. "'" .. (#names > 0 and (" (declared: " .. concat(names, ", ") .. ")") or ""))
  end
  local n = #c.keys_prefix
  for _, key in ipairs(skeys()) do
    if key:sub(1, n) == c.keys_prefix then sdel(key) end
  end
  sdel(c.keys_version); sdel(c.keys_seq); sdel(c.keys_seeded)
  c.version = nil
  version(c)
end

"""#
}

import MoonmockCore

extension Prelude {
    /// `mock.fake` (seeded fake data, ``Fake``) and `mock.schema` (a value a JSON Schema accepts).
    /// Each kind is a closure over its number, so a call is one host call with no name to look up.
    static let fakeSource = """
    local FAKE_KINDS = { \(Fake.kinds.map { "\"\($0)\"" }.joined(separator: ", ")) }
    """ + #"""

local fake_value, fake_pick = H.fake, H.fake_pick
local fake = {}
local function fake_opts(kind, opts)
  if opts ~= nil and type(opts) ~= "table" then
    fail("mock.fake." .. kind .. ": options must be a table such as { min = 1 }, got " .. given(opts))
  end
  return opts
end
for i, kind in ipairs(FAKE_KINDS) do
  fake[kind] = function(opts)
    local v, err = fake_value(i, fake_opts(kind, opts))
    if v == nil then fail("mock.fake." .. kind .. ": " .. err) end
    return v
  end
end
function fake.pick(list)
  check_type(list, "table", "mock.fake.pick list")
  if #list == 0 then fail("mock.fake.pick: the list is empty") end
  return list[fake_pick(#list)]
end
-- a generator fixed by a key: the same values for the same key on every call, replica and machine
local SEEDED = {}
local KIND_INDEX = {}
for i, kind in ipairs(FAKE_KINDS) do KIND_INDEX[kind] = i end
SEEDED.__index = function(g, kind)
  local f
  if kind == "pick" then
    f = function(a, b)
      local list = a
      if rawequal(a, g) then list = b end
      check_type(list, "table", "pick list")
      if #list == 0 then fail("pick: the list is empty") end
      local i, s = fake_pick(#list, rawget(g, SEEDED))
      g[SEEDED] = s
      return list[i]
    end
  else
    local i = KIND_INDEX[kind]
    if i == nil then
      local near = type(kind) == "string" and nearest(kind, FAKE_KINDS)
      error(where() .. "mock.fake." .. tostring(kind) .. " does not exist" .. (near and ("; did you mean " .. near .. "?") or ""), 0)
    end
    f = function(a, b)
      local opts = a
      if rawequal(a, g) then opts = b end
      local v, s = fake_value(i, fake_opts(kind, opts), rawget(g, SEEDED), rawget(g, KIND_INDEX))
      if v == nil then fail("mock.fake." .. kind .. ": " .. s) end
      g[SEEDED] = s
      return v
    end
  end
  rawset(g, kind, f)
  return f
end
function fake.seeded(key, opts)
  if type(key) ~= "string" and type(key) ~= "number" then fail("mock.fake.seeded: the key must be a string or a number, got " .. type(key)) end
  opts = check_opts(opts, { locale = true }, "mock.fake.seeded")
  local state, err = H.fake_seed(tostring(key), opts.locale)
  if state == nil then fail("mock.fake.seeded: " .. err) end
  return setmetatable({ [SEEDED] = state, [KIND_INDEX] = opts.locale }, SEEDED)
end
mock.fake = fake

-- a value a JSON Schema (a table, or a .json/.yaml file of the script's folder) accepts
function mock.schema(schema, opts)
  if type(schema) ~= "table" and type(schema) ~= "string" then
    fail("mock.schema: the schema must be a table or a file name, got " .. type(schema))
  end
  opts = check_opts(opts, { seed_key = true, locale = true }, "mock.schema")
  if opts.seed_key ~= nil and type(opts.seed_key) ~= "string" and type(opts.seed_key) ~= "number" then
    fail("mock.schema: seed_key must be a string or a number, got " .. type(opts.seed_key))
  end
  local v, err = H.schema(schema, opts.seed_key ~= nil and tostring(opts.seed_key) or nil, opts.locale)
  if err ~= nil then fail("mock.schema: " .. err) end
  return v
end

"""#
}

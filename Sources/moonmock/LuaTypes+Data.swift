extension LuaTypes {
    /// The annotations of the services a script declares (specs, chaos, fake data, schemas,
    /// resources, CORS), in ``source`` where `--@data` stands.
    static let dataSource = #"""
---An OpenAPI 3 spec (YAML or JSON, relative to the script) every request and answer is checked
---against while this script serves: violations go to the journal, the log and
---GET /__moonmock/contract. mode "enforce" refuses a request that breaks it (400) and turns an
---answer that does into a 500 naming the rule.
---@param path string
---@param opts? { mode?: "warn"|"enforce" }
function mock.spec(path, opts) end

---Every operation of an OpenAPI 3 spec served live, below the script's own rules: the spec's
---examples (Prefer: example=NAME, Prefer: code=404), else bodies made from its schemas (the
---same for the same path on every run), checked as mock.spec checks them.
---@param path string
---@param opts? { mode?: "warn"|"enforce", seed?: integer }
function mock.openapi(path, opts) end

---Errors, latency, faults and a rate limit on every request (or a path prefix, a host), seeded
---by --seed: the same requests fail on every run. Switched off with DELETE /__moonmock/chaos.
---@param settings mock.Chaos
function mock.chaos(settings) end

---Chaos settings kept under a name, switched on at runtime: PUT /__moonmock/chaos
---{"profile": name, "duration_ms": 60000}, the dashboard, or a client's chaos(...).
---@param name string
---@param settings mock.Chaos
function mock.chaos_profile(name, settings) end

---Seeded fake data: the same values for the same requests in the same order under one seed
---(--seed, Moonmock(seed:)), on every machine and through both doors.
---@class mock.Fake
---@field name fun(opts?: mock.FakeOptions): string
---@field first_name fun(opts?: mock.FakeOptions): string
---@field last_name fun(opts?: mock.FakeOptions): string
---@field email fun(opts?: mock.FakeOptions): string
---@field username fun(opts?: mock.FakeOptions): string
---@field phone fun(opts?: mock.FakeOptions): string
---@field company fun(opts?: mock.FakeOptions): string
---@field job_title fun(opts?: mock.FakeOptions): string
---@field street fun(opts?: mock.FakeOptions): string
---@field city fun(opts?: mock.FakeOptions): string
---@field postcode fun(opts?: mock.FakeOptions): string
---@field country fun(opts?: mock.FakeOptions): string
---@field country_code fun(opts?: mock.FakeOptions): string
---@field latitude fun(opts?: mock.FakeOptions): number
---@field longitude fun(opts?: mock.FakeOptions): number
---@field uuid fun(opts?: mock.FakeOptions): string
---@field ulid fun(opts?: mock.FakeOptions): string
---@field iban fun(opts?: { country?: "DE"|"GB"|"FR"|"ES"|"NL", locale?: string }): string
---@field credit_card fun(opts?: { brand?: "visa"|"mastercard"|"amex" }): string
---@field date fun(opts?: { from?: string, to?: string }): string
---@field datetime fun(opts?: { from?: string, to?: string }): string
---@field past fun(opts?: { days?: number }): string
---@field future fun(opts?: { days?: number }): string
---@field int fun(opts?: { min?: integer, max?: integer }): integer
---@field float fun(opts?: { min?: number, max?: number, digits?: integer }): number
---@field bool fun(opts?: { p?: number }): boolean
---@field sentence fun(opts?: { words?: integer }): string
---@field paragraph fun(opts?: { sentences?: integer }): string
---@field words fun(opts?: { n?: integer }): string
---@field image_url fun(opts?: { w?: integer, h?: integer }): string
---@field color_hex fun(opts?: mock.FakeOptions): string
---@field ipv4 fun(opts?: mock.FakeOptions): string
---@field ipv6 fun(opts?: mock.FakeOptions): string
---@field user_agent fun(opts?: mock.FakeOptions): string
---@field pick fun(list: any[]): any
---@field seeded fun(key: string|number, opts?: { locale?: string }): mock.Fake  a generator fixed by the key

---@class mock.FakeOptions
---@field locale? "en"|"de"|"fr"|"es"|"ja"

---@type mock.Fake
mock.fake = nil

---A value the JSON Schema accepts (a table, or a .json/.yaml file of the script's folder),
---with plausible strings by format and property name; the same for the same seed_key.
---@param schema table|string
---@param opts? { seed_key?: string|number, locale?: string }
---@return any
function mock.schema(schema, opts) end

---A CRUD collection kept in mock.state (shared by replicas with --store): GET path (page,
---per_page, offset, limit, sort, filters by field; Link, X-Total-Count), POST (201, Location),
---GET/PUT/PATCH (merge patch)/DELETE path/:id, 404 and 400 as JSON.
---@param path string
---@param opts? mock.ResourceOptions
function mock.resource(path, opts) end

---@class mock.ResourceOptions
---@field id? "int"|"uuid"|fun(item: table, req: mock.Request): string|integer  how POST names items (default "int")
---@field id_field? string            the member holding the id (default "id")
---@field seed? table[]|string|{ count: integer, item: fun(i: integer): table }  the items it starts with
---@field schema? table|string        a JSON Schema POST, PUT and PATCH bodies must meet (else 400)
---@field per_page? integer           a page's size when no page parameters are given (default: every item)
---@field on_create? fun(item: table, req: mock.Request): table|mock.Response|nil
---@field on_update? fun(item: table, old: table, req: mock.Request): table|mock.Response|nil
---@field name? string                the rules' names start so (default "resource PATH")

---A collection back to its seed: its items forgotten, the seed written again.
---@param path string
function mock.resource_reset(path) end

---Cross-origin access for browser apps: the socket server answers preflights and lets pages
---of these origins read every answer (while this script serves).
---@param opts? mock.CORSOptions
function mock.cors(opts) end

---@class mock.CORSOptions
---@field origins? string[]|"*"      allowed origins ("http://localhost:3000"); default any
---@field headers? string[]          request fields preflights may ask for; default what they ask
---@field credentials? boolean       Access-Control-Allow-Credentials: true
---@field max_age? integer           seconds a browser keeps a preflight's answer (default 600)


"""#
}

/// `types/moonmock.lua`, the LuaLS annotations `moonmock types` and `init` write; the repository's
/// copy is this text (a test compares them): edit here, then `moonmock types --write .` at the root.
enum LuaTypes {
    static let source = mainSource.replacingOccurrences(of: "--@data\n", with: dataSource + waitingSource + grpcSource)
    static let mainSource = #"""
---@meta moonmock
-- LuaLS definitions for Moonmock's `mock` API and the request table `req`.
-- Written by `moonmock types --write DIR`; point `.luarc.json` at this folder
-- (`"workspace.library": ["types"]`). Reference: docs/language.md.

---A value a rule answers with: a builder's result, a table (JSON 200) or a string (text 200).
---@alias mock.Response mock.Built|table|string

---A handler: a function of the request returning a response, or `nil` to pass to the next rule.
---@alias mock.Handler fun(req: mock.Request): mock.Response?

---A query or header condition: equal to a string, or one of the matchers.
---@alias mock.Condition string|mock.Matcher

---Milliseconds, uniform between `min` and `max`, or log-normal around `median`.
---@alias mock.Delay number|{ min: number, max: number }|{ median: number, sigma: number }

---@alias mock.FaultKind "connection_reset"|"empty_response"|"malformed_chunk"|"timeout"|"dribble"

---A response built by `mock.json`, `mock.text`, `mock.file`, `mock.template`, `mock.status`,
---`mock.redirect`, `mock.fault`, `mock.sequence` or `mock.variants`.
---@class mock.Built

---A matcher: `mock.present`, `mock.absent` or `mock.match(pattern)`.
---@class mock.Matcher

---A response header: a string, a list of strings (the field repeated), or `mock.template(...)`
---rendered per request (`{{req.origin}}` is the origin the client addressed).
---@alias mock.HeaderValue string|string[]|mock.Built

---@class mock.ResponseOptions
---@field status? integer            100 to 599
---@field headers? table<string, mock.HeaderValue>
---@field conditional? boolean       a GET or HEAD whose If-None-Match / If-Modified-Since matches the ETag / Last-Modified gets 304
---@field delay? mock.Delay
---@field fault? mock.FaultKind
---@field bytes_per_second? integer  with `fault = "dribble"`

---@class mock.RuleOptions
---@field status? integer            applied to what the handler returns, unless it sets its own
---@field headers? table<string, string>
---@field delay? mock.Delay
---@field times? integer             the rule retires after this many answers
---@field name? string               how the admin API, the journal and `verify` call the rule
---@field priority? integer          higher is tried first (default 0)
---@field query? table<string, mock.Condition|string[]>  a list: every value of the parameter, in order
---@field exact_query? boolean       no query parameter but those in `query`, each once
---@field chaos? mock.Chaos           this rule's own errors, latency, faults or rate limit

---@class mock.Chaos
---@field error_rate? number          a fraction of requests (0.1 is 10 %) answered with an error
---@field status? integer             the error's status (default 503)
---@field body? string|table          the error's body (a table is JSON)
---@field latency? { min: number, max: number }|{ dist?: "lognormal", median: number, p99?: number }  milliseconds added
---@field fault? mock.FaultKind       a transport fault instead of an answer
---@field fault_rate? number          how often (default 1 when fault is given)
---@field rate_limit? { rps: number, burst?: integer }  past it: 429 with Retry-After
---@field path? string                mock.chaos only: requests whose path starts so
---@field host? string                mock.chaos only: requests for this host

---@class mock.GraphQLOptions: mock.RuleOptions
---@field path? string               default "/graphql"
---@field variables? table           the operation's variables, exactly

---@class mock.RouteSpec
---@field method? string             default: any method
---@field path? string               a pattern: "/users/:id", "/files/*rest" (default "/*", or "/graphql" with graphql)
---@field url? string                a full URL pattern, pinning scheme, host and port
---@field graphql? string            a GraphQL operationName the JSON body must name (method POST unless given)
---@field host? string
---@field query? table<string, mock.Condition|string[]>  a list: every value of the parameter, in order
---@field exact_query? boolean       no query parameter but those in `query`, each once
---@field variables? table           with `graphql`: the operation's variables, exactly
---@field headers? table<string, mock.Condition>
---@field json? table                a subset the JSON body must contain
---@field body? string|mock.Matcher
---@field when? fun(req: mock.Request): boolean?
---@field respond mock.Handler|mock.Response
---@field times? integer
---@field name? string
---@field priority? integer
---@field status? integer
---@field delay? mock.Delay

---The request a handler gets.
---@class mock.Request
---@field method string              as sent: "GET"
---@field url string                 the absolute URL
---@field scheme string
---@field host string
---@field port integer?
---@field path string                without the query
---@field params table<string, string>      captures of the pattern
---@field query table<string, string>       the first value of each query item
---@field query_all table<string, string[]> every value of each query item
---@field headers table<string, string>     lower-cased names
---@field cookies table<string, string>
---@field body string                the raw body (binary-safe)
---@field json any                   the body decoded as JSON, or nil
---@field id integer                 the journal id

---@class mock.BundleOptions
---@field handle_all? boolean        answer 501 to what the bundle lacks
---@field name? string

---@class mock.StubsOptions
---@field delay? number              seconds before every stub's answer

---The host's key-value store: shared by every VM and both doors, kept across reloads.
---@class mock.State
local State = {}
---@param key string
---@return boolean|number|string|nil
function State:get(key) end
---@param key string
---@param value boolean|number|string|nil  nil deletes
---@param ttl? number                      seconds
function State:set(key, value, ttl) end
---Sets `key` only if it is absent.
---@param key string
---@param value boolean|number|string
---@param ttl? number
---@return boolean added
function State:add(key, value, ttl) end
---Adds `by` (1) to the value (`initial`, 0, when absent) and returns the new value.
---@param key string
---@param by? number
---@param initial? number
---@return number
function State:incr(key, by, initial) end
---@param key string
---@return boolean existed
function State:delete(key) end
---@return string[]
function State:keys() end
function State:flush() end

---JSON: call it to build a response, or use its codec.
---@class mock.JSON
---@overload fun(value: any, opts?: mock.ResponseOptions): mock.Built
local JSON = {}
---Sorted keys; integers stay integral; `mock.null` is null.
---@param value any
---@return string
function JSON.encode(value) end
---@param text string
---@return any
function JSON.decode(text) end
---Marks a table, empty or not, as a JSON array.
---@param t? table
---@return table
function JSON.array(t) end
---A JSON answer whose body is `text` as written (key order, spacing); a load error if it is not JSON.
---@param text string
---@param opts? mock.ResponseOptions
---@return mock.Built
function JSON.raw(text, opts) end
---JSON `null`.
---@type lightuserdata
JSON.null = nil

---@class mock
mock = {}

---@type mock.JSON
mock.json = JSON
---JSON `null`.
---@type lightuserdata
mock.null = nil
---@type mock.State
mock.state = State
---Matches a query item or header that is there, with any value.
---@type mock.Matcher
mock.present = nil
---Matches a query item or header that is not there.
---@type mock.Matcher
mock.absent = nil

---@param pattern string  "/users/:id", "/users/{id}", "/files/*rest", or a full URL
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.get(pattern, handler, opts) end
---@param pattern string
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.post(pattern, handler, opts) end
---@param pattern string
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.put(pattern, handler, opts) end
---@param pattern string
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.patch(pattern, handler, opts) end
---@param pattern string
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.delete(pattern, handler, opts) end
---@param pattern string
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.head(pattern, handler, opts) end
---@param pattern string
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.options(pattern, handler, opts) end
---Any method.
---@param pattern string
---@param handler mock.Handler|mock.Response
---@param opts? mock.RuleOptions
function mock.any(pattern, handler, opts) end

---A POST whose JSON body (or batch) names `operationName`.
---@param operationName string
---@param handler mock.Handler|mock.Response
---@param opts? mock.GraphQLOptions
function mock.graphql(operationName, handler, opts) end

---The full form: every predicate given must hold.
---@param spec mock.RouteSpec
function mock.route(spec) end

---@param value any
---@param opts? mock.ResponseOptions
---@return mock.Built
function mock.text(value, opts) end
---A file relative to the script's folder; the content type comes from its extension.
---@param path string
---@param opts? mock.ResponseOptions
---@return mock.Built
function mock.file(path, opts) end
---Text (or a file, when `source` is a path) with `{{req.params.id}}`, `{{uuid}}`, `{{now}}`, `{{state.key}}` filled in.
---@param source string
---@param opts? mock.ResponseOptions
---@return mock.Built
function mock.template(source, opts) end
---@param code integer
---@param body? string|table  a table is JSON
---@param opts? mock.ResponseOptions
---@return mock.Built
function mock.status(code, body, opts) end
---@param url string
---@param status? 301|302|303|307|308  default 302
---@return mock.Built
function mock.redirect(url, status) end
---@param kind mock.FaultKind|mock.ResponseOptions
---@param opts? mock.ResponseOptions
---@return mock.Built
function mock.fault(kind, opts) end
---One response per hit, in order, then the last one again.
---@param responses mock.Response[]
---@return mock.Built
function mock.sequence(responses) end
---Named alternatives, switched at runtime; `default` names the first active one.
---@param variants table<string, mock.Handler|mock.Response>
---@return mock.Built
function mock.variants(variants) end
---Forwards the request (method, path, query, headers, body) to `base_url` and answers with
---the upstream's status, headers and body; a handler may return it to pass a request through.
---@param base_url string            "https://api.example.com" (a path prefix is kept)
---@param opts? mock.ProxyOptions
---@return mock.Built
function mock.proxy(base_url, opts) end

---Server-Sent Events: `text/event-stream`, sent event by event (`interval` ms apart unless an
---event gives its own `delay`), ended after the last unless `close = false`. A client sending
---`Last-Event-ID` gets the events after that id.
---Or a generator: `mock.sse(function(req, stream) ... end)`, a coroutine resumed as it sleeps.
---@param events (mock.Event|string)[]|fun(req: mock.Request, stream: mock.Stream)
---@param opts? mock.StreamOptions
---@return mock.Built|mock.Handler
function mock.sse(events, opts) end

---The stream a `mock.sse` generator writes to.
---@class mock.Stream
local Stream = {}
---Sends one event (a string is its data).
---@param event mock.Event|string
function Stream:send(event) end
---Waits `ms` milliseconds before what comes next; the Lua VM serves other requests meanwhile.
---@param ms number
function Stream:sleep(ms) end
---Ends the stream.
function Stream:close() end

---@class mock.Event
---@field data? string|table         a table is sent as JSON; each line of a string on a `data:` line
---@field event? string              the event's type
---@field id? string|number          for Last-Event-ID resumption
---@field retry? integer             the client's reconnection delay, in ms
---@field delay? number              ms before this event (instead of `interval`)
---@field comment? string            a `:` comment line

---@class mock.StreamOptions
---@field interval? number           ms between pieces
---@field heartbeat? number          a comment line (SSE) or a newline every N ms while nothing else is due
---@field close? boolean             end after the last piece (default true); false keeps the stream open
---@field content_type? string
---@field status? integer
---@field headers? table<string, string>
---@field delay? mock.Delay          before the head

---A body sent in pieces over time (NDJSON when the pieces are tables, each a JSON line); or a
---generator `function(req, stream)` whose `stream:send(piece)` sends and `stream:sleep(ms)` waits.
---@param chunks (string|table|{data: string|table, delay?: number})[]|fun(req: mock.Request, stream: mock.Stream)
---@param opts? mock.StreamOptions
---@return mock.Built|mock.Handler
function mock.stream(chunks, opts) end

---A chat-completion handler in a provider's wire format: streamed token by token when the
---request body has `"stream": true` (ending with `[DONE]` or `message_stop`), else one JSON
---completion; both with usage counts.
---@param spec mock.LLMSpec
---@return mock.Handler
function mock.llm(spec) end

---@class mock.LLMSpec
---@field text string|fun(req: mock.Request): string   the answer
---@field format? "openai"|"anthropic"  default "openai" (POST /v1/chat/completions; anthropic: POST /v1/messages)
---@field model? string              default: the request's model
---@field tokens_per_second? number  default 50
---@field chunk? "word"|"char"       how the text is cut into tokens (default "word")

---A WebSocket route on the server (`ws://`, `wss://` with --tls); a plain request gets 426.
---@param pattern string
---@param handlers mock.WebSocketHandlers
function mock.websocket(pattern, handlers) end

---@class mock.WebSocketHandlers
---@field on_open? fun(ws: mock.WebSocket, req: mock.Request)
---@field on_message? fun(ws: mock.WebSocket, msg: {text?: string, binary?: string})
---@field on_close? fun(ws: mock.WebSocket, code: integer, reason: string)

---The open WebSockets (of routes matching `pattern`), for broadcasts.
---@param pattern? string
---@return mock.WebSocket[]
function mock.websockets(pattern) end

---One open WebSocket.
---@class mock.WebSocket
---@field id integer                 its journal entry, and its id in the admin API
---@field path string
local WebSocket = {}
---Sends a text message (a table as JSON).
---@param message string|table
function WebSocket:send(message) end
---Sends a binary message.
---@param bytes string
function WebSocket:send_binary(bytes) end
---Starts the close handshake.
---@param code? integer              default 1000
---@param reason? string
function WebSocket:close(code, reason) end
---Calls `fn(ws)` after `ms` milliseconds, unless the socket has closed.
---@param ms number
---@param fn fun(ws: mock.WebSocket)
function WebSocket:after(ms, fn) end

--@data
---A Lua pattern a query item, header or body must match.
---@param pattern string
---@return mock.Matcher
function mock.match(pattern) end

---A Mock-Bundle folder (`bundle.json`) as one rule.
---@param dir string
---@param opts? mock.BundleOptions
function mock.bundle(dir, opts) end
---A stubs folder: one sub-folder per endpoint, files NAME.STATUS[.EXT].
---@param dir string
---@param endpoints table<string, string>  folder name → "GET /users/:id"
---@param opts? mock.StubsOptions
function mock.stubs(dir, endpoints, opts) end

---A file relative to the script's folder.
---@param path string
---@return string
function mock.read(path) end
---To the host log and the request's journal entry.
---@param ... any
function mock.log(...) end
---Seconds since 1970 (a test may pin the clock).
---@return number
function mock.now() end
---@return string
function mock.uuid() end

"""#
}

extension LuaTypes {
    /// The annotations of handlers that wait and call out (`mock.sleep`, `mock.fetch`,
    /// `mock.webhook`, `mock.after`, `mock.proxy`'s options), in ``source`` after ``dataSource``.
    static let waitingSource = #"""
---@class mock.ProxyOptions
---@field headers? table<string, string|false>  request fields to set (false removes one)
---@field timeout? number            milliseconds (default 30000); then a 502
---@field insecure? boolean          do not verify the upstream's TLS certificate
---@field delay? mock.Delay
---@field transform? fun(res: mock.FetchResponse, req: mock.Request): mock.FetchResponse|mock.Response|nil  edit the upstream's answer (makes mock.proxy a handler)

---Waits `ms` milliseconds without holding a thread: the VM serves other requests meanwhile.
---Only in handlers and mock.after functions.
---@param ms number
function mock.sleep(ms) end

---@class mock.FetchOptions
---@field method? string             default "GET"
---@field headers? table<string, string>
---@field body? string
---@field json? any                  encoded as the body, with Content-Type: application/json
---@field timeout? number            milliseconds (default 10000)
---@field insecure? boolean          do not verify the server's TLS certificate
---@field ca? string                 a PEM file of authorities to trust (relative to the script)

---@class mock.FetchResponse
---@field status integer
---@field headers table<string, string>   lowercase names
---@field body string
---@field json any                   the body decoded, when it is JSON
---@field duration_ms number

---An HTTP(S) request from a handler; the handler waits without holding a thread. Returns the
---answer, or nil and the reason (refused, timed out, a certificate the check failed).
---@param url string
---@param opts? mock.FetchOptions
---@return mock.FetchResponse|nil
---@return string? err
function mock.fetch(url, opts) end

---@class mock.Webhook: mock.FetchOptions
---@field url string
---@field delay? number              milliseconds after the answer is written (default 0)
---@field retries? integer           more attempts after a connection error or a 5xx (default 3)
---@field backoff? number            milliseconds before the first retry, doubling (default 200)

---A request sent after this request's answer is written (method POST unless given); webhooks
---of one request go in order of their delay. Outcomes: the journal's "outbound", and
---POST /__moonmock/verify {"outbound": {...}}; POST /__moonmock/webhooks/flush waits for them.
---@param spec mock.Webhook
function mock.webhook(spec) end

---Runs `fn` `ms` milliseconds after the answer is written, on this VM; it may change
---mock.state, send webhooks, fetch and sleep.
---@param ms number
---@param fn fun()
function mock.after(ms, fn) end

"""#
}

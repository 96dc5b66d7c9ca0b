// A client for a Moonmock server's admin API, and `serve` to start one for a test.
// ES module, Node 18+ (fetch, child_process), no dependencies. Names mirror the Python client's.
import { spawn } from "node:child_process";
import { AssertionError } from "node:assert";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** The server refused a call: `status` is the HTTP status, `message` the server's words. */
export class MoonmockError extends Error {
  constructor(status, message, body) {
    super(message);   // the server's words; `status` says the HTTP status
    this.name = "MoonmockError";
    this.status = status;
    this.body = body;
  }
}

/** A rule the server did not take; `field` names the part at fault (`rule.respond.status`). */
export class RuleError extends MoonmockError {
  constructor(status, message, body) {
    super(status, message, body);
    this.name = "RuleError";
    this.field = (body && typeof body === "object" && body.field) || "";
  }
}

const encode = (s) => encodeURIComponent(s);

/** `mock.state` of the server. */
class State {
  #client;
  constructor(client) { this.#client = client; }
  /** The value of `key`, or `undefined` when it has none. */
  async get(key) {
    try { return await this.#client._call("GET", `/__moonmock/state/${encode(key)}`); }
    catch (error) { if (error instanceof MoonmockError && error.status === 404) return undefined; throw error; }
  }
  async set(key, value) { await this.#client._call("PUT", `/__moonmock/state/${encode(key)}`, value); }
  /** Removes `key`; whether it was there. */
  async delete(key) { return Boolean((await this.#client._call("DELETE", `/__moonmock/state/${encode(key)}`)).deleted); }
  /** The whole store. */
  async all() { return this.#client._call("GET", "/__moonmock/state"); }
  /** Replaces the whole store with `values`. */
  async replace(values) { await this.#client._call("PUT", "/__moonmock/state", values); }
  async clear() { await this.#client._call("DELETE", "/__moonmock/state"); }
}

/** The admin API of a Moonmock server at `url` (`http://127.0.0.1:8080`). */
export class Client {
  constructor(url, { token, timeout = 10_000 } = {}) {
    this.url = String(url).replace(/\/+$/, "");
    this.token = token;
    this.timeout = timeout;
    this.state = new State(this);
  }

  /** Answers `method path` (a pattern: `/users/:id`; `null` for any method) ahead of the script's rules; the rule's id. */
  async stub(method, path, { status = 200, json, text, body, headers, delay, fault, times, name, query, matchHeaders, matchJson } = {}) {
    const respond = { status };
    if (json !== undefined) respond.json = json;
    if (text !== undefined) respond.text = text;
    if (body !== undefined) respond.base64 = Buffer.from(body).toString("base64");
    if (headers) respond.headers = headers;
    if (delay !== undefined) respond.delay = delay;
    if (fault !== undefined) respond.fault = fault;
    const rule = { path, respond };
    if (method != null) rule.method = method;
    for (const [key, value] of [["times", times], ["name", name], ["query", query], ["headers", matchHeaders], ["json", matchJson]]) {
      if (value !== undefined) rule[key] = value;
    }
    const added = await this.addRule(rule);
    return Array.isArray(added) ? added[0] : added;
  }

  /** Adds a rule given as the server's rule JSON (or an array of them); the id (or ids). */
  async addRule(rule) {
    const answer = await this._call("POST", "/__moonmock/rules", rule);
    return "ids" in answer ? answer.ids : answer.id;
  }

  /** Every rule in evaluation order; runtime rules first (`source === "runtime"`). */
  async rules() { return this._call("GET", "/__moonmock/rules"); }
  async removeRule(id) { await this._call("DELETE", `/__moonmock/rules/${encode(id)}`); }
  /** Removes the rules added at runtime; how many. */
  async removeRuntimeRules() { return Number((await this._call("DELETE", "/__moonmock/rules?source=runtime")).deleted); }

  /** The journal, oldest first; `since` gives only the entries recorded after that id. */
  async requests({ since, rule, method, pattern } = {}) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries({ since, rule, method, pattern })) if (value !== undefined && value !== null) params.set(key, String(value));
    const query = params.toString();
    return this._call("GET", "/__moonmock/requests" + (query ? `?${query}` : ""));
  }

  /**
   * Asserts how often requests came: by `method`/`pattern`, by `rule` id, or by exact `url`.
   * Resolves to the count; rejects with an `AssertionError` naming the closest requests and why.
   */
  async verify(method, pattern, { rule, url, times, atLeast, atMost } = {}) {
    const query = {};
    if (rule !== undefined) query.rule = rule;
    else if (url !== undefined) query.url = url;
    else {
      if (pattern == null) throw new TypeError("verify needs a pattern, rule or url");
      query.pattern = pattern;
      if (method != null) query.method = method;
    }
    const body = await this._verify(query, { times, atLeast, atMost });
    if (typeof body === "number") return body;
    const lines = [body.message || "verification failed"];
    for (const miss of body.near_misses || []) lines.push(`  closest: ${miss.request}: ${(miss.reasons || []).join("; ")}`);
    for (const entry of (body.requests || []).slice(-5)) lines.push(`  counted: ${entry.method} ${entry.url} -> ${entry.status}`);
    throw new AssertionError({ message: lines.join("\n"), actual: body.count, expected: body.expected, operator: "verify" });
  }

  /**
   * Asserts how often handlers called out (`mock.fetch`, webhooks, `mock.proxy` with a
   * transform): by exact `url` or by `path`, with `method` and `kind`. Resolves to the count;
   * rejects with an `AssertionError` listing the calls made.
   */
  async verifyOutbound(url, { method, path, kind, times, atLeast, atMost } = {}) {
    const outbound = {};
    if (url != null) outbound.url = url;
    if (method !== undefined) outbound.method = method;
    if (path !== undefined) outbound.path = path;
    if (kind !== undefined) outbound.kind = kind;
    const body = await this._verify({ outbound }, { times, atLeast, atMost });
    if (typeof body === "number") return body;
    const lines = [body.message || "verification failed"];
    for (const call of (body.calls || []).slice(-10)) lines.push(`  made: ${call.kind} ${call.method} ${call.url} -> ${call.status ?? call.error}`);
    throw new AssertionError({ message: lines.join("\n"), actual: body.count, expected: body.expected, operator: "verifyOutbound" });
  }

  /**
   * Waits until every webhook and `mock.after` function the handlers started is done:
   * `{ pending: 0, sent, failed }`; rejects (504) when some are still pending after `timeoutMs`.
   */
  async flushWebhooks({ timeoutMs = 10000 } = {}) {
    return this._call("POST", `/__moonmock/webhooks/flush?timeout_ms=${Math.round(timeoutMs)}`, {});
  }

  /**
   * Switches chaos on from the next request: a profile the script named (`mock.chaos_profile`),
   * or settings (`{ error_rate: 0.1, status: 503 }`, `latency`, `fault`, `fault_rate`,
   * `rate_limit`, `path`, `host`); `{ durationMs }` ends it on its own. Resolves to what is on now.
   */
  async chaos(profileOrSettings, { durationMs } = {}) {
    const body = typeof profileOrSettings === "string" ? { profile: profileOrSettings } : { ...(profileOrSettings || {}) };
    if (durationMs !== undefined) body.duration_ms = durationMs;
    return this._call("PUT", "/__moonmock/chaos", body);
  }

  /** Ends runtime chaos and pauses the script's own until chaos is switched on again. */
  async stopChaos() { return this._call("DELETE", "/__moonmock/chaos"); }

  /** The script's chaos layers and profiles, what runs now and for how long. */
  async chaosStatus() { return this._call("GET", "/__moonmock/chaos"); }

  /** Each `mock.resource` collection: `path`, `count`, `items`. */
  async resources() { return (await this._call("GET", "/__moonmock/resources")).resources; }

  /** Brings a collection (`"/pets"`) back to its seed: its items forgotten, seeded again. */
  async resetResource(path) { await this._call("DELETE", "/__moonmock/resources/" + encodeURI(path.replace(/^\/+/, ""))); }

  /** What the specs (`--spec`, `mock.spec`) say of the requests so far: per operation, `uncovered`, `violations`. */
  async contract() { return this._call("GET", "/__moonmock/contract"); }

  /** Rejects with an `AssertionError` listing each violation when a request or answer broke a spec. */
  async assertContractClean() {
    const { status, body } = await this._request("POST", "/__moonmock/verify", { contract: "clean" });
    if (status === 200) return;
    if (status !== 422) throw this._error(status, body);
    const lines = [body.message || "the contract was broken"];
    for (const v of (body.violations || []).slice(0, 20)) {
      for (const e of v.errors || []) lines.push(`  #${v.request_id} ${v.operation} ${v.direction}: ${e.instance_path ? e.instance_path + ": " : ""}${e.message}`);
    }
    throw new AssertionError({ message: lines.join("\n"), actual: body.count, expected: 0, operator: "assertContractClean" });
  }

  /** Makes `variant` the active one of `rule` (`null`: no stub endpoint active). */
  async switch(rule, variant) { await this._call("PUT", `/__moonmock/variants/${encode(rule)}`, { active: variant }); }
  /** Runtime rules, journal and state cleared; variants back to their defaults. */
  async reset() { await this._call("POST", "/__moonmock/reset"); }
  /** Reloads the script; rejects with the script's error when it does not load. */
  async reload() { return (await this._call("POST", "/__moonmock/reload")).message; }
  async health() { return this._call("GET", "/__moonmock/health"); }

  /** POST /__moonmock/verify with the count: the count when it holds, else the 422's body. */
  async _verify(query, { times, atLeast, atMost }) {
    if (times !== undefined) query.times = times;
    if (atLeast !== undefined) query.at_least = atLeast;
    if (atMost !== undefined) query.at_most = atMost;
    const { status, body } = await this._request("POST", "/__moonmock/verify", query);
    if (status === 200) return Number(body.count);
    if (status !== 422) throw this._error(status, body);
    return body;
  }

  async _call(method, path, payload) {
    const { status, body } = await this._request(method, path, payload);
    if (status >= 400) throw this._error(status, body);
    return body;
  }

  _error(status, body) {
    const message = body && typeof body === "object" ? (body.error || body.message) : body;
    const Kind = body && typeof body === "object" && "field" in body ? RuleError : MoonmockError;
    return new Kind(status, String(message ?? body), body);
  }

  async _request(method, path, payload) {
    const headers = { "Content-Type": "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const hasBody = payload !== undefined || !(method === "GET" || method === "DELETE");
    const response = await fetch(this.url + path, {
      method, headers, body: hasBody ? JSON.stringify(payload ?? null) : undefined, signal: AbortSignal.timeout(this.timeout),
    });
    const text = await response.text();
    let body = null;
    if (text) { try { body = JSON.parse(text); } catch { body = text; } }
    return { status: response.status, body };
  }
}

/** No `moonmock` binary: give `binary`, set `MOONMOCK_BIN`, or put it on `PATH`. */
export class BinaryNotFound extends Error {}

/** The binary to run: `binary`, else `$MOONMOCK_BIN`, else `moonmock` on `PATH`. */
export function findBinary(binary) {
  for (const candidate of [binary, process.env.MOONMOCK_BIN]) {
    if (!candidate) continue;
    const path = resolve(String(candidate));
    try { if (statSync(path).isFile()) { accessSync(path, constants.X_OK); return path; } } catch {}
    throw new BinaryNotFound(`moonmock: ${path} is not an executable file`);
  }
  for (const dir of (process.env.PATH || "").split(delimiter)) {
    const path = join(dir, "moonmock");
    if (dir && existsSync(path)) { try { accessSync(path, constants.X_OK); return path; } catch {} }
  }
  throw new BinaryNotFound("moonmock: no moonmock binary; set MOONMOCK_BIN=/path/to/moonmock, put it on PATH, or pass { binary }");
}

const running = new Set();
let exitHook = false;
function killAllOnExit() {
  if (exitHook) return;
  exitHook = true;
  process.on("exit", () => { for (const child of running) { try { child.kill("SIGKILL"); } catch {} } });
}

/** A `moonmock serve` process on a free port of 127.0.0.1, and a `Client` for it. */
export class Server extends Client {
  constructor(url, child, options) {
    super(url, options);
    this.process = child;
    this.output = [];
    this.errors = [];
  }

  get pid() { return this.process.pid; }
  get running() { return this.process.exitCode === null && this.process.signalCode === null; }

  /** SIGTERM (the server drains its requests), then SIGKILL after `timeout` ms; the exit code. */
  async close(timeout = 10_000) {
    const child = this.process;
    if (this.running) {
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeout);
      await exited;
      clearTimeout(timer);
    }
    running.delete(child);
    return child.exitCode;
  }
}

/**
 * Starts `moonmock serve SCRIPT` on a free port and resolves once it answers `/__moonmock/health`.
 *
 *     const mm = await serve("mocks.lua");
 *     await fetch(mm.url + "/users/7");
 *     await mm.close();
 */
export async function serve(script, { binary, args = [], cors = false, rules, token, watch = false, env, startupTimeout = 20_000, spec, specMode } = {}) {
  const command = [findBinary(binary), "serve"];
  if (script != null) command.push(isAbsolute(String(script)) ? String(script) : resolve(String(script)));
  command.push("--port", "0");
  if (!watch) command.push("--no-watch");
  if (cors) command.push("--cors");
  if (rules != null) command.push("--rules", resolve(String(rules)));
  if (token) command.push("--admin-token", token);
  for (const file of spec === undefined ? [] : [].concat(spec)) command.push("--spec", file);
  if (specMode) command.push("--spec-mode", specMode);
  command.push(...args);
  const child = spawn(command[0], command.slice(1), { stdio: ["ignore", "pipe", "pipe"], env: env ? { ...process.env, ...env } : process.env });
  running.add(child);
  killAllOnExit();
  const output = [], errors = [];
  const url = await new Promise((done, fail) => {
    let buffered = "", settled = false;
    const timer = setTimeout(() => { if (!settled) { settled = true; child.kill("SIGKILL"); fail(new Error(`moonmock did not start serving within ${startupTimeout} ms: ${command.join(" ")}`)); } }, startupTimeout);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => errors.push(...chunk.split("\n").filter(Boolean)));
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        output.push(line);
        const match = / on (https?:\/\/\S+)$/.exec(line.trim());
        if (match && !settled) { settled = true; clearTimeout(timer); done(match[1]); }
      }
    });
    child.once("exit", (code) => {
      running.delete(child);
      if (!settled) { settled = true; clearTimeout(timer); fail(new Error(`moonmock serve exited with ${code}: ${errors.join("\n") || "no message"}`)); }
    });
  });
  const server = new Server(url, child, { token });
  server.output = output;
  server.errors = errors;
  const deadline = Date.now() + startupTimeout;
  for (;;) {
    try { await server.health(); break; } catch (error) {
      if (Date.now() > deadline) { await server.close(); throw error; }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return server;
}

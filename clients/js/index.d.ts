// Types of the `moonmock` package (hand-written; the package has no build step).
import type { ChildProcess } from "node:child_process";

export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** The server refused a call: `status` is the HTTP status, `message` the server's words. */
export class MoonmockError extends Error {
  readonly status: number;
  readonly body: unknown;
}

/** A rule the server did not take; `field` names the part at fault (`rule.respond.status`). */
export class RuleError extends MoonmockError {
  readonly field: string;
}

export class BinaryNotFound extends Error {}

/** A condition on a query parameter or header: a string (equal), or a matcher. */
export type Condition = string | string[] | { present: true } | { absent: true } | { match: string };

export interface StubOptions {
  status?: number;
  json?: JSONValue;
  text?: string;
  body?: Uint8Array | ArrayBuffer | string;
  headers?: Record<string, string | string[]>;
  /** Milliseconds, `{ min, max }` or `{ median, sigma }`. */
  delay?: number | { min: number; max: number } | { median: number; sigma: number };
  fault?: "connection_reset" | "empty_response" | "malformed_chunk" | "timeout" | "dribble";
  times?: number;
  name?: string;
  query?: Record<string, Condition>;
  matchHeaders?: Record<string, Condition>;
  matchJson?: JSONValue;
}

export interface VerifyOptions {
  rule?: string;
  url?: string;
  times?: number;
  atLeast?: number;
  atMost?: number;
}

export interface RequestsFilter {
  since?: number;
  rule?: string;
  method?: string;
  pattern?: string;
}

/** One journal entry (`GET /__moonmock/requests`). */
export interface JournalEntry {
  id: number;
  method: string;
  url: string;
  status: number;
  rule?: string | null;
  [key: string]: unknown;
}

export interface State {
  get(key: string): Promise<JSONValue | undefined>;
  set(key: string, value: JSONValue): Promise<void>;
  delete(key: string): Promise<boolean>;
  all(): Promise<Record<string, JSONValue>>;
  replace(values: Record<string, JSONValue>): Promise<void>;
  clear(): Promise<void>;
}

export class Client {
  constructor(url: string, options?: { token?: string; timeout?: number });
  readonly url: string;
  readonly state: State;
  stub(method: string | null, path: string, options?: StubOptions): Promise<string>;
  addRule(rule: Record<string, unknown>): Promise<string>;
  addRule(rules: Record<string, unknown>[]): Promise<string[]>;
  rules(): Promise<Array<Record<string, unknown>>>;
  removeRule(id: string): Promise<void>;
  removeRuntimeRules(): Promise<number>;
  requests(filter?: RequestsFilter): Promise<JournalEntry[]>;
  /** The count; rejects with `node:assert`'s `AssertionError` listing the near misses. */
  verify(method: string | null, pattern: string | null, options?: VerifyOptions): Promise<number>;
  /** The specs' summary (`GET /__moonmock/contract`). */
  contract(): Promise<ContractSummary>;
  /** Rejects with `node:assert`'s `AssertionError` listing each violation of a spec. */
  assertContractClean(): Promise<void>;
  /** Chaos from the next request: a script profile's name, or settings. */
  verifyOutbound(url: string | null, options?: { method?: string; path?: string; kind?: "fetch" | "webhook" | "proxy"; times?: number; atLeast?: number; atMost?: number }): Promise<number>;
  flushWebhooks(options?: { timeoutMs?: number }): Promise<{ pending: number; sent: number; failed: number }>;
  chaos(profileOrSettings: string | ChaosSettings, options?: { durationMs?: number }): Promise<ChaosStatus>;
  stopChaos(): Promise<ChaosStatus>;
  chaosStatus(): Promise<ChaosStatus>;
  /** The `mock.resource` collections and their items. */
  resources(): Promise<Array<{ path: string; id_field: string; count: number; items: JSONValue[] }>>;
  resetResource(path: string): Promise<void>;
  switch(rule: string, variant: string | null): Promise<void>;
  reset(): Promise<void>;
  reload(): Promise<string>;
  health(): Promise<Record<string, unknown>>;
}

export interface ChaosSettings {
  error_rate?: number;
  status?: number;
  body?: JSONValue;
  latency?: { min: number; max: number } | { dist?: "lognormal"; median: number; p99?: number };
  fault?: "connection_reset" | "empty_response" | "malformed_chunk" | "timeout" | "dribble";
  fault_rate?: number;
  rate_limit?: { rps: number; burst?: number };
  path?: string;
  host?: string;
}

export interface ChaosStatus {
  active: boolean;
  paused: boolean;
  layers: ChaosSettings[];
  runtime: { profile?: string; settings: ChaosSettings; remaining_ms?: number } | null;
  profiles: Record<string, ChaosSettings>;
}

export interface ContractViolation {
  instance_path: string;
  schema_path: string;
  message: string;
}

export interface ContractSummary {
  operations: Array<{
    operation: string | null;
    method: string | null;
    path: string | null;
    requests: number;
    violations: Array<{ request_id: number; direction: "request" | "response"; errors: ContractViolation[] }>;
  }>;
  uncovered: string[];
  violations: number;
}

export interface ServeOptions {
  /** OpenAPI specs to check requests and answers against (`--spec`). */
  spec?: string | string[];
  /** `"warn"` (default) or `"enforce"` (`--spec-mode`). */
  specMode?: "warn" | "enforce";
  binary?: string;
  args?: string[];
  cors?: boolean;
  rules?: string;
  token?: string;
  watch?: boolean;
  env?: Record<string, string>;
  startupTimeout?: number;
}

export class Server extends Client {
  readonly process: ChildProcess;
  readonly pid: number;
  readonly running: boolean;
  output: string[];
  errors: string[];
  /** SIGTERM, then SIGKILL after `timeout` ms; the exit code. */
  close(timeout?: number): Promise<number | null>;
}

/** `moonmock serve script` on a free port of 127.0.0.1, once it answers. */
export function serve(script?: string | null, options?: ServeOptions): Promise<Server>;
export function findBinary(binary?: string): string;

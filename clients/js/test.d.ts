import type { Server, ServeOptions } from "./index.js";

export interface Hooks {
  before(fn: () => Promise<void> | void): unknown;
  beforeEach(fn: () => Promise<void> | void): unknown;
  after(fn: () => Promise<void> | void): unknown;
}

/** One server per test file, reset before each test; the client's methods once the hooks ran. */
export function useMoonmock(script: string, options?: ServeOptions & { hooks?: Hooks }): Server;

// A helper for test runners: one Moonmock server per test file, reset before each test.
// Hooks come from `options.hooks`; else node:test's (Jest and Vitest, which define global
// hooks, get theirs: node:test defines none, so a file run by `node --test` uses node:test's).
import * as nodeTest from "node:test";
import { serve } from "./index.js";

function runnerHooks() {
  const g = globalThis;
  const before = g.beforeAll, after = g.afterAll;
  if (typeof before === "function" && typeof g.beforeEach === "function" && typeof after === "function") {
    return { before, beforeEach: g.beforeEach, after };
  }
  return { before: nodeTest.before, beforeEach: nodeTest.beforeEach, after: nodeTest.after };
}

/**
 * Registers hooks that start `moonmock serve script` before the file's tests, reset it before
 * each one and stop it after them; returns an object whose methods are the client's (usable
 * once the hooks have run).
 *
 *     const mm = useMoonmock("mocks.lua");
 *     test("a user", async () => { await mm.stub("GET", "/users/7", { json: { id: 7 } }); });
 */
export function useMoonmock(script, options = {}) {
  const { hooks, ...serveOptions } = options;
  let server = null;
  const h = hooks || runnerHooks();
  h.before(async () => { server = await serve(script, serveOptions); });
  h.beforeEach(async () => { if (server) await server.reset(); });
  h.after(async () => { if (server) await server.close(); server = null; });
  return new Proxy({}, {
    get(_, name) {
      if (name === "then") return undefined;   // not a thenable: `await useMoonmock(...)` is the handle
      if (!server) throw new Error(`moonmock: the server starts in the before hook; use mm.${String(name)} inside a test`);
      const value = server[name];
      return typeof value === "function" ? value.bind(server) : value;
    },
  });
}

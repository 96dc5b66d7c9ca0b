// The JavaScript client against the real binary (MOONMOCK_BIN): node --test clients/js/test
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";
import { serve, Client, MoonmockError, RuleError } from "../index.js";
import { useMoonmock } from "../test.js";

const script = fileURLToPath(new URL("./fixtures.lua", import.meta.url));

test("serve, stub, verify (pass and fail with the near misses), requests since an id, close", async () => {
  const mm = await serve(script);
  try {
    assert.match(mm.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const id = await mm.stub("GET", "/orders/:id", { status: 201, json: { id: "o-1" }, headers: { "X-Kind": "stub" } });
    const answer = await fetch(mm.url + "/orders/1");
    assert.equal(answer.status, 201);
    assert.equal(answer.headers.get("x-kind"), "stub");
    assert.deepEqual(await answer.json(), { id: "o-1" });
    assert.ok((await mm.rules()).some((r) => r.id === id));
    assert.equal(await mm.verify("GET", "/orders/:id", { times: 1 }), 1);
    await fetch(mm.url + "/userz/3");
    await assert.rejects(mm.verify("GET", "/users/:id", { times: 1 }), (error) => {
      assert.equal(error.name, "AssertionError");
      assert.match(error.message, /closest: GET http:\/\/127\.0\.0\.1:\d+\/userz\/3: path: expected \/users\/:id, got \/userz\/3/);
      return true;
    });
    const first = (await mm.requests()).at(-1).id;
    await fetch(mm.url + "/users/7");
    const since = await mm.requests({ since: first });
    assert.deepEqual(since.map((e) => e.url.replace(mm.url, "")), ["/users/7"]);
    assert.equal(await mm.verify(null, null, { rule: "user", atLeast: 1 }), 1);
    await mm.removeRule(id);
    assert.equal((await fetch(mm.url + "/orders/1")).status, 404);
  } finally {
    await mm.close();
  }
  assert.equal(mm.running, false);
});

test("state, switch, reset, health, reload", async () => {
  const mm = await serve(script);
  try {
    await mm.state.set("user", "ana");
    assert.equal(await mm.state.get("user"), "ana");
    assert.equal(await mm.state.get("nobody"), undefined);
    await mm.state.replace({ hits: 41 });
    assert.deepEqual(await (await fetch(mm.url + "/count")).json(), { n: 42 });
    assert.equal(await mm.state.delete("hits"), true);
    await mm.switch("GET /weather", "storm");
    assert.equal((await fetch(mm.url + "/weather")).status, 503);
    await mm.stub("GET", "/extra", { text: "x" });
    await mm.reset();
    assert.deepEqual(await mm.requests(), []);
    assert.equal((await fetch(mm.url + "/weather")).status, 200);
    assert.equal((await fetch(mm.url + "/extra")).status, 404);
    assert.ok((await mm.health()).ok !== false);
    assert.equal(typeof (await mm.reload()), "string");
  } finally {
    await mm.close();
  }
});

test("a refused rule is a RuleError naming its field; other refusals are MoonmockErrors", async () => {
  const mm = await serve(script);
  try {
    await assert.rejects(mm.stub("GET", "/a", { status: 99 }), (error) => {
      assert.ok(error instanceof RuleError && error instanceof MoonmockError);
      assert.equal(error.status, 400);
      assert.equal(error.field, "rule.respond.status");
      assert.match(error.message, /rule\.respond\.status/);
      return true;
    });
    await assert.rejects(new Client(mm.url).removeRule("no-such-rule"), (error) => error instanceof MoonmockError && error.status === 404);
  } finally {
    await mm.close();
  }
});

/** Whether `pid` is a live process (a zombie left to a parent that is gone is not). */
function alive(pid) {
  try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8")); } catch { return false; }
}

test("a server started by the client leaves no process behind, also when the test throws", async () => {
  let pid;
  await assert.rejects((async () => {
    const mm = await serve(script);
    pid = mm.pid;
    try { throw new Error("the test failed"); } finally { await mm.close(); }
  })(), /the test failed/);
  assert.equal(alive(pid), false);
  // A process that ends without closing: the exit hook kills what is left.
  const child = execFileSync(process.execPath, ["--input-type=module", "-e",
    `import { serve } from ${JSON.stringify(new URL("../index.js", import.meta.url).href)};
     const mm = await serve(${JSON.stringify(script)}); console.log(mm.pid); process.exit(0);`], { encoding: "utf8" });
  const orphan = Number(child.trim());
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(alive(orphan), false);
});

// useMoonmock: one server for the tests below, reset before each.
const mm = useMoonmock(script);
test("useMoonmock gives a server reset before each test (1)", async () => {
  await mm.stub("GET", "/only-here", { text: "1" });
  assert.equal(await (await fetch(mm.url + "/only-here")).text(), "1");
});
test("useMoonmock gives a server reset before each test (2)", async () => {
  assert.equal((await fetch(mm.url + "/only-here")).status, 404);
  assert.equal(await mm.verify("GET", "/only-here", { times: 1 }), 1);
});
after(() => {});

test("a spec kept: contract() summarises, assertContractClean() names the violation, enforce refuses", async () => {
  const fixtures = fileURLToPath(new URL("../../../Tests/Fixtures/contract/", import.meta.url));
  const mm = await serve(fixtures + "mocks.lua");
  try {
    assert.equal((await fetch(mm.url + "/v1/pets")).status, 200);
    await mm.assertContractClean();
    assert.equal((await fetch(mm.url + "/v1/pets?broken=1")).status, 200);
    const summary = await mm.contract();
    assert.equal(summary.violations, 1);
    assert.ok(summary.uncovered.includes("POST /pets (createPet)"));
    await assert.rejects(mm.assertContractClean(), (error) => {
      assert.equal(error.name, "AssertionError");
      assert.match(error.message, /listPets response: \/body\/0\/name/);
      return true;
    });
  } finally {
    await mm.close();
  }
  const strict = await serve(script, { spec: fixtures + "petstore.yaml", specMode: "enforce" });
  try {
    const refused = await fetch(strict.url + "/v1/pets", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"name": 7}' });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get("content-type"), "application/problem+json");
    assert.equal((await refused.json()).operation, "createPet");
  } finally {
    await strict.close();
  }
});

test("chaos: a profile for a while, settings, stop; resources and reset", async () => {
  const mm = await serve(script);
  try {
    assert.equal((await fetch(mm.url + "/users/7")).status, 200);
    const on = await mm.chaos("down", { durationMs: 60000 });
    assert.equal(on.runtime.profile, "down");
    assert.equal((await fetch(mm.url + "/users/7")).status, 503);
    await mm.chaos("down", { durationMs: 200 });   // in its place, over soon
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await fetch(mm.url + "/users/7")).status, 200);
    await mm.chaos({ error_rate: 1, status: 418, path: "/users/" });
    assert.equal((await fetch(mm.url + "/users/7")).status, 418);
    assert.equal((await mm.chaosStatus()).runtime.settings.status, 418);
    assert.equal((await mm.stopChaos()).active, false);
    assert.equal((await fetch(mm.url + "/users/7")).status, 200);
    await assert.rejects(mm.chaos("nope"), (error) => error instanceof MoonmockError && /no chaos profile 'nope'/.test(error.message));

    const made = await fetch(mm.url + "/todos", { method: "POST", body: JSON.stringify({ title: "write tests" }) });
    assert.equal(made.status, 201);
    assert.equal(made.headers.get("location"), "/todos/2");
    const [todos] = await mm.resources();
    assert.deepEqual(todos.items, [{ id: 1, title: "seeded" }, { id: 2, title: "write tests" }]);
    await mm.resetResource("/todos");
    assert.deepEqual(await (await fetch(mm.url + "/todos")).json(), [{ id: 1, title: "seeded" }]);
  } finally {
    await mm.close();
  }
});

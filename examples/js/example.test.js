// A JavaScript test suite driving Moonmock: `node --test examples/js` (the moonmock binary on
// PATH or in MOONMOCK_BIN). The same ../mocks.lua serves the Python, Swift and JVM examples.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { useMoonmock } from "../../clients/js/test.js";   // in a project: import { useMoonmock } from "moonmock/test";

const mm = useMoonmock(fileURLToPath(new URL("../mocks.lua", import.meta.url)));

const get = async (path) => {
  const response = await fetch(mm.url + path);
  return [response.status, await response.json()];
};

test("the script answers", async () => {
  assert.deepEqual(await get("/users/7"), [200, { id: 7, name: "User 7" }]);
});

test("a stub for this test only", async () => {
  await mm.stub("GET", "/users/7", { status: 404, json: { error: "no such user" } });
  assert.deepEqual(await get("/users/7"), [404, { error: "no such user" }]);
  await mm.verify("GET", "/users/:id", { times: 1 });
});

test("fails twice, then succeeds (state is reset before each test)", async () => {
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await get("/flaky"))[0]);
  assert.deepEqual(statuses, [503, 503, 200]);
});

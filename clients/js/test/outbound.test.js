// Webhooks and verifyOutbound / flushWebhooks against the real binary, with a receiver this test runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../index.js";

test("a webhook reaches the receiver after the answer; verifyOutbound counts it; flushWebhooks waits for it", async () => {
  const received = [];
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => { body += chunk; });
    req.on("end", () => { received.push({ method: req.method, url: req.url, body }); res.writeHead(204).end(); });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const hook = `http://127.0.0.1:${receiver.address().port}/hook`;
  const dir = mkdtempSync(join(tmpdir(), "moonmock-js-"));
  const script = join(dir, "mocks.lua");
  writeFileSync(script, `mock.post("/orders", function() mock.webhook { url = "${hook}", json = { order = 1 }, delay = 100 }; return mock.status(202) end)\n`);
  const mm = await serve(script);
  try {
    assert.equal((await fetch(mm.url + "/orders", { method: "POST" })).status, 202);
    const flushed = await mm.flushWebhooks();
    assert.equal(flushed.pending, 0);
    assert.equal(flushed.sent, 1);
    assert.deepEqual(received, [{ method: "POST", url: "/hook", body: '{"order":1}' }]);
    assert.equal(await mm.verifyOutbound(hook, { method: "POST", times: 1 }), 1);
    assert.equal(await mm.verifyOutbound(null, { path: "/hook", kind: "webhook" }), 1);
    await assert.rejects(mm.verifyOutbound(hook, { times: 2 }), (error) => {
      assert.equal(error.name, "AssertionError");
      assert.match(error.message, /expected outbound .*\/hook exactly 2 time\(s\), got 1/);
      assert.match(error.message, /made: webhook POST .*\/hook -> 204/);
      return true;
    });
  } finally {
    await mm.close();
    receiver.close();
  }
});

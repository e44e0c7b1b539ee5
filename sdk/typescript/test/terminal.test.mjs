// Terminals: a PTY over a WebSocket, input echoed, resized, its exit
// told, and refusals typed.

import assert from "node:assert/strict";
import { before, test } from "node:test";
import { Terminal } from "@paddockhq/sdk";
import { org, p, rejects, runningRuntime, url, viewerKey, ws, WebSocketImpl } from "./env.mjs";
import { Paddock } from "@paddockhq/sdk";

let id;
before(async () => {
  id = await runningRuntime("ts-main");
});

/** until reads t's output until it contains want, and answers all of it. */
async function until(it, want) {
  let text = "";
  const dec = new TextDecoder();
  while (!text.includes(want)) {
    const { value, done } = await it.next();
    assert.ok(!done, `the terminal ended before ${JSON.stringify(want)}; it said ${JSON.stringify(text)}`);
    text += dec.decode(value, { stream: true });
  }
  return text;
}

test("a terminal echoes input, resizes, and tells its exit", async () => {
  const t = await p.terminal(org, ws, id, { argv: ["sh", "-i"], rows: 30, cols: 100 });
  assert.ok(t instanceof Terminal);
  assert.ok(t.pid > 0);
  assert.match(t.terminalId, /^t-[0-9a-f]{32}$/);
  const it = t[Symbol.asyncIterator]();
  t.write("echo $((6*7))-marker\n");
  await until(it, "42-marker");
  t.write("stty size\n");
  await until(it, "30 100");
  t.resize(40, 120);
  t.write("stty size\n");
  await until(it, "40 120");
  t.write("exit 7\n");
  for (;;) {
    const { done } = await it.next();
    if (done) break;
  }
  assert.equal(t.exit.code, 7);
});

test("a signal reaches the terminal's process group; close ends it", async () => {
  const t = await p.terminal(org, ws, id, { argv: ["sh", "-c", "trap 'echo got-int' INT; echo armed; while :; do sleep 1; done"] });
  const it = t[Symbol.asyncIterator]();
  await until(it, "armed");
  t.signal("INT");
  await until(it, "got-int");
  t.close();
  for (;;) {
    const { done } = await it.next();
    if (done) break;
  }
});

test("a terminal the caller may not open is a typed error", async () => {
  const viewer = new Paddock({ url, apiKey: viewerKey, WebSocket: WebSocketImpl });
  await rejects(viewer.terminal(org, ws, id), 403, "role_too_low");
  await rejects(p.terminal(org, ws, "00000000-0000-0000-0000-000000000000"), 404);
});

// Errors: the API's error body as a PaddockError with status, code and
// message; 401 for a bad key, 403 for a viewer's write, 404 for what
// does not exist.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Paddock, PaddockError } from "@paddockhq/sdk";
import { org, p, rejects, url, viewerKey, ws } from "./env.mjs";

const nobody = "00000000-0000-0000-0000-000000000000";

test("what does not exist is a 404 with its code", async () => {
  await rejects(p.getRuntime(org, ws, nobody), 404, "runtime_not_found");
  await rejects(p.getOrg("no-such-org"), 404);
  await rejects(p.getProject(org, ws, "no-such-project"), 404);
});

test("a key the server does not know is a 401", async () => {
  const stranger = new Paddock({ url, apiKey: "pdk_" + "0".repeat(48) });
  await rejects(stranger.listRuntimes(org, ws), 401, "invalid_api_key");
  const anonymous = new Paddock({ url });
  await rejects(anonymous.listRuntimes(org, ws), 401, "missing_api_key");
});

test("a viewer reads but may not write: a 403", async () => {
  const viewer = new Paddock({ url, apiKey: viewerKey });
  const page = await viewer.listRuntimes(org, ws);
  assert.ok(Array.isArray(page.items));
  await rejects(viewer.createProject(org, ws, "viewer-made"), 403, "role_too_low");
  const main = page.items[0];
  if (main) await rejects(viewer.exec(org, ws, main.id, ["true"]), 403, "role_too_low");
  await rejects(p.getProject(org, ws, "viewer-made"), 404);
});

test("a PaddockError carries the request id, and a name no route can be", async () => {
  const e = await p.getRuntime(org, ws, nobody).catch((x) => x);
  assert.ok(e instanceof PaddockError && e instanceof Error);
  assert.equal(e.notFound, true);
  assert.match(e.requestId ?? "", /.+/);
  assert.throws(() => p.getRuntime(org, ws, ".."), (x) => x instanceof PaddockError && x.code === "invalid_argument");
});

test("an answer that is not the API's error body still makes a PaddockError", async (t) => {
  // A proxy in front of the server answers its own page.
  const { createServer } = await import("node:http");
  const proxy = createServer((req, res) => {
    res.writeHead(502, { "Content-Type": "text/html" });
    res.end("<html><body>upstream gone</body></html>");
  });
  await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
  t.after(() => proxy.close());
  const behind = new Paddock({ url: `http://127.0.0.1:${proxy.address().port}/paddock`, apiKey: "pdk_x" });
  await rejects(behind.getOrg(org), 502, "unavailable");
  const e = await behind.getOrg(org).catch((x) => x);
  assert.equal(e.message, "Bad Gateway");
});

test("the fetch and headers options carry every request", async () => {
  const seen = [];
  const traced = new Paddock({
    url,
    apiKey: viewerKey,
    headers: { "X-Trace": "ts-sdk" },
    fetch: (input, init) => {
      seen.push({ input, method: init.method, headers: init.headers });
      return fetch(input, init);
    },
  });
  await traced.listRuntimes(org, ws, { limit: 1 });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].method, "GET");
  assert.equal(seen[0].input, `${url}/api/v1/org/${org}/ws/${ws}/runtimes?limit=1`);
  assert.equal(seen[0].headers["X-Trace"], "ts-sdk");
  assert.match(seen[0].headers["Authorization"], /^Bearer pdk_/);
});

test("a stream broken by what stands between is a PaddockError", async (t) => {
  // A proxy that answers an exec stream with a line that is not JSON.
  const { createServer } = await import("node:http");
  // Through runtime "cut", the stream ends after started, with no exit.
  const proxy = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
    const started = '{"event":"started","id":"p-1","pid":7}\n';
    res.end(req.url.includes("/runtimes/cut/") ? started : started + "<html>\n");
  });
  await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
  t.after(() => proxy.close());
  const behind = new Paddock({ url: `http://127.0.0.1:${proxy.address().port}`, apiKey: "pdk_x" });
  const s = await behind.execStream(org, ws, nobody, ["true"]);
  assert.equal(s.id, "p-1");
  await rejects(s.wait(), 503, "unavailable");
  const cut = await behind.execStream(org, ws, "cut", ["true"]);
  await rejects(cut.wait(), 503, "unavailable");
});

// The package's builds: CommonJS for require, ESM for import, and the
// browser bundle, which imports nothing of Node's and works with fetch
// alone.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";
import { apiKey, org, url } from "./env.mjs";

test("require gives the CommonJS build, and it talks to the server", async () => {
  const require = createRequire(import.meta.url);
  const cjs = require("@paddockhq/sdk");
  assert.match(require.resolve("@paddockhq/sdk"), /dist[/\\]cjs[/\\]index\.js$/);
  const p = new cjs.Paddock({ url, apiKey });
  assert.equal((await p.getOrg(org)).name, org);
  await assert.rejects(p.getOrg("no-such-org"), cjs.PaddockError);
});

test("the browser bundle is one ES module with no Node import, and it works", async () => {
  const file = new URL("../dist/browser/paddock.js", import.meta.url);
  const src = readFileSync(file, "utf8");
  assert.doesNotMatch(src, /\bfrom\s+["'](node:|fs|path|http|https|net|stream|buffer)["']/);
  assert.doesNotMatch(src, /\brequire\(/);
  const mod = await import(file.href);
  const p = new mod.Paddock({ url, apiKey });
  assert.equal((await p.getOrg(org)).name, org);
});

test("the types ship beside each build", () => {
  for (const f of ["../dist/esm/index.d.ts", "../dist/cjs/index.d.ts", "../dist/esm/schema.d.ts"]) {
    assert.match(readFileSync(new URL(f, import.meta.url), "utf8"), /export/);
  }
});

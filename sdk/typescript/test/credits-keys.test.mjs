// Credits (balance, journal, usage) and keys (create, list, use, revoke).

import assert from "node:assert/strict";
import { test } from "node:test";
import { Paddock } from "@paddockhq/sdk";
import { org, p, rejects, url, viewerMember } from "./env.mjs";

test("credits: the balance, the journal and usage", async () => {
  const acct = await p.getCredits(org);
  assert.equal(typeof acct.balance, "number");
  assert.ok(Math.abs(acct.available - (acct.balance - acct.held)) < 1e-6, JSON.stringify(acct));
  // The Go test granted the org 1000 credits (note "ts-sdk grant").
  assert.ok(Array.isArray(acct.recent));
  const journal = await p.listCreditJournal(org, { limit: 5 });
  assert.ok(Array.isArray(journal.items));
  assert.ok(journal.items.length <= 5);
  const grants = await p.listCreditJournal(org, { kind: "grant" });
  assert.ok(grants.items.length >= 1);
  assert.ok(grants.items.every((e) => e.kind === "grant"));
  assert.ok(grants.items.some((e) => e.amount === 1000 && e.note === "ts-sdk grant"), JSON.stringify(grants.items));
  const usage = await p.getUsage(org, { group_by: "runtime" });
  assert.equal(usage.group_by, "runtime");
  assert.equal(typeof usage.total.net, "number");
  assert.ok(Array.isArray(usage.items));
});

test("keys: create one, list it, use it, revoke it", async () => {
  const k = await p.createKey(org, { name: "ts-sdk-key", member: viewerMember, role: "viewer" });
  assert.match(k.key, /^pdk_/);
  assert.equal(k.role, "viewer");
  assert.ok((await p.listKeys(org)).items.some((x) => x.id === k.id && x.name === "ts-sdk-key"));
  const theirs = new Paddock({ url, apiKey: k.key });
  const me = await theirs.me();
  assert.equal(me.credential, `key:${k.id}`);
  await p.revokeKey(org, k.id);
  await rejects(theirs.me(), 401);
  assert.ok(!(await p.listKeys(org)).items.some((x) => x.id === k.id && !x.revoked_at));
});

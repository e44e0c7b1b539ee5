// Hosts: the machines an org brings. The server these tests run against
// has no machine to register (the Go tests register real ones), so they
// check each method's route through the server's answers: an empty list,
// a machine that is not there, and the refusals of a registration.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Paddock } from "@paddockhq/sdk";
import { org, p, rejects, url, viewerKey } from "./env.mjs";

const req = {
  name: "ts-sdk-box",
  address: "127.0.0.1:1",
  user: "root",
  private_key: "not a key",
  host_key: "",
};

test("hosts: list, get and remove answer for the org's machines", async () => {
  const list = await p.listHosts(org, { limit: 10 });
  assert.ok(Array.isArray(list.items));
  assert.ok(!list.items.some((h) => h.name === req.name));
  await rejects(p.getHost(org, req.name), 404, "host_not_found");
  await rejects(p.removeHost(org, req.name), 404, "host_not_found");
});

test("hosts: a registration that pins nothing is refused, and a viewer may not add", async () => {
  await rejects(p.addHost(org, req), 400, "host_key_required");
  await rejects(p.addHost(org, { ...req, host_key: "ssh-ed25519 nonsense" }), 400, "invalid_host_private_key");
  const viewer = new Paddock({ url, apiKey: viewerKey });
  await rejects(viewer.addHost(org, { ...req, host_key: "ssh-ed25519 AAAA" }), 403, "role_too_low");
  const after = await p.listHosts(org);
  assert.ok(!after.items.some((h) => h.name === req.name));
});

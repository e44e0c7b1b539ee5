// Worlds: sandboxes on one private network, started, paused, resumed
// and torn down as one, with exec into a member.

import assert from "node:assert/strict";
import { test } from "node:test";
import { org, p, rejects, small, ws } from "./env.mjs";

test("worlds: create, reach a member by name, pause, resume, list, delete", async () => {
  const w = await p.createWorld(org, ws, {
    name: "ts-world",
    members: [
      { name: "server", runtime: small, env: { ROLE: "server" } },
      { name: "player", runtime: small },
    ],
  });
  assert.equal(w.status, "running");
  assert.deepEqual(w.members.map((m) => m.name), ["server", "player"]);
  assert.ok(w.members.every((m) => m.sandbox?.kind === "world" && m.sandbox.state === "running"));

  const found = await p.execWorldMember(org, ws, w.id, "player", ["nslookup", "server"]);
  assert.equal(found.exitCode, 0, found.stderr);
  assert.match(found.stdout, /Address:\s*\d+\.\d+\.\d+\.\d+/);
  const role = await p.execWorldMember(org, ws, w.id, "server", ["sh", "-c", "echo $ROLE"]);
  assert.equal(role.stdout.trim(), "server");

  assert.equal((await p.pauseWorld(org, ws, w.id)).status, "paused");
  await rejects(p.execWorldMember(org, ws, w.id, "player", ["true"]), 409, "world_conflict");
  assert.equal((await p.resumeWorld(org, ws, w.id)).status, "running");

  const listed = await p.listWorlds(org, ws);
  assert.ok(listed.items.some((x) => x.id === w.id));
  const got = await p.getWorld(org, ws, w.id);
  assert.ok(got.estimated_total_credits >= got.billed_credits);

  const gone = await p.deleteWorld(org, ws, w.id);
  assert.equal(gone.status, "deleted");
  assert.ok(gone.members.every((m) => m.sandbox?.state === "killed"));
  await rejects(p.deleteWorld(org, ws, w.id), 409, "world_conflict");
});

test("worlds: refusals", async () => {
  await rejects(p.createWorld(org, ws, { name: "bad", members: [{ name: "Not_A_Label" }] }), 400, "invalid_world");
  await rejects(p.getWorld(org, ws, "00000000-0000-4000-8000-000000000000"), 404, "world_not_found");
});

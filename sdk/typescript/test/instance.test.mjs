// Instance mode: the server these tests run against is started with
// --instance ts-instance/main/svc, and serves that runtime's operations
// under /api/sandbox; each acts on the runtime its own routes show.

import assert from "node:assert/strict";
import { test } from "node:test";
import { p, rejects, small } from "./env.mjs";

const [org, ws] = ["ts-instance", "main"];

test("instance mode: /api/sandbox is the configured runtime", async () => {
  const rt = await p.getInstance();
  assert.equal((await p.getProject(org, ws, "svc")).runtime_id, rt.id);
  await p.configureRuntime(org, ws, rt.id, small);

  await rejects(p.bindInstanceSecret("nope"), 404, "secret_not_found");
  const bound = await p.bindInstanceSecret("svc-token");
  assert.deepEqual(bound.runtime.config.secrets, ["svc-token"]);
  assert.deepEqual((await p.listRuntimeSecrets(org, ws, rt.id)).secrets, ["svc-token"]);

  assert.equal((await p.startInstance()).status, "running");
  const out = await p.instanceExec(["sh", "-c", 'echo "$SVC_TOKEN"']);
  assert.equal(out.stdout, "instance-secret\n");
  assert.equal((await p.stopInstance()).status, "paused");
  assert.equal((await p.getRuntime(org, ws, rt.id)).status, "paused");
  assert.equal((await p.resumeInstance()).status, "running");

  const snap = await p.snapshotInstance({ name: "ts-instance-1" });
  assert.equal(snap.runtime_id, rt.id);
  assert.deepEqual((await p.listInstanceSnapshots()).items.map((s) => s.id), [snap.id]);

  const port = await p.setInstancePortPublic(8080, true);
  assert.equal(port.public, true);
  assert.ok((await p.listInstancePorts()).items.some((q) => q.port === 8080 && q.public));

  await p.unbindInstanceSecret("svc-token");
  assert.deepEqual((await p.listInstanceSecrets()).secrets, []);
  await rejects(p.unbindInstanceSecret("svc-token"), 404, "secret_not_bound");
  await p.resetRuntime(org, ws, rt.id);
});

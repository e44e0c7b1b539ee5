// Evaluation tasks: a batch run, its summary, a task's result, a
// listing by batch, a cancel, and a task made from a snapshot.

import assert from "node:assert/strict";
import { test } from "node:test";
import { org, p, rejects, small, ws } from "./env.mjs";

/** ended polls batchId until none of its tasks is pending or running. */
async function ended(batchId) {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const b = await p.getTaskBatch(org, ws, batchId);
    if (!b.statuses.pending && !b.statuses.running) return b;
    assert.ok(Date.now() < deadline, `batch ${batchId} still running: ${JSON.stringify(b.statuses)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("tasks: a batch runs, is summed up, and each task keeps its exit, output and score", async () => {
  const b = await p.createTasks(org, ws, {
    runtime: small, count: 2, concurrency: 1, timeout_seconds: 60,
    argv: ["sh", "-c", "echo hello; exit 3"],
    score: ["sh", "-c", "echo '{\"ok\": true}'"],
  });
  assert.equal(b.count, 2);
  assert.equal(b.concurrency, 1);
  assert.equal(b.tasks.length, 2);
  const done = await ended(b.id);
  assert.equal(done.statuses.failed, 2, JSON.stringify(done.statuses));
  const t = await p.getTask(org, ws, b.tasks[0].id);
  assert.equal(t.exit_code, 3);
  assert.equal(t.stdout, "hello\n");
  assert.deepEqual(t.score, { ok: true });
  const listed = await p.listTasks(org, ws, { batch_id: b.id });
  assert.deepEqual(listed.items.map((x) => x.id).sort(), b.tasks.map((x) => x.id).sort());
  await rejects(p.cancelTask(org, ws, t.id), 409, "task_finished");
  await rejects(p.getTask(org, ws, "00000000-0000-4000-8000-000000000000"), 404, "task_not_found");
  await rejects(p.createTasks(org, ws, { runtime: small, argv: [""] }), 400, "invalid_task");
});

test("tasks: a running task is cancelled", async () => {
  const b = await p.createTasks(org, ws, { runtime: small, argv: ["sleep", "300"] });
  const id = b.tasks[0].id;
  const deadline = Date.now() + 120_000;
  while ((await p.getTask(org, ws, id)).status === "pending") {
    assert.ok(Date.now() < deadline, "the task never started");
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal((await p.cancelTask(org, ws, id)).status, "cancelled");
});

test("tasks: made from a snapshot, a task sees its files", async () => {
  const proj = await p.createProject(org, ws, { name: "ts-task-src", runtime: small });
  try {
    await p.startRuntime(org, ws, proj.runtime_id);
    await p.writeFile(org, ws, proj.runtime_id, "/workspace/input.txt", "from the snapshot");
    const snap = await p.createSnapshot(org, ws, proj.runtime_id, "ts-task-src");
    const b = await p.createTasks(org, ws, { snapshot: snap.id, argv: ["cat", "input.txt"] });
    await ended(b.id);
    const t = await p.getTask(org, ws, b.tasks[0].id);
    assert.equal(t.status, "succeeded", t.error);
    assert.equal(t.stdout, "from the snapshot");
    assert.equal(t.snapshot_id, snap.id);
    await p.deleteSnapshot(org, ws, snap.id);
  } finally {
    await p.deleteProject(org, ws, "ts-task-src");
  }
});

// Snapshots: take one of a runtime, list and get it, restore it into a
// new project and into the same runtime, delete it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { org, p, rejects, small, ws } from "./env.mjs";

test("snapshots: take, list, get, restore into a new project and the same runtime, delete", async () => {
  const proj = await p.createProject(org, ws, { name: "ts-snap", runtime: small });
  const id = proj.runtime_id;
  await p.startRuntime(org, ws, id);
  let copy;
  try {
    await p.writeFile(org, ws, id, "/workspace/notes/a.txt", "before");
    const snap = await p.createSnapshot(org, ws, id, "ts-first");
    assert.equal(snap.name, "ts-first");
    assert.equal(snap.runtime_id, id);
    assert.ok(snap.size_bytes > 0);
    await rejects(p.createSnapshot(org, ws, id, { name: "ts-first" }), 409, "snapshot_exists");

    assert.deepEqual((await p.listRuntimeSnapshots(org, ws, id)).items.map((s) => s.id), [snap.id]);
    assert.ok((await p.listSnapshots(org, ws)).items.some((s) => s.id === snap.id));
    assert.equal((await p.getSnapshot(org, ws, snap.id)).name, "ts-first");

    // Into a new project: the files come with it.
    const res = await p.restoreSnapshot(org, ws, snap.id, { project_name: "ts-snap-copy" });
    copy = res.project;
    assert.equal(copy.name, "ts-snap-copy");
    assert.equal(res.runtime.status, "running");
    assert.equal(await p.readText(org, ws, res.runtime.id, "/workspace/notes/a.txt"), "before");
    await p.deleteProject(org, ws, "ts-snap-copy");
    copy = undefined;

    // Into the same runtime: what was written since is gone.
    await p.writeFile(org, ws, id, "/workspace/notes/a.txt", "after");
    const back = await p.restoreSnapshot(org, ws, snap.id, { runtime_id: id });
    assert.equal(back.project, undefined);
    assert.equal(await p.readText(org, ws, id, "/workspace/notes/a.txt"), "before");

    await rejects(p.restoreSnapshot(org, ws, snap.id, {}), 400, "invalid_restore_target");
    await p.deleteSnapshot(org, ws, snap.id);
    await rejects(p.getSnapshot(org, ws, snap.id), 404, "snapshot_not_found");
    assert.equal((await p.listRuntimeSnapshots(org, ws, id)).items.length, 0);
  } finally {
    if (copy) await p.deleteProject(org, ws, "ts-snap-copy");
    await p.deleteProject(org, ws, "ts-snap");
  }
});

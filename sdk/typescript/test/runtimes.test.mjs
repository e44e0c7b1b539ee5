// Orgs, workspaces, projects and a runtime's whole life: create,
// configure, start, keepalive, pause, resume, reset, delete.

import assert from "node:assert/strict";
import { test } from "node:test";
import { apiKey, org, p, rejects, small, url, ws } from "./env.mjs";
import { Paddock } from "@paddockhq/sdk";

test("orgs and workspaces: create, get, list", async () => {
  const o = await p.createOrg("ts-other");
  assert.equal(o.name, "ts-other");
  assert.equal((await p.getOrg("ts-other")).id, o.id);
  assert.ok((await p.listOrgs()).items.some((x) => x.name === "ts-other"));
  const w = await p.createWorkspace("ts-other", { name: "lab" });
  assert.equal(w.name, "lab");
  assert.equal((await p.getWorkspace("ts-other", "lab")).id, w.id);
  assert.deepEqual((await p.listWorkspaces("ts-other")).items.map((x) => x.name), ["lab"]);
  await rejects(p.createOrg("ts-other"), 409);
});

test("projects: create, get by name, list a page at a time, delete", async () => {
  const a = await p.createProject("ts-other", "lab", "alpha");
  const b = await p.createProject("ts-other", "lab", { name: "beta", description: "the second" });
  assert.equal((await p.getProject("ts-other", "lab", "alpha")).id, a.id);
  const first = await p.listProjects("ts-other", "lab", { limit: 1 });
  assert.equal(first.items.length, 1);
  assert.ok(first.next_cursor);
  const second = await p.listProjects("ts-other", "lab", { limit: 1, cursor: first.next_cursor });
  assert.deepEqual([first.items[0].id, second.items[0].id].sort(), [a.id, b.id].sort());
  const runtimes = await p.listRuntimes("ts-other", "lab");
  assert.deepEqual(runtimes.items.map((r) => r.id).sort(), [a.runtime_id, b.runtime_id].sort());
  await p.deleteProject("ts-other", "lab", "alpha");
  await rejects(p.getProject("ts-other", "lab", "alpha"), 404);
  await rejects(p.getRuntime("ts-other", "lab", a.runtime_id), 404);
});

test("a runtime's life: configure, start, keepalive, pause, resume, reset, delete", async () => {
  const proj = await p.createProject(org, ws, { name: "ts-life", runtime: small });
  const id = proj.runtime_id;
  assert.equal((await p.getRuntime(org, ws, id)).status, "idle");
  const upd = await p.configureRuntime(org, ws, id, { idle_timeout_seconds: 3600 });
  assert.ok(upd.live.includes("idle_timeout_seconds") || upd.next_start.includes("idle_timeout_seconds"), JSON.stringify(upd));
  assert.equal(upd.runtime.config.idle_timeout_seconds, 3600);
  await rejects(p.exec(org, ws, id, ["true"]), 409, "runtime_not_running");

  assert.equal((await p.startRuntime(org, ws, id)).status, "running");
  await rejects(p.startRuntime(org, ws, id), 409, "runtime_already_running");
  await p.writeFile(org, ws, id, "/tmp/kept.txt", "kept across a pause");
  const kept = await p.keepaliveRuntime(org, ws, id, { duration_seconds: 1800 });
  assert.ok(kept.expires_at, "a running runtime has an expiry");

  assert.equal((await p.pauseRuntime(org, ws, id)).status, "paused");
  assert.equal((await p.resumeRuntime(org, ws, id)).status, "running");
  assert.equal(await p.readText(org, ws, id, "/tmp/kept.txt"), "kept across a pause");

  assert.equal((await p.resetRuntime(org, ws, id)).status, "idle");
  await p.deleteProject(org, ws, "ts-life");
  await rejects(p.getRuntime(org, ws, id), 404);
});

test("a bad server URL is refused at once", () => {
  assert.throws(() => new Paddock({ url: "ftp://example.com", apiKey }), /http/);
  assert.throws(() => new Paddock({ url: url + "?x=1", apiKey }), /http/);
});

test("templates: create, get, list, a project from one, delete", async () => {
  const tpl = await p.createTemplate(org, ws, { name: "ts-tpl", runtime: { ...small, model: "m-1" } });
  assert.equal(tpl.runtime.model, "m-1");
  assert.equal((await p.getTemplate(org, ws, "ts-tpl")).id, tpl.id);
  assert.ok((await p.listTemplates(org, ws)).items.some((t) => t.name === "ts-tpl"));
  const proj = await p.createProject(org, ws, { name: "ts-from-tpl", template: "ts-tpl", runtime: { model: "m-2" } });
  const cfg = (await p.getRuntime(org, ws, proj.runtime_id)).config;
  assert.equal(cfg.memory_mb, small.memory_mb);
  assert.equal(cfg.model, "m-2");
  await p.deleteProject(org, ws, "ts-from-tpl");
  await p.deleteTemplate(org, ws, "ts-tpl");
  await rejects(p.getTemplate(org, ws, "ts-tpl"), 404, "template_not_found");
});

// Workflows: steps run in order on a runtime, a run listed and followed
// live, a cancel, and a refusal.

import assert from "node:assert/strict";
import { before, test } from "node:test";
import { org, p, rejects, runningRuntime, ws } from "./env.mjs";

let id;
before(async () => {
  id = await runningRuntime("ts-workflows");
});

test("a workflow runs its steps in order; following it yields each step and the end", async () => {
  const wf = await p.createWorkflow(org, ws, id, {
    name: "ts-build",
    steps: [
      { name: "write", type: "exec", argv: ["sh", "-c", "echo one > wf; echo out"] },
      { name: "read", type: "exec", argv: ["cat", "wf"] },
    ],
  });
  assert.equal(wf.name, "ts-build");
  assert.equal(wf.last_run.steps.length, 2);
  const events = [];
  for await (const ev of p.followWorkflow(org, ws, id, "ts-build")) events.push(ev);
  const last = events.at(-1);
  assert.equal(last.type, "run");
  assert.equal(last.status, "succeeded");
  const ended = events.filter((e) => e.step && e.step.status === "succeeded").map((e) => e.step.name);
  assert.deepEqual(ended, ["write", "read"]);

  // Followed again once it has ended: its status, each step, its end.
  const again = [];
  for await (const ev of p.followWorkflow(org, ws, id, "ts-build", wf.last_run.id)) again.push(ev);
  assert.deepEqual(again.filter((e) => e.step && e.step.status === "succeeded").map((e) => e.step.name), ["write", "read"]);
  assert.equal(again.at(-1).type, "run");
  assert.equal(again.at(-1).status, "succeeded");

  const run = await p.getWorkflowRun(org, ws, id, wf.id, wf.last_run.id);
  assert.equal(run.steps[0].stdout, "out\n");
  assert.equal(run.steps[1].stdout, "one\n");
  assert.equal(run.steps[1].exit_code, 0);
  const runs = await p.listWorkflowRuns(org, ws, id, "ts-build");
  assert.equal(runs.items[0].id, run.id);
  const listed = await p.listWorkflows(org, ws, id);
  assert.ok(listed.items.some((w) => w.id === wf.id));
  await p.deleteWorkflow(org, ws, id, "ts-build");
  await rejects(p.getWorkflow(org, ws, id, "ts-build"), 404, "workflow_not_found");
});

test("a cancelled run stops its step and skips the rest", async () => {
  await p.createWorkflow(org, ws, id, {
    name: "ts-long",
    steps: [{ name: "sleep", type: "exec", argv: ["sleep", "300"] }, { name: "next", type: "exec", argv: ["true"] }],
  });
  for await (const ev of p.followWorkflow(org, ws, id, "ts-long")) {
    if (ev.step && ev.step.name === "sleep" && ev.step.status === "running") break;
  }
  const run = await p.cancelWorkflow(org, ws, id, "ts-long");
  assert.equal(run.status, "cancelled");
  assert.deepEqual(run.steps.map((s) => s.status), ["cancelled", "skipped"]);
  await rejects(p.cancelWorkflow(org, ws, id, "ts-long"), 409, "workflow_run_finished");
});

test("a bad definition is refused with its code", async () => {
  await rejects(p.createWorkflow(org, ws, id, { name: "bad", steps: [{ type: "exec" }] }), 400, "invalid_workflow");
  await rejects(p.createWorkflow(org, ws, id, { name: "bad", steps: [{ type: "exec", argv: ["true"] }], schedule: "never" }), 400, "invalid_schedule");
});

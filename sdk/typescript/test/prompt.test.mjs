// Prompts and sessions, against the test image's stand-in of Claude
// Code (internal/harness/standin): a streamed turn, a continued one, the
// session listed and its transcript.

import assert from "node:assert/strict";
import { before, test } from "node:test";
import { PromptStream } from "@paddockhq/sdk";
import { org, p, rejects, runningRuntime, ws } from "./env.mjs";

let id;
before(async () => {
  id = await runningRuntime("ts-main");
});

test("a streamed prompt yields its events, then done; the session keeps them", async () => {
  const s = await p.promptStream(org, ws, id, "list the workspace please");
  assert.ok(s instanceof PromptStream);
  assert.match(s.sessionId, /.+/);
  const events = await s.events();
  const types = events.map((e) => e.type);
  assert.equal(types.at(-1), "done");
  assert.ok(types.includes("tool_call"), `events: ${types}`);
  assert.ok(types.includes("tool_result"), `events: ${types}`);
  assert.equal(events[0].role, "user");
  assert.equal(events[0].text, "list the workspace please");
  assert.equal(s.done.exit_code, 0);
  assert.equal(s.failed, false);
  for (let i = 1; i < events.length; i++) assert.ok(events[i].seq > events[i - 1].seq);

  const next = await p.prompt(org, ws, id, { prompt: "and again", session_id: s.sessionId });
  assert.equal(next.session.id, s.sessionId);
  assert.equal(next.session.turns, 2);
  assert.match(next.result, /previous prompt: list the workspace please/);

  const listed = await p.listSessions(org, ws, id);
  assert.ok(listed.items.some((x) => x.id === s.sessionId));
  const tr = await p.getSession(org, ws, id, s.sessionId);
  assert.equal(tr.events.filter((e) => e.type === "done").length, 2);
  assert.deepEqual(tr.events.slice(0, events.length).map((e) => e.seq), events.map((e) => e.seq));
});

test("a turn that fails is a failed turn, not an error", async () => {
  const s = await p.promptStream(org, ws, id, "please [fail]");
  const events = await s.events();
  assert.ok(events.some((e) => e.type === "error"));
  assert.equal(s.failed, true);
});

test("prompt refusals are typed errors", async () => {
  await rejects(p.prompt(org, ws, id, { prompt: "x", harness: "no-such-harness" }), 400, "unknown_harness");
  await rejects(p.prompt(org, ws, id, { prompt: "x", session_id: "nope" }), 404, "session_not_found");
});

test("a task runs in a session of its own, of kind task", async () => {
  const r = await p.task(org, ws, id, "a task to finish");
  assert.equal(r.session.kind, "task");
  assert.equal(r.error, undefined);
  assert.ok(r.events.some((e) => e.type === "done"));
  const s = await p.taskStream(org, ws, id, "another task");
  const events = await s.events();
  assert.equal(events.at(-1).type, "done");
  assert.notEqual(s.sessionId, r.session.id);
  await rejects(p.task(org, ws, id, { prompt: "x", session_id: r.session.id }), 400);
});

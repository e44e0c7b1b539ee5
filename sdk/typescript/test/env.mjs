// What every test file shares: the server the Go test started
// (internal/e2e/sdks/typescript_test.go), a client of it through the
// package's own exports, and the runtime the sandbox tests use.

import assert from "node:assert/strict";
import { Paddock, PaddockError } from "@paddockhq/sdk";

/** need is an environment variable the Go test sets. */
function need(name) {
  const v = process.env[name];
  assert.ok(v, `${name} is not set: run these tests through internal/e2e/sdks (TestTypeScriptSDK)`);
  return v;
}

export const url = need("PADDOCK_URL");
export const apiKey = need("PADDOCK_API_KEY");
export const org = need("PADDOCK_ORG");
export const ws = need("PADDOCK_WORKSPACE");
export const viewerKey = need("PADDOCK_VIEWER_KEY");
/** The viewer's member name (an email), a member of org and ws. */
export const viewerMember = need("PADDOCK_VIEWER_MEMBER");
/** A workspace secret holding ANTHROPIC_API_KEY for the harness stand-in. */
export const harnessSecret = need("PADDOCK_HARNESS_SECRET");

/**
 * The WebSocket for terminals: Node's own (22 and later), else the ws
 * package's, injected as an older runtime's user would.
 */
export const WebSocketImpl = globalThis.WebSocket ?? (await import("ws")).WebSocket;

export const p = new Paddock({ url, apiKey, WebSocket: WebSocketImpl });

/** A small runtime's settings: two cores are shared by everything. */
export const small = { cpu_millis: 500, memory_mb: 256, pids_limit: 256 };

/**
 * runningRuntime is the id of project name's runtime, running: created
 * (with the harness's secret bound) and started the first time.
 */
export async function runningRuntime(name) {
  let project;
  try {
    project = await p.getProject(org, ws, name);
  } catch (e) {
    if (!(e instanceof PaddockError && e.status === 404)) throw e;
    project = await p.createProject(org, ws, { name, runtime: small });
    await p.configureRuntime(org, ws, project.runtime_id, { secrets: [harnessSecret] });
  }
  const rt = await p.getRuntime(org, ws, project.runtime_id);
  if (rt.status !== "running") {
    const started = await p.startRuntime(org, ws, project.runtime_id);
    assert.equal(started.status, "running");
  }
  return project.runtime_id;
}

/** rejects asserts that promise fails with a PaddockError of status and code. */
export async function rejects(promise, status, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof PaddockError, `not a PaddockError: ${e}`);
    assert.equal(e.status, status, `status of ${e.code}: ${e.message}`);
    if (code) assert.equal(e.code, code, e.message);
    assert.ok(e.message.length > 0);
    return true;
  });
}

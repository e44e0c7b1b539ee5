// Exec: collected, streamed (events decoded), stdin, background
// processes with attach and signal, and what cannot run.

import assert from "node:assert/strict";
import { before, test } from "node:test";
import { ExecStream } from "@paddockhq/sdk";
import { org, p, rejects, runningRuntime, ws } from "./env.mjs";

let id;
before(async () => {
  id = await runningRuntime("ts-main");
});

test("exec collects stdout, stderr and the exit code", async () => {
  const r = await p.exec(org, ws, id, ["sh", "-c", "echo out; echo err >&2; exit 3"]);
  assert.equal(r.stdout, "out\n");
  assert.equal(r.stderr, "err\n");
  assert.equal(r.exitCode, 3);
  assert.equal(r.exit.code, 3);
  assert.equal(r.truncated, false);
  assert.deepEqual([...r.stdoutBytes], [...new TextEncoder().encode("out\n")]);
});

test("exec takes env, cwd and stdin as text or bytes", async () => {
  const r = await p.exec(org, ws, id, { argv: ["sh", "-c", 'printf "%s:" "$GREETING"; pwd; cat'], env: { GREETING: "héllo" }, cwd: "/tmp", stdin: "from stdin" });
  assert.equal(r.stdout, "héllo:/tmp\nfrom stdin");
  const b = await p.exec(org, ws, id, { argv: ["od", "-An", "-tx1"], stdin: new Uint8Array([0, 255, 10]) });
  assert.equal(b.stdout.trim(), "00 ff 0a");
});

test("execStream yields output events decoded, in order, then exit", async () => {
  // "é" is split across two writes: each event's text is whole.
  const s = await p.execStream(org, ws, id, ["sh", "-c", "printf 'a\\303'; sleep 0.2; printf '\\251b'; echo oops >&2; exit 5"]);
  assert.ok(s instanceof ExecStream);
  assert.match(s.id, /.+/);
  assert.ok(s.pid > 0);
  const out = { stdout: "", stderr: "" };
  let exit;
  for await (const ev of s) {
    if (ev.type === "output") {
      assert.ok(ev.data instanceof Uint8Array);
      out[ev.stream] += ev.text;
    }
    if (ev.type === "exit") exit = ev.exit;
  }
  assert.equal(out.stdout, "aéb");
  assert.equal(out.stderr, "oops\n");
  assert.equal(exit.code, 5);
  assert.equal(s.exit.code, 5);
});

test("execStream with open stdin: the stream's process reads what is written", async () => {
  const s = await p.execStream(org, ws, id, { argv: ["sh", "-c", "read line; echo got:$line; cat"], open_stdin: true });
  assert.equal(await s.writeStdin("first\n"), 6);
  await s.writeStdin("rest", true);
  const r = await s.wait();
  assert.equal(r.stdout, "got:first\nrest");
  assert.equal(r.exitCode, 0);
});

test("a background process runs on: attach follows it, signal ends it", async () => {
  const bg = await p.exec(org, ws, id, { argv: ["sh", "-c", "echo ready; exec sleep 600"], background: true });
  assert.equal(bg.exit, undefined);
  assert.match(bg.id, /.+/);
  const listed = await p.listProcesses(org, ws, id);
  assert.ok(listed.some((x) => x.id === bg.id && x.running && x.background), "the background process is listed");
  const got = await p.getProcess(org, ws, id, bg.id);
  assert.deepEqual(got.argv, ["sh", "-c", "echo ready; exec sleep 600"]);

  const s = await p.attach(org, ws, id, bg.id);
  let sawReady = false;
  for await (const ev of s) {
    if (ev.type === "output" && ev.text.includes("ready") && !sawReady) {
      sawReady = true;
      await s.signal("TERM");
    }
  }
  assert.ok(sawReady, "the attach replayed the output");
  assert.equal(s.exit.signal, "SIGTERM");
  assert.equal(s.exit.code, -1);
});

test("attach without follow replays and ends; wait says the process has not exited", async () => {
  const bg = await p.exec(org, ws, id, { argv: ["sh", "-c", "echo one; exec sleep 600"], background: true });
  try {
    // Replay until the output is there: the process may not have printed yet.
    let text = "";
    while (!text.includes("one")) {
      text = "";
      const s = await p.attach(org, ws, id, bg.id, { follow: false });
      for await (const ev of s) if (ev.type === "output") text += ev.text;
    }
    const s = await p.attach(org, ws, id, bg.id, { follow: false });
    await rejects(s.wait(), 409, "not_exited");
  } finally {
    await p.signalProcess(org, ws, id, bg.id, { signal: "KILL" });
  }
});

test("closing a stream of a foreground process kills it", async () => {
  const s = await p.execStream(org, ws, id, ["sleep", "600"]);
  s.close();
  for (;;) {
    const procs = await p.listProcesses(org, ws, id);
    if (!procs.some((x) => x.id === s.id && x.running)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
});

test("what cannot run is a typed error", async () => {
  await rejects(p.exec(org, ws, id, ["no-such-command-here"]), 404, "command_not_found");
  await rejects(p.exec(org, ws, id, { argv: ["true"], cwd: "relative" }), 400);
  await rejects(p.execStream(org, ws, id, ["no-such-command-here"]), 404, "command_not_found");
});

test("kill-all ends every process but the agent", async () => {
  const bg = await p.exec(org, ws, id, { argv: ["sleep", "600"], background: true });
  const res = await p.killAllProcesses(org, ws, id);
  assert.ok(res.killed >= 1, JSON.stringify(res));
  const got = await p.getProcess(org, ws, id, bg.id);
  assert.equal(got.running, false);
  // The sandbox goes on.
  assert.equal((await p.exec(org, ws, id, ["echo", "still here"])).stdout, "still here\n");
});

// Template builds: a Dockerfile's image built on the server's engine from
// a local base image, its progress given as it comes, the template made
// with it and the builds listed; a failing step and a missing base are
// PaddockErrors with their codes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { org, p, rejects, ws } from "./env.mjs";

// The test image: on the server's engine and on its allow-list (paddock/*).
const base = "paddock/test-busybox:latest";

/** tar is a ustar archive of files (name → text). */
function tar(files) {
  const enc = new TextEncoder();
  const blocks = [];
  for (const [name, text] of Object.entries(files)) {
    const data = enc.encode(text);
    const h = new Uint8Array(512);
    const put = (s, off) => h.set(enc.encode(s), off);
    put(name, 0);
    put("0000644\0", 100);
    put("0000000\0", 108);
    put("0000000\0", 116);
    put(data.length.toString(8).padStart(11, "0") + "\0", 124);
    put("00000000000\0", 136);
    put("        ", 148);
    put("0", 156);
    put("ustar\0" + "00", 257);
    const sum = h.reduce((a, b) => a + b, 0);
    put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
    blocks.push(h, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let off = 0;
  for (const b of blocks) {
    out.set(b, off);
    off += b.length;
  }
  return out;
}

const unique = (prefix) => `${prefix}-${Math.random().toString(16).slice(2, 10)}`;

test("a template is built from a Dockerfile, its progress streamed", async () => {
  const name = unique("tsbuild");
  const events = [];
  const dockerfile = `FROM ${base}\nCOPY note.txt /opt/note.txt\nRUN echo from-typescript > /opt/run.txt\n`;
  const { build, template } = await p.buildTemplate(org, ws, name, tar({ Dockerfile: dockerfile, "note.txt": "n" }), {
    onEvent: (ev) => events.push(ev),
  });
  assert.equal(build.state, "succeeded");
  assert.ok(build.size_bytes > 0 && build.image.startsWith("paddock-org/"));
  assert.equal(template.runtime.image, build.image);
  assert.equal(events[0].event, "started");
  assert.ok(events.some((ev) => ev.event === "step" && ev.text.startsWith("RUN echo from-typescript")));
  const page = await p.listTemplateBuilds(org, ws, { template: name });
  assert.deepEqual(page.items.map((b) => b.id), [build.id]);
  const got = await p.getTemplateBuild(org, ws, build.id);
  assert.match(got.log_tail, /from-typescript/);
  await p.deleteTemplate(org, ws, name);
});

test("a failing step and a missing base are refused with their codes", async () => {
  const name = unique("tsbad");
  await rejects(p.buildTemplate(org, ws, name, tar({ "d/Build": `FROM ${base}\nRUN exit 5\n` }), { dockerfile: "d/Build" }), 400, "build_step_failed");
  const page = await p.listTemplateBuilds(org, ws, { template: name });
  assert.deepEqual(page.items.map((b) => b.state), ["failed"]);
  await rejects(p.buildTemplate(org, ws, name, tar({ Dockerfile: "FROM paddock/not-here:1\n" })), 400, "base_image_not_found");
});

// Files: bytes and text round trips, stat, list, mkdir, rename, remove,
// and tar down and up.

import assert from "node:assert/strict";
import { before, test } from "node:test";
import { org, p, rejects, runningRuntime, ws } from "./env.mjs";

let id;
const dir = "/tmp/ts-files";
before(async () => {
  id = await runningRuntime("ts-main");
  await p.deleteFile(org, ws, id, dir, { recursive: true }).catch(() => undefined);
});

test("bytes and text round trip, and the sandbox sees them", async () => {
  const bytes = new Uint8Array(256 * 1024).map((_, i) => (i * 7) % 256);
  const info = await p.writeFile(org, ws, id, `${dir}/blob.bin`, bytes, { mode: "600" });
  assert.equal(info.size, bytes.length);
  assert.equal(info.mode, 0o600);
  assert.equal(info.type, "file");
  assert.deepEqual(await p.readFile(org, ws, id, `${dir}/blob.bin`), bytes);
  assert.deepEqual(await p.readFile(org, ws, id, `${dir}/blob.bin`, { offset: 10, length: 5 }), bytes.slice(10, 15));

  await p.writeFile(org, ws, id, `${dir}/hello.txt`, "héllo wörld\n");
  assert.equal(await p.readText(org, ws, id, `${dir}/hello.txt`), "héllo wörld\n");
  const r = await p.exec(org, ws, id, ["sha256sum", `${dir}/hello.txt`]);
  const want = await crypto.subtle.digest("SHA-256", new TextEncoder().encode("héllo wörld\n"));
  assert.equal(r.stdout.split(" ")[0], Buffer.from(want).toString("hex"));
});

test("a stream and a Blob are files too", async () => {
  const body = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode("part one, "));
      c.enqueue(new TextEncoder().encode("part two"));
      c.close();
    },
  });
  await p.writeFile(org, ws, id, `${dir}/streamed.txt`, body);
  assert.equal(await p.readText(org, ws, id, `${dir}/streamed.txt`), "part one, part two");
  await p.writeFile(org, ws, id, `${dir}/blob.txt`, new Blob(["a blob"]));
  assert.equal(await p.readText(org, ws, id, `${dir}/blob.txt`), "a blob");
});

test("stat, mkdir, list, rename and remove", async () => {
  const made = await p.mkdir(org, ws, id, `${dir}/a/b/c`, { parents: true });
  assert.equal(made.type, "directory");
  await p.writeFile(org, ws, id, `${dir}/a/b/c/leaf.txt`, "leaf");
  const st = await p.statFile(org, ws, id, `${dir}/a/b/c/leaf.txt`);
  assert.equal(st.size, 4);
  assert.equal(st.name, "leaf.txt");

  const flat = await p.listFiles(org, ws, id, `${dir}/a`);
  assert.deepEqual(flat.items.map((f) => f.name), ["b"]);
  const deep = await p.listFiles(org, ws, id, `${dir}/a`, { recursive: true });
  assert.ok(deep.items.some((f) => f.path === `${dir}/a/b/c/leaf.txt`), JSON.stringify(deep.items.map((f) => f.path)));

  const moved = await p.rename(org, ws, id, `${dir}/a/b/c/leaf.txt`, `${dir}/a/leaf.txt`);
  assert.equal(moved.path, `${dir}/a/leaf.txt`);
  await rejects(p.statFile(org, ws, id, `${dir}/a/b/c/leaf.txt`), 404, "file_not_found");
  await p.writeFile(org, ws, id, `${dir}/a/other.txt`, "x");
  await rejects(p.rename(org, ws, id, `${dir}/a/other.txt`, `${dir}/a/leaf.txt`, { no_overwrite: true }), 409, "file_exists");

  await p.deleteFile(org, ws, id, `${dir}/a/leaf.txt`);
  await rejects(p.readFile(org, ws, id, `${dir}/a/leaf.txt`), 404, "file_not_found");
  await p.deleteFile(org, ws, id, `${dir}/a`, { recursive: true });
  await rejects(p.statFile(org, ws, id, `${dir}/a`), 404, "file_not_found");
});

test("a tar of a directory goes down and back up elsewhere", async () => {
  await p.writeFile(org, ws, id, `${dir}/tree/x.txt`, "x content");
  await p.writeFile(org, ws, id, `${dir}/tree/sub/y.txt`, "y content");
  const tar = await p.downloadTar(org, ws, id, `${dir}/tree`);
  assert.ok(tar.length >= 1024 && tar.length % 512 === 0, `a tar is whole 512-byte blocks, got ${tar.length}`);
  const res = await p.uploadTar(org, ws, id, `${dir}/copy`, tar);
  assert.ok(res.entries >= 2);
  assert.equal(await p.readText(org, ws, id, `${dir}/copy/x.txt`), "x content");
  assert.equal(await p.readText(org, ws, id, `${dir}/copy/sub/y.txt`), "y content");
});

test("bad paths are typed errors", async () => {
  await rejects(p.readFile(org, ws, id, "relative/path"), 400, "invalid_path");
  await rejects(p.writeFile(org, ws, id, `${dir}/nope/x.txt`, "x", { parents: false }), 404, "file_not_found");
});

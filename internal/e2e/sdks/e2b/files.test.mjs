// Files through envd's /files and filesystem.Filesystem: write, read,
// list, stat, rename, remove, make dir, watch, large files, errors.
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { FileNotFoundError, FilesystemEventType, FileType, NotFoundError, Sandbox, SandboxError } from 'e2b'

import { killQuietly, sandboxTimeoutMs, template, waitFor } from './helpers.mjs'

/** @type {Sandbox} */
let sandbox

before(async () => {
  sandbox = await Sandbox.create(template, { timeoutMs: sandboxTimeoutMs, metadata: { suite: 'files' } })
})
after(() => killQuietly(sandbox.sandboxId))

/** @param {Uint8Array} data */
const sha256 = (data) => createHash('sha256').update(data).digest('hex')

describe('write and read', () => {
  test('text written is read back, relative to the home', async () => {
    const info = await sandbox.files.write('hello.txt', 'Hello, World!\nline two')
    assert.equal(info.name, 'hello.txt')
    assert.equal(info.type, FileType.FILE)
    assert.equal(info.path, '/home/user/hello.txt')
    assert.equal(await sandbox.files.read('hello.txt'), 'Hello, World!\nline two')
    assert.equal(await sandbox.files.read('/home/user/hello.txt'), 'Hello, World!\nline two')
    const cat = await sandbox.commands.run('cat /home/user/hello.txt; stat -c %U /home/user/hello.txt')
    assert.equal(cat.stdout, 'Hello, World!\nline twouser\n')
  })

  test('bytes round-trip unchanged, as bytes, blob and stream', async () => {
    const data = new Uint8Array(256 * 4).map((_, i) => i % 256)
    await sandbox.files.write('/tmp/bytes.bin', data)
    assert.deepEqual(await sandbox.files.read('/tmp/bytes.bin', { format: 'bytes' }), data)
    const blob = await sandbox.files.read('/tmp/bytes.bin', { format: 'blob' })
    assert.deepEqual(new Uint8Array(await blob.arrayBuffer()), data)
    const stream = await sandbox.files.read('/tmp/bytes.bin', { format: 'stream' })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    assert.deepEqual(new Uint8Array(Buffer.concat(chunks)), data)
  })

  test('many files in one write, parents made', async () => {
    const entries = Array.from({ length: 10 }, (_, i) => ({
      path: i % 2 === 0 ? `/tmp/multi/${i}/file${i}.txt` : `/home/user/multi/file${i}.txt`,
      data: `file ${i}`,
    }))
    const infos = await sandbox.files.write(entries)
    assert.equal(infos.length, entries.length)
    for (const [i, entry] of entries.entries()) {
      assert.equal(infos[i].path, entry.path)
      assert.equal(infos[i].name, `file${i}.txt`)
      assert.equal(await sandbox.files.read(entry.path), entry.data)
    }
    assert.deepEqual(await sandbox.files.write([]), [])
  })

  test('root writes where user may not', async () => {
    await sandbox.files.write('/root/secret.txt', 'root only', { user: 'root' })
    assert.equal(await sandbox.files.read('/root/secret.txt', { user: 'root' }), 'root only')
    const info = await sandbox.files.getInfo('/root/secret.txt', { user: 'root' })
    assert.equal(info.owner, 'root')
    await assert.rejects(sandbox.files.read('/root/secret.txt'), SandboxError)
  })

  test('a 64 MiB file round-trips', async () => {
    const data = randomBytes(64 * 1024 * 1024)
    // Minutes, not the SDK's default minute, for a slow machine.
    const slow = { requestTimeoutMs: 600_000 }
    const info = await sandbox.files.write('/tmp/large.bin', data, slow)
    assert.equal(info.path, '/tmp/large.bin')
    assert.equal((await sandbox.files.getInfo('/tmp/large.bin')).size, data.length)
    const sum = await sandbox.commands.run('sha256sum /tmp/large.bin', { timeoutMs: 600_000 })
    assert.equal(sum.stdout.split(' ')[0], sha256(data))
    const back = await sandbox.files.read('/tmp/large.bin', { format: 'bytes', ...slow })
    assert.equal(back.length, data.length)
    assert.equal(sha256(back), sha256(data))
  })

  test('a missing file is FileNotFoundError', async () => {
    await assert.rejects(sandbox.files.read('/tmp/nope/missing.txt'), FileNotFoundError)
    await assert.rejects(sandbox.files.getInfo('/tmp/nope/missing.txt'), FileNotFoundError)
    await assert.rejects(sandbox.files.list('/tmp/nope'), NotFoundError)
    await assert.rejects(sandbox.files.rename('/tmp/nope/a', '/tmp/nope/b'), FileNotFoundError)
    // Removing what is not there is not an error, as in envd.
    await sandbox.files.remove('/tmp/nope/missing.txt')
  })
})

describe('directories', () => {
  test('list walks to the depth asked', async () => {
    const root = 'tree'
    for (const dir of ['a/a1', 'a/a2', 'b/b1', 'b/b2']) {
      assert.equal(await sandbox.files.makeDir(`${root}/${dir}`), true)
    }
    await sandbox.files.write(`${root}/file.txt`, 'x')

    const one = await sandbox.files.list(root)
    assert.deepEqual(one.map((e) => [e.name, e.type, e.path]).sort(), [
      ['a', 'dir', '/home/user/tree/a'],
      ['b', 'dir', '/home/user/tree/b'],
      ['file.txt', 'file', '/home/user/tree/file.txt'],
    ])
    const two = await sandbox.files.list(root, { depth: 2 })
    assert.deepEqual(two.map((e) => e.path).sort(), [
      'a', 'a/a1', 'a/a2', 'b', 'b/b1', 'b/b2', 'file.txt',
    ].map((p) => `/home/user/tree/${p}`))
    const three = await sandbox.files.list(root, { depth: 3 })
    assert.equal(three.length, 7)
    await assert.rejects(sandbox.files.list(root, { depth: -1 }), /depth should be at least one/)
  })

  test('makeDir answers false when the directory exists', async () => {
    assert.equal(await sandbox.files.makeDir('/tmp/made/deep'), true)
    assert.equal(await sandbox.files.makeDir('/tmp/made/deep'), false)
    assert.equal((await sandbox.files.getInfo('/tmp/made/deep')).type, FileType.DIR)
  })

  test('exists, getInfo, rename and remove', async () => {
    await sandbox.files.write('stat-me.txt', 'twelve bytes')
    assert.equal(await sandbox.files.exists('stat-me.txt'), true)
    assert.equal(await sandbox.files.exists('never.txt'), false)

    const info = await sandbox.files.getInfo('stat-me.txt')
    assert.equal(info.name, 'stat-me.txt')
    assert.equal(info.path, '/home/user/stat-me.txt')
    assert.equal(info.type, FileType.FILE)
    assert.equal(info.size, 12)
    assert.equal(info.mode, 0o644)
    assert.equal(info.permissions, '-rw-r--r--')
    assert.equal(info.owner, 'user')
    assert.equal(info.group, 'user')
    assert.ok(info.modifiedTime instanceof Date)

    // Within one filesystem: /tmp is another one here, and a move across
    // filesystems fails in envd too (a rename(2)).
    const moved = await sandbox.files.rename('stat-me.txt', '/home/user/tree/moved.txt')
    assert.equal(moved.name, 'moved.txt')
    assert.equal(moved.path, '/home/user/tree/moved.txt')
    assert.equal(await sandbox.files.exists('stat-me.txt'), false)
    assert.equal(await sandbox.files.read('/home/user/tree/moved.txt'), 'twelve bytes')

    await sandbox.files.remove('/home/user/tree/moved.txt')
    assert.equal(await sandbox.files.exists('/home/user/tree/moved.txt'), false)
    const dir = await sandbox.files.getInfo('/tmp')
    assert.equal(dir.type, FileType.DIR)
    assert.ok(dir.size > 0)
    await sandbox.commands.run('ln -s /tmp /home/user/link-to-tmp')
    assert.equal((await sandbox.files.getInfo('link-to-tmp')).symlinkTarget, '/tmp')

    await sandbox.files.makeDir('/tmp/gone/inner')
    await sandbox.files.remove('/tmp/gone')
    assert.equal(await sandbox.files.exists('/tmp/gone'), false)
  })
})

describe('watch', () => {
  test('watchDir reports creates, writes, renames and removes', async () => {
    await sandbox.files.makeDir('watched')
    const events = []
    const handle = await sandbox.files.watchDir('watched', (e) => events.push(e))
    try {
      await sandbox.files.write('watched/w.txt', 'one')
      await waitFor(() => has(events, FilesystemEventType.WRITE, 'w.txt'), { what: 'a write event' })
      assert.ok(has(events, FilesystemEventType.CREATE, 'w.txt'), kinds(events))
      await sandbox.files.rename('watched/w.txt', 'watched/r.txt')
      await waitFor(() => has(events, FilesystemEventType.RENAME, 'w.txt'), { what: 'a rename event' })
      await sandbox.files.remove('watched/r.txt')
      await waitFor(() => has(events, FilesystemEventType.REMOVE, 'r.txt'), { what: 'a remove event' })
    } finally {
      await handle.stop()
    }
  })

  test('a recursive watch sees nested changes', async () => {
    await sandbox.files.makeDir('rwatch/nested')
    const events = []
    const handle = await sandbox.files.watchDir('rwatch', (e) => events.push(e), { recursive: true })
    try {
      await sandbox.files.write('rwatch/nested/deep.txt', 'x')
      await waitFor(() => has(events, FilesystemEventType.WRITE, 'nested/deep.txt'), { what: `a nested write event (${kinds(events)})` })
      await sandbox.files.makeDir('rwatch/later')
      await waitFor(() => has(events, FilesystemEventType.CREATE, 'later'), { what: 'a create event' })
    } finally {
      await handle.stop()
    }
  })

  test('a watch can carry each entry\'s info', async () => {
    await sandbox.files.makeDir('ewatch')
    const events = []
    const handle = await sandbox.files.watchDir('ewatch', (e) => events.push(e), { includeEntry: true })
    try {
      await sandbox.files.write('ewatch/e.txt', 'entry')
      const event = await waitFor(() => events.find((e) => e.type === FilesystemEventType.WRITE && e.name === 'e.txt'), { what: 'a write event' })
      assert.equal(event.entry?.name, 'e.txt')
      assert.equal(event.entry?.path, '/home/user/ewatch/e.txt')
      assert.equal(event.entry?.type, FileType.FILE)
    } finally {
      await handle.stop()
    }
  })

  test('watching a missing directory is FileNotFoundError, a file SandboxError', async () => {
    await assert.rejects(sandbox.files.watchDir('/tmp/no-such-dir', () => {}), FileNotFoundError)
    await sandbox.files.write('/tmp/not-a-dir.txt', 'x')
    await assert.rejects(sandbox.files.watchDir('/tmp/not-a-dir.txt', () => {}), SandboxError)
  })
})

/** @returns {boolean} whether events holds one of type for name. */
function has(events, type, name) {
  return events.some((e) => e.type === type && e.name === name)
}

/** @returns {string} the events, for a failure's message. */
function kinds(events) {
  return events.map((e) => `${e.type}:${e.name}`).join(', ')
}

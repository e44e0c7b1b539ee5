// A sandbox's life through the REST API: create, info, list with filters
// and pages, connect, pause, timeout, kill.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import { Sandbox, SandboxNotFoundError } from 'e2b'

import { listAll, newSandbox, waitFor } from './helpers.mjs'

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('create', () => {
  test('template, timeout, metadata and env vars hold', async (t) => {
    const timeoutMs = 300_000
    const before = Date.now()
    const { sandbox, testId } = await newSandbox(t, {
      timeoutMs,
      metadata: { purpose: 'create' },
      envs: { FOO: 'bar' },
    })
    assert.match(sandbox.sandboxId, uuid)
    assert.equal(await sandbox.isRunning(), true)

    const info = await sandbox.getInfo()
    assert.equal(info.sandboxId, sandbox.sandboxId)
    assert.equal(info.state, 'running')
    assert.deepEqual(info.metadata, { testId, purpose: 'create' })
    assert.ok(info.envdVersion, 'the answer carries envdVersion')
    // The end is the timeout after the start, give or take a slow create.
    const left = info.endAt.getTime() - before
    assert.ok(left > timeoutMs - 60_000 && left <= timeoutMs + 120_000, `endAt ${info.endAt.toISOString()} is not about ${timeoutMs} ms away`)

    const echo = await sandbox.commands.run('echo $FOO')
    assert.equal(echo.stdout, 'bar\n')
  })

  test('without a template the default one serves', async (t) => {
    const testId = randomUUID()
    const sandbox = await Sandbox.create({ metadata: { testId }, timeoutMs: 300_000 })
    t.after(() => Sandbox.kill(sandbox.sandboxId))
    const info = await sandbox.getInfo()
    assert.ok(info.templateId, 'a template id')
    const os = await sandbox.commands.run('. /etc/os-release && echo $ID')
    assert.equal(os.stdout, 'debian\n')
  })
})

describe('list', () => {
  test('filters by metadata and by state', async (t) => {
    const { sandbox, testId } = await newSandbox(t)
    const mine = await listAll({ query: { metadata: { testId } } })
    assert.deepEqual(mine.map((s) => s.sandboxId), [sandbox.sandboxId])
    assert.equal(mine[0].state, 'running')
    assert.deepEqual(mine[0].metadata, { testId })

    const running = await listAll({ query: { metadata: { testId }, state: ['running'] } })
    assert.deepEqual(running.map((s) => s.sandboxId), [sandbox.sandboxId])
    const paused = await listAll({ query: { metadata: { testId }, state: ['paused'] } })
    assert.deepEqual(paused, [])

    const none = await listAll({ query: { metadata: { testId: randomUUID() } } })
    assert.deepEqual(none, [])
  })

  test('filters by template and start time', async (t) => {
    const { sandbox, testId } = await newSandbox(t)
    const info = await sandbox.getInfo()
    const byTemplate = await listAll({ query: { metadata: { testId }, template: info.templateId } })
    assert.deepEqual(byTemplate.map((s) => s.sandboxId), [sandbox.sandboxId])
    assert.deepEqual(await listAll({ query: { metadata: { testId }, template: 'unknown-template' } }), [])

    const since = await listAll({ query: { metadata: { testId }, startedAfter: info.startedAt } })
    assert.deepEqual(since.map((s) => s.sandboxId), [sandbox.sandboxId])
    const later = new Date(info.startedAt.getTime() + 1_000)
    assert.deepEqual(await listAll({ query: { metadata: { testId }, startedAfter: later } }), [])
  })

  test('pages with a limit', async (t) => {
    const { sandbox: older, testId } = await newSandbox(t)
    const { sandbox: newer } = await newSandbox(t, { metadata: { testId } })

    const paginator = Sandbox.list({ limit: 1, query: { metadata: { testId }, state: ['running'] } })
    const first = await paginator.nextItems()
    assert.equal(first.length, 1)
    assert.equal(first[0].state, 'running')
    assert.equal(paginator.hasNext, true)
    assert.ok(paginator.nextToken, 'a next token')

    const second = await paginator.nextItems()
    assert.equal(second.length, 1)
    assert.equal(paginator.hasNext, false)
    assert.equal(paginator.nextToken, undefined)
    assert.deepEqual([first[0].sandboxId, second[0].sandboxId].sort(), [older.sandboxId, newer.sandboxId].sort())
  })

  // E2B lists newest first by default (order=desc), oldest first with
  // order=asc.
  test('lists newest first, or oldest first when asked', async (t) => {
    const { sandbox: older, testId } = await newSandbox(t)
    const { sandbox: newer } = await newSandbox(t, { metadata: { testId } })
    const all = await listAll({ query: { metadata: { testId } } })
    assert.deepEqual(all.map((s) => s.sandboxId), [newer.sandboxId, older.sandboxId])
    const asc = await listAll({ query: { metadata: { testId } }, order: 'asc' })
    assert.deepEqual(asc.map((s) => s.sandboxId), [older.sandboxId, newer.sandboxId])
  })
})

describe('connect', () => {
  test('a second client reaches the same sandbox', async (t) => {
    const { sandbox } = await newSandbox(t)
    await sandbox.files.write('/tmp/marker', 'from the first client')

    const again = await Sandbox.connect(sandbox.sandboxId)
    assert.equal(again.sandboxId, sandbox.sandboxId)
    assert.equal(await again.isRunning(), true)
    assert.equal(await again.files.read('/tmp/marker'), 'from the first client')
  })

  test('connect extends a timeout and never shortens it', async (t) => {
    const { sandbox } = await newSandbox(t, { timeoutMs: 300_000 })
    const before = await sandbox.getInfo()

    await Sandbox.connect(sandbox.sandboxId, { timeoutMs: 10_000 })
    const unchanged = await sandbox.getInfo()
    assert.equal(unchanged.endAt.getTime(), before.endAt.getTime())

    await sandbox.connect({ timeoutMs: 900_000 })
    const extended = await sandbox.getInfo()
    assert.ok(extended.endAt.getTime() > before.endAt.getTime(), `endAt ${extended.endAt.toISOString()} not after ${before.endAt.toISOString()}`)
  })

  test('pause stops it, connect resumes it with its files', async (t) => {
    const { sandbox, testId } = await newSandbox(t)
    await sandbox.files.write('/home/user/kept.txt', 'kept')
    await sandbox.pause()
    assert.equal(await sandbox.isRunning(), false)
    const paused = await listAll({ query: { metadata: { testId }, state: ['paused'] } })
    assert.deepEqual(paused.map((s) => [s.sandboxId, s.state]), [[sandbox.sandboxId, 'paused']])

    const resumed = await Sandbox.connect(sandbox.sandboxId)
    assert.equal(await resumed.isRunning(), true)
    assert.equal(await resumed.files.read('/home/user/kept.txt'), 'kept')
    assert.equal((await resumed.getInfo()).state, 'running')
  })
})

test('metrics come in', async (t) => {
  const { sandbox } = await newSandbox(t)
  const metrics = await waitFor(async () => {
    const m = await sandbox.getMetrics()
    return m.length > 0 && m
  }, { timeoutMs: 120_000, what: 'a metric' })
  const m = metrics[0]
  for (const field of ['cpuCount', 'cpuUsedPct', 'memUsed', 'memTotal', 'diskUsed', 'diskTotal']) {
    assert.equal(typeof m[field], 'number', `${field} is ${m[field]}`)
  }
  assert.ok(m.memTotal > 0 && m.cpuCount > 0)
  assert.ok(m.timestamp instanceof Date)
})

describe('kill', () => {
  test('a killed sandbox is gone from lists, info and connect', async (t) => {
    const { sandbox, testId } = await newSandbox(t)
    assert.equal(await sandbox.kill(), true)
    assert.equal(await sandbox.isRunning(), false)

    assert.deepEqual(await listAll({ query: { metadata: { testId } } }), [])
    await assert.rejects(Sandbox.getInfo(sandbox.sandboxId), SandboxNotFoundError)
    await assert.rejects(Sandbox.connect(sandbox.sandboxId), SandboxNotFoundError)
    assert.equal(await Sandbox.kill(sandbox.sandboxId), false)
  })

  test('a sandbox that never was is not found', async () => {
    const missing = randomUUID()
    await assert.rejects(Sandbox.getInfo(missing), SandboxNotFoundError)
    await assert.rejects(Sandbox.connect(missing), SandboxNotFoundError)
    assert.equal(await Sandbox.kill(missing), false)
  })
})

describe('timeout', () => {
  test('a shortened timeout ends the sandbox', async (t) => {
    const { sandbox, testId } = await newSandbox(t)
    await sandbox.setTimeout(3_000)
    const info = await sandbox.getInfo()
    assert.ok(info.endAt.getTime() < Date.now() + 60_000, `endAt ${info.endAt.toISOString()} was not shortened`)

    // Polled through envd's /health, which is no activity: polling does
    // not keep the sandbox past its timeout.
    await waitFor(async () => !(await sandbox.isRunning()), { timeoutMs: 120_000, what: 'the sandbox to stop running' })
    assert.equal((await sandbox.getInfo()).state, 'paused')
    const running = await listAll({ query: { metadata: { testId }, state: ['running'] } })
    assert.deepEqual(running, [])
  })

  test('a timeout can be shortened then lengthened', async (t) => {
    const { sandbox } = await newSandbox(t)
    await sandbox.setTimeout(30_000)
    await sandbox.setTimeout(600_000)
    const info = await sandbox.getInfo()
    assert.ok(info.endAt.getTime() > Date.now() + 300_000, `endAt ${info.endAt.toISOString()} was not lengthened`)
    assert.equal(await sandbox.isRunning(), true)
  })
})

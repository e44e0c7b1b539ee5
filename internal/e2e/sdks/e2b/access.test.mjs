// Keys: a wrong key is refused; a key of another org sees and reaches
// none of this org's sandboxes, through the REST API or envd.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { AuthenticationError, Sandbox, SandboxNotFoundError } from 'e2b'

import { killQuietly, sandboxTimeoutMs, template } from './helpers.mjs'

/** A key of another org with its own workspace (set by the harness). */
const foreignKey = process.env.E2B_FOREIGN_API_KEY
const sandboxUrl = process.env.E2B_SANDBOX_URL

/** @type {Sandbox} */
let sandbox

before(async () => {
  sandbox = await Sandbox.create(template, { timeoutMs: sandboxTimeoutMs, metadata: { suite: 'access' } })
})
after(() => killQuietly(sandbox.sandboxId))

test('a wrong key is AuthenticationError', async () => {
  const apiKey = 'pdk_' + 'x'.repeat(40)
  await assert.rejects(Sandbox.create(template, { apiKey }), AuthenticationError)
  await assert.rejects(Sandbox.list({ apiKey }).nextItems(), AuthenticationError)
  await assert.rejects(Sandbox.getInfo(sandbox.sandboxId, { apiKey }), AuthenticationError)
})

test('another org\'s key neither lists, connects to nor kills the sandbox', { skip: !foreignKey && 'E2B_FOREIGN_API_KEY is not set' }, async () => {
  const opts = { apiKey: foreignKey }
  const all = []
  const paginator = Sandbox.list(opts)
  while (paginator.hasNext) all.push(...(await paginator.nextItems()))
  assert.ok(!all.some((s) => s.sandboxId === sandbox.sandboxId), 'the foreign key lists the sandbox')
  await assert.rejects(Sandbox.getInfo(sandbox.sandboxId, opts), SandboxNotFoundError)
  await assert.rejects(Sandbox.connect(sandbox.sandboxId, opts), SandboxNotFoundError)
  await assert.rejects(Sandbox.setTimeout(sandbox.sandboxId, 1_000, opts), SandboxNotFoundError)
  assert.equal(await Sandbox.kill(sandbox.sandboxId, opts), false)
  assert.equal(await sandbox.isRunning(), true)
})

test('envd answers 401 without the sandbox\'s own access token', { skip: !foreignKey && 'E2B_FOREIGN_API_KEY is not set' }, async (t) => {
  const theirs = await Sandbox.create(template, { apiKey: foreignKey, timeoutMs: sandboxTimeoutMs })
  t.after(() => Sandbox.kill(theirs.sandboxId, { apiKey: foreignKey }))
  const health = (token) => fetch(`${sandboxUrl}/health`, {
    headers: {
      'E2b-Sandbox-Id': sandbox.sandboxId,
      'E2b-Sandbox-Port': '49983',
      ...(token ? { 'X-Access-Token': token } : {}),
      'X-API-KEY': foreignKey,
    },
  })
  assert.equal((await health(undefined)).status, 401)
  assert.equal((await health(theirs.envdAccessToken)).status, 401)
  assert.equal((await health('not-a-token')).status, 401)
  // The sandbox's own token passes.
  assert.equal((await health(sandbox.envdAccessToken)).status, 204)
  // A Connect call with the other org's sandbox's token is refused too.
  const list = await fetch(`${sandboxUrl}/filesystem.Filesystem/ListDir`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'Connect-Protocol-Version': '1',
      'E2b-Sandbox-Id': sandbox.sandboxId,
      'E2b-Sandbox-Port': '49983',
      'X-Access-Token': theirs.envdAccessToken,
    },
    body: JSON.stringify({ path: '/home/user', depth: 1 }),
  })
  assert.equal(list.status, 401)
})

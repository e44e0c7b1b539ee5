// Shared helpers of the e2b SDK's compatibility tests. The environment
// points the SDK at a live paddock: E2B_API_URL, E2B_SANDBOX_URL and
// E2B_API_KEY (set by internal/e2e/sdks/e2b_test.go).
import { randomUUID } from 'node:crypto'
import { Sandbox } from 'e2b'

/** The template every test sandbox is made from: E2B's default. */
export const template = process.env.E2B_TEST_TEMPLATE || 'base'

/** A sandbox's lifetime in the tests: long enough for a slow machine. */
export const sandboxTimeoutMs = 600_000

/**
 * Creates a sandbox labelled with a fresh test id (metadata testId) and
 * kills it when the test ends. Returns the sandbox and its test id.
 * @param {import('node:test').TestContext} t
 * @param {import('e2b').SandboxOpts} [opts]
 * @returns {Promise<{sandbox: Sandbox, testId: string}>}
 */
export async function newSandbox(t, opts = {}) {
  const testId = randomUUID()
  const sandbox = await Sandbox.create(template, {
    timeoutMs: sandboxTimeoutMs,
    ...opts,
    metadata: { testId, ...(opts.metadata ?? {}) },
  })
  t.after(() => killQuietly(sandbox.sandboxId))
  return { sandbox, testId }
}

/**
 * Kills a sandbox, ignoring that it is already gone.
 * @param {string} sandboxId
 */
export async function killQuietly(sandboxId) {
  try {
    await Sandbox.kill(sandboxId)
  } catch (err) {
    console.error(`kill ${sandboxId}: ${err}`)
  }
}

/**
 * Waits until check() is truthy, polling every 200 ms, for at most
 * timeoutMs; fails with what was last seen otherwise.
 * @template T
 * @param {() => Promise<T> | T} check
 * @param {{timeoutMs?: number, what?: string}} [opts]
 * @returns {Promise<T>}
 */
export async function waitFor(check, { timeoutMs = 60_000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs
  let last
  for (;;) {
    last = await check()
    if (last) return last
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * Collects every page of a list of sandboxes.
 * @param {import('e2b').SandboxListOpts} opts
 * @returns {Promise<import('e2b').SandboxInfo[]>}
 */
export async function listAll(opts) {
  const paginator = Sandbox.list(opts)
  const all = []
  while (paginator.hasNext) {
    all.push(...(await paginator.nextItems()))
  }
  return all
}

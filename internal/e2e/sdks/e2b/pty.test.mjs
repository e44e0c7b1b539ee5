// Terminals through envd's process.Process with a PTY: create, input,
// resize, kill.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { CommandExitError, Sandbox } from 'e2b'

import { killQuietly, sandboxTimeoutMs, template, waitFor } from './helpers.mjs'

/** @type {Sandbox} */
let sandbox

before(async () => {
  sandbox = await Sandbox.create(template, { timeoutMs: sandboxTimeoutMs, metadata: { suite: 'pty' } })
})
after(() => killQuietly(sandbox.sandboxId))

/**
 * Opens a terminal whose output collects into the returned object's text.
 * @param {import('e2b').PtyCreateOpts | object} opts
 */
async function openTerminal(opts = {}) {
  const decoder = new TextDecoder()
  const out = { text: '' }
  const handle = await sandbox.pty.create({
    cols: 80,
    rows: 24,
    ...opts,
    onData: (data) => {
      out.text += decoder.decode(data, { stream: true })
    },
  })
  return { handle, out }
}

test('a terminal takes input and shows its output', async () => {
  const { handle, out } = await openTerminal({ envs: { ABC: '123' } })
  assert.ok(handle.pid > 0)
  await sandbox.pty.sendInput(handle.pid, new TextEncoder().encode('echo "[$ABC] $(tty)"; exit\n'))
  const result = await handle.wait()
  assert.equal(result.exitCode, 0)
  assert.match(out.text, /\[123\] \/dev\/pts\/\d+/)
})

test('a terminal is an interactive bash of user in its home', async () => {
  const { handle, out } = await openTerminal()
  await sandbox.pty.sendInput(handle.pid, new TextEncoder().encode('echo "who=$(whoami) at=$(pwd) term=$TERM"; exit\n'))
  await handle.wait()
  assert.match(out.text, /who=user at=\/home\/user term=xterm/)
})

test('resize changes the columns the shell sees', async () => {
  const { handle, out } = await openTerminal()
  const input = (s) => sandbox.pty.sendInput(handle.pid, new TextEncoder().encode(s))
  await input('echo "cols=$(tput cols)"\n')
  await waitFor(() => out.text.includes('cols=80'), { what: 'cols=80' })
  await sandbox.pty.resize(handle.pid, { cols: 123, rows: 40 })
  await input('echo "size=$(stty size)"; exit\n')
  const result = await handle.wait()
  assert.equal(result.exitCode, 0)
  assert.match(out.text, /size=40 123/)
})

test('kill ends a terminal; killing a missing one answers false', async () => {
  const { handle } = await openTerminal()
  assert.equal(await sandbox.pty.kill(handle.pid), true)
  await assert.rejects(handle.wait(), CommandExitError)
  await assert.rejects(sandbox.commands.run(`kill -0 ${handle.pid}`), CommandExitError)
  assert.equal(await sandbox.pty.kill(999_999), false)
})

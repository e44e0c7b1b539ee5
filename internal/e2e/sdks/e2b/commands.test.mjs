// Commands through envd's process.Process: run, stream, background,
// stdin, signals, env vars, cwd, users, list, connect, timeouts.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { CommandExitError, NotFoundError, Sandbox, TimeoutError } from 'e2b'

import { killQuietly, sandboxTimeoutMs, template, waitFor } from './helpers.mjs'

/** @type {Sandbox} */
let sandbox

before(async () => {
  sandbox = await Sandbox.create(template, { timeoutMs: sandboxTimeoutMs, metadata: { suite: 'commands' } })
})
after(() => killQuietly(sandbox.sandboxId))

describe('run', () => {
  test('answers stdout and exit code 0', async () => {
    const text = 'Hello, World! !@#$%^&*()_+'
    const result = await sandbox.commands.run(`echo "${text}"`)
    assert.equal(result.exitCode, 0)
    assert.equal(result.stdout, `${text}\n`)
    assert.equal(result.stderr, '')
  })

  test('a failing command throws CommandExitError with its code and output', async () => {
    const err = await sandbox.commands.run('echo out; echo oops >&2; exit 3').then(
      () => assert.fail('no error'),
      (e) => e,
    )
    assert.ok(err instanceof CommandExitError, `got ${err}`)
    assert.equal(err.exitCode, 3)
    assert.equal(err.stdout, 'out\n')
    assert.equal(err.stderr, 'oops\n')
  })

  test('streams stdout and stderr as they come', async () => {
    const out = []
    const errs = []
    const result = await sandbox.commands.run('for i in 1 2 3; do echo out$i; echo err$i >&2; sleep 0.1; done', {
      onStdout: (data) => out.push(data),
      onStderr: (data) => errs.push(data),
    })
    assert.equal(out.join(''), 'out1\nout2\nout3\n')
    assert.equal(errs.join(''), 'err1\nerr2\nerr3\n')
    assert.ok(out.length >= 2, `stdout came in ${out.length} chunk(s), not streamed`)
    assert.equal(result.stdout, 'out1\nout2\nout3\n')
  })

  test('env vars are the command\'s own', async () => {
    const scoped = await sandbox.commands.run('echo $FOO', { envs: { FOO: 'bar' } })
    assert.equal(scoped.stdout, 'bar\n')
    const py = await sandbox.commands.run('python3 -c "import os; print(os.environ[\'FOO\'])"', { envs: { FOO: 'baz' } })
    assert.equal(py.stdout, 'baz\n')
    const next = await sandbox.commands.run('echo "[$FOO]"')
    assert.equal(next.stdout, '[]\n')
  })

  test('cwd defaults to the user\'s home and can be set', async () => {
    assert.equal((await sandbox.commands.run('pwd')).stdout, '/home/user\n')
    assert.equal((await sandbox.commands.run('pwd', { cwd: '/tmp' })).stdout, '/tmp\n')
  })

  test('runs as user by default and as root when asked', async () => {
    const user = await sandbox.commands.run('whoami; id -u; echo $HOME')
    assert.equal(user.stdout, 'user\n1000\n/home/user\n')
    const root = await sandbox.commands.run('whoami; id -u', { user: 'root' })
    assert.equal(root.stdout, 'root\n0\n')
    await sandbox.commands.run('touch /root/only-root', { user: 'root' })
    await assert.rejects(sandbox.commands.run('touch /root/not-user'), CommandExitError)
  })

  test('a command past its timeout ends with TimeoutError', async () => {
    await assert.rejects(sandbox.commands.run('sleep 30', { timeoutMs: 1_000 }), TimeoutError)
    const handle = await sandbox.commands.run('sleep 30', { timeoutMs: 1_000, background: true })
    await assert.rejects(handle.wait(), TimeoutError)
  })
})

describe('background', () => {
  test('a background command runs on and is waited for', async () => {
    const handle = await sandbox.commands.run('sleep 0.5; echo done', { background: true })
    assert.ok(handle.pid > 0)
    const result = await handle.wait()
    assert.equal(result.exitCode, 0)
    assert.equal(result.stdout, 'done\n')
  })

  test('stdin reaches the command; closing it ends cat', async () => {
    const handle = await sandbox.commands.run('cat', { background: true, stdin: true })
    await handle.sendStdin('Hello,\n')
    await sandbox.commands.sendStdin(handle.pid, new TextEncoder().encode('World!'))
    await waitFor(() => handle.stdout === 'Hello,\nWorld!', { what: 'cat to echo its stdin' })
    await handle.closeStdin()
    const result = await handle.wait()
    assert.equal(result.exitCode, 0)
    assert.equal(result.stdout, 'Hello,\nWorld!')
  })

  test('kill ends a process; killing a missing one answers false', async () => {
    const handle = await sandbox.commands.run('sleep 600', { background: true })
    assert.equal(await sandbox.commands.kill(handle.pid), true)
    await assert.rejects(handle.wait(), CommandExitError)
    await assert.rejects(sandbox.commands.run(`kill -0 ${handle.pid}`), CommandExitError)
    assert.equal(await sandbox.commands.kill(999_999), false)

    const viaHandle = await sandbox.commands.run('sleep 600', { background: true })
    assert.equal(await viaHandle.kill(), true)
    await assert.rejects(viaHandle.wait(), CommandExitError)
  })

  test('list shows the running commands', async (t) => {
    const a = await sandbox.commands.run('sleep 600', { background: true, envs: { MARK: 'a' }, cwd: '/tmp' })
    const b = await sandbox.commands.run('sleep 601', { background: true })
    t.after(() => Promise.all([a.kill(), b.kill()]))
    const processes = await sandbox.commands.list()
    const byPid = new Map(processes.map((p) => [p.pid, p]))
    assert.ok(byPid.has(a.pid) && byPid.has(b.pid), `pids ${a.pid}, ${b.pid} not in ${[...byPid.keys()]}`)
    const pa = byPid.get(a.pid)
    assert.equal(pa.cmd, '/bin/bash')
    assert.ok(pa.args.some((arg) => arg.includes('sleep 600')), `args ${pa.args}`)
    assert.equal(pa.cwd, '/tmp')
    assert.equal(pa.envs.MARK, 'a')
  })

  test('connect follows a running command\'s output to its end', async () => {
    const handle = await sandbox.commands.run('sleep 1; for i in 1 2 3; do echo tick$i; sleep 0.2; done', { background: true })
    const seen = []
    const attached = await sandbox.commands.connect(handle.pid, { onStdout: (d) => seen.push(d) })
    assert.equal(attached.pid, handle.pid)
    const result = await attached.wait()
    assert.equal(result.exitCode, 0)
    assert.equal(seen.join(''), 'tick1\ntick2\ntick3\n')
  })

  test('connect to a missing process is NotFoundError', async () => {
    await assert.rejects(sandbox.commands.connect(999_999), NotFoundError)
  })
})

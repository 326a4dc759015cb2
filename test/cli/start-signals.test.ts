/**
 * `cod start` stops on SIGTERM and SIGINT whatever its stdout and stderr are doing: closed at
 * the moment of the signal (`cod start | tee log`, then Ctrl-C: tee goes first), closed long
 * before (a broken pipe: every write is EPIPE), or full (a pipe nobody reads). Each case runs the
 * real command in a child process (`node --import tsx src/cli/cod.ts start`) on the simulator,
 * every port 0. Before the fix, a closed or full stdout kept the daemon running forever: pino's
 * sonic-boom retried its exit-time write in a loop (src/util/stdout-lines.ts).
 *
 * stopWithin (the stop's deadline, a second signal) runs in this process, its clock a promise.
 *
 * stderr: the running daemon writes nothing there itself, only Node does (warnings, a crash), so
 * those cases load test/cli/stderr-at-signal.ts, which writes 300 KB to stderr at the signal.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent, fetch } from 'undici'
import t, { type Test } from 'tap'
import { stopWithin } from '../../src/cli/start.js'
import { COD_ENTRY, ROOT, tempDir } from './run-cod.js'

// Six daemons one after another on a loaded 2-core machine: generous, still bounded.
t.setTimeout(240_000)

/** A stop of a few seconds is expected; past this the daemon is taken as hung (the bug: forever). */
const EXIT_WITHIN_MS = 15_000

function configFile(t: Test): string {
  const dir = tempDir(t, 'signals')
  cpSync(join(ROOT, 'conf/domains'), join(dir, 'domains'), { recursive: true })
  const file = join(dir, 'daemon.yaml')
  writeFileSync(
    file,
    `http: { host: 127.0.0.1, port: 0 }
freeswitch: { mode: simulator, host: 127.0.0.1, port: 0, password: ClueCon }
xml_curl: { host: 127.0.0.1, port: 0, username: freeswitch, password: change-me-xml-curl }
directory: domains
journal: { dir: journal }
log: { level: info }
`,
  )
  return file
}

interface Started {
  readonly child: ChildProcess
  readonly baseUrl: string
  /** stdout read so far (until `ready`, then whatever the case reads). */
  readonly out: { text: string }
  /** Resolves with how the child ended: its code and signal, or `hung` after EXIT_WITHIN_MS from the call. */
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'hung'>
}

/** `cod start` in a child; resolves once its log said the FreeSWITCH link is up. */
async function startCod(t: Test, opts: { preload?: string } = {}): Promise<Started> {
  const { NODE_OPTIONS: _runnerHooks, ...env } = process.env
  const args = ['--import', 'tsx', ...(opts.preload === undefined ? [] : ['--import', opts.preload]), COD_ENTRY, 'start', '--config', configFile(t)]
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited
    }
  })
  const out = { text: '' }
  let err = ''
  const onErr = (c: Buffer) => (err += c.toString('utf8'))
  child.stderr?.on('data', onErr)
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cod start: not up after 60 s; stderr: ${err.slice(-1000)}`)), 60_000)
    const onData = (c: Buffer) => {
      out.text += c.toString('utf8')
      const url = /"url":"(http:\/\/[^"]+)","xml_curl"/.exec(out.text)?.[1]
      if (url !== undefined && out.text.includes('"msg":"FreeSWITCH link up"')) {
        clearTimeout(timer)
        child.stdout?.off('data', onData)
        resolve(url)
      }
    }
    child.stdout?.on('data', onData)
    child.once('exit', (code) => reject(new Error(`cod start exited (${code}) before it was up; stderr: ${err.slice(-1000)}`)))
  })
  // From here each case decides what becomes of stderr.
  child.stderr?.off('data', onErr)
  return {
    child,
    baseUrl,
    out,
    exit: () => {
      let timer: NodeJS.Timeout | undefined
      const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), EXIT_WITHIN_MS)))
      return Promise.race([exited, hung]).finally(() => clearTimeout(timer))
    },
  }
}

/** Requests that each log a line of ~450 bytes (a 404 on a long path): enough of them fill any pipe's buffer. */
async function logLines(baseUrl: string, count: number): Promise<void> {
  const dispatcher = new Agent({ connections: 8 })
  const path = `/${'x'.repeat(200)}`
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      const r = await fetch(`${baseUrl}${path}`, { dispatcher })
      await r.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  await dispatcher.close()
}

/** A promise and its resolve (a deadline or a signal the test decides). */
function manual<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve: (v: T) => void = () => undefined
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

t.test('stopWithin: a stop that hangs ends at the deadline, or at a second signal', async (t) => {
  const never = () => new Promise<void>(() => undefined)
  const deadline = manual<void>()
  const pending = stopWithin(never, deadline.promise, manual<string>().promise)
  deadline.resolve()
  t.same(await pending, { kind: 'deadline' })
  const second = manual<string>()
  const cut = stopWithin(never, manual<void>().promise, second.promise)
  second.resolve('SIGINT')
  t.same(await cut, { kind: 'signal', signal: 'SIGINT' })
  t.same(await stopWithin(async () => undefined, manual<void>().promise, manual<string>().promise), { kind: 'stopped' })
  const failed = await stopWithin(() => Promise.reject(new Error('boom')), manual<void>().promise, manual<string>().promise)
  t.equal(failed.kind, 'failed')
})

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} with stdout closed at the same moment (cod start | tee, Ctrl-C): exit 0 at once`, async (t) => {
    const d = await startCod(t)
    d.child.kill(signal)
    d.child.stdout?.destroy()
    t.same(await d.exit(), { code: 0, signal: null })
  })
}

t.test('SIGTERM long after stdout broke (every line since was EPIPE): exit 0', async (t) => {
  const d = await startCod(t)
  d.child.stdout?.destroy()
  // Lines written into the broken pipe while the daemon runs on.
  await logLines(d.baseUrl, 20)
  const health = await fetch(`${d.baseUrl}/healthz`)
  t.equal(health.status, 200, 'the daemon serves on without a stdout')
  d.child.kill('SIGTERM')
  t.same(await d.exit(), { code: 0, signal: null })
})

t.test('SIGTERM with stdout full (a pipe nobody reads): the daemon serves on, then exits 0', async (t) => {
  const d = await startCod(t)
  // Nobody reads from now on: the pipe's buffer fills with the lines below.
  d.child.stdout?.pause()
  await logLines(d.baseUrl, 1500)
  const health = await fetch(`${d.baseUrl}/healthz`)
  t.equal(health.status, 200, 'a full stdout holds no request')
  d.child.kill('SIGTERM')
  t.same(await d.exit(), { code: 0, signal: null })
  // The proof that the pipe was full: the last lines could not be written.
  const rest = await new Promise<string>((resolve) => {
    let text = ''
    d.child.stdout?.on('data', (c: Buffer) => (text += c.toString('utf8')))
    d.child.stdout?.once('close', () => resolve(text))
    d.child.stdout?.resume()
  })
  t.notMatch(rest, /"msg":"stopped"/, 'the pipe was still full at the exit (its last lines lost, not waited for)')
})

const STDERR_WRITER = './test/cli/stderr-at-signal.ts'

t.test('SIGTERM with stderr closed, written to at the signal: exit 0', async (t) => {
  const d = await startCod(t, { preload: STDERR_WRITER })
  d.child.stderr?.destroy()
  d.child.kill('SIGTERM')
  t.same(await d.exit(), { code: 0, signal: null })
})

t.test('SIGINT with stderr full (nobody reads), written to at the signal: exit 0', async (t) => {
  const d = await startCod(t, { preload: STDERR_WRITER })
  d.child.stderr?.pause()
  d.child.kill('SIGINT')
  t.same(await d.exit(), { code: 0, signal: null })
})

/**
 * Child processes of the fault suite (the daemon, the standalone simulator), started as operators
 * start them (`node --import tsx src/main.ts` / `src/sim/main.ts`), their JSON log lines kept.
 *
 * Every child is stopped by its PID whatever happens to the test: the test's teardown kills it,
 * a hook on this process's exit (and on the signals the tap runner sends at a timeout) kills
 * whatever is still registered, and a parent-death signal covers this process being SIGKILLed,
 * so that no daemon or frozen simulator outlives a failed run.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { collectJsonLines } from './child.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/**
 * Where util-linux's setpriv exists, each child is started through it with a parent-death signal
 * (prctl PR_SET_PDEATHSIG, then exec: the pid stays the child's own): even if this process is
 * SIGKILLed (a runner's hard timeout), the kernel kills the children, which no hook could do.
 */
const SETPRIV = '/usr/bin/setpriv'
const launcher = (args: readonly string[]): [string, string[]] =>
  existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'KILL', '--', process.execPath, ...args]] : [process.execPath, [...args]]

const alive = new Map<number, ChildProcess>()

const killAll = (): void => {
  for (const [pid, child] of alive) {
    try {
      // A stopped process (SIGSTOP) dies on SIGKILL too.
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
    alive.delete(pid)
    child.stdout?.destroy()
    child.stderr?.destroy()
  }
}

let hooked = false
function hookExit(): void {
  if (hooked) return
  hooked = true
  process.on('exit', killAll)
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAll()
      process.removeListener(sig, onSignal)
      // Keep the signal's meaning: the default action (or the runner's own handler) follows.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig)
    }
    process.on(sig, onSignal)
  }
}

export type LogLine = Record<string, unknown>

export interface ManagedProcess {
  readonly name: string
  readonly pid: number
  readonly lines: LogLine[]
  readonly stderr: string[]
  /** Resolves once the process has exited (code, or null after a signal). */
  readonly exited: Promise<number | null>
  isRunning(): boolean
  signal(sig: NodeJS.Signals): void
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>
  /** SIGTERM, waits up to `ms`, then SIGKILL; resolves the exit code (null: killed). */
  stop(ms?: number): Promise<number | null>
  /** Resolves the `n`th log line whose msg is `msg` (rejects when the process exits first or after `ms`). */
  waitLog(msg: string, n?: number, ms?: number): Promise<LogLine>
  count(msg: string): number
}

export function spawnTsx(t: Test, name: string, entry: string, args: readonly string[]): ManagedProcess {
  hookExit()
  const [command, argv] = launcher(['--import', 'tsx', entry, ...args])
  const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  if (child.pid === undefined) throw new Error(`${name}: spawn failed`)
  const pid = child.pid
  alive.set(pid, child)
  const lines: LogLine[] = []
  const stderr: string[] = []
  collectJsonLines(child.stdout, lines)
  child.stderr?.on('data', (c: Buffer) => stderr.push(c.toString('utf8')))
  let running = true
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running = false
      alive.delete(pid)
      resolve(code)
    }),
  )
  const kill = async (): Promise<void> => {
    if (running) child.kill('SIGKILL')
    await exited
  }
  t.teardown(kill)
  const count = (msg: string): number => lines.filter((l) => l.msg === msg).length
  return {
    name,
    pid,
    lines,
    stderr,
    exited,
    isRunning: () => running,
    signal: (sig) => {
      if (running) child.kill(sig)
    },
    kill,
    async stop(ms = 15000) {
      if (!running) return exited
      child.kill('SIGCONT')
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), ms)
      const code = await exited
      clearTimeout(timer)
      return code
    },
    waitLog(msg, n = 1, ms = 20000) {
      return new Promise((resolve, reject) => {
        const deadline = Date.now() + ms
        const tick = (): void => {
          const found = lines.filter((l) => l.msg === msg)[n - 1]
          if (found !== undefined) return resolve(found)
          if (!running || Date.now() > deadline) {
            return reject(new Error(`${name} (pid ${pid}): no log "${msg}" x${n} (${running ? `after ${ms} ms` : 'exited'}); stderr: ${stderr.join('').slice(-1500)}`))
          }
          setTimeout(tick, 20)
        }
        tick()
      })
    },
    count,
  }
}

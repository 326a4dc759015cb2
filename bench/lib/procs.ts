/**
 * Benchmark worker processes. Everything measured runs in its own process (the daemon, the
 * simulator, the baselines, the callback receiver), so that the load generator in the parent
 * never competes for the same event loop, and memory figures are the measured process's own.
 * Workers are TypeScript run through tsx; parent and worker talk over the IPC channel.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { openSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The main thread's profile in a worker's profile folder (Node names them CPU.<date>.<time>.<pid>.<thread id>.<seq>). */
export function mainThreadProfile(dir: string, name: string): string {
  const folder = join(dir, name)
  const files = readdirSync(folder).filter((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f))
  if (files[0] === undefined) throw new Error(`no main-thread CPU profile in ${folder}: ${readdirSync(folder).join(', ')}`)
  return join(folder, files[0])
}

let codRoot: string | undefined

/** Where workers load the daemon's modules from (bench/lib/build.ts); run.ts sets it once. */
export function setCodRoot(dir: string): void {
  codRoot = dir
}

export interface WorkerOptions {
  /** Passed to the worker as BENCH_ARGS (JSON). */
  readonly args?: Record<string, unknown>
  /** Run with --expose-gc (memory figures after a full collection). */
  readonly exposeGc?: boolean
  /**
   * Write CPU profiles (node --cpu-prof) into `<dir>/<name>/` when the worker exits: one file per
   * thread (tsx's module loader runs in a thread of its own); mainThreadProfile() finds the main one.
   */
  readonly profile?: { readonly dir: string; readonly name: string }
}

export interface Worker {
  readonly name: string
  readonly proc: ChildProcess
  /** What the worker announced when it was ready (its URL, port...). */
  readonly info: Record<string, unknown>
  call<T = unknown>(type: string, payload?: Record<string, unknown>): Promise<T>
  /** Asks the worker to stop (it cleans up and exits); kills it if it does not within 15 s. */
  stop(): Promise<void>
}

interface Reply {
  readonly id?: number
  readonly type?: string
  readonly ok?: boolean
  readonly result?: unknown
  readonly error?: string
}

export async function startWorker(name: string, opts: WorkerOptions = {}): Promise<Worker> {
  if (codRoot === undefined) throw new Error('setCodRoot() first')
  const script = fileURLToPath(new URL(`../workers/${name}.ts`, import.meta.url))
  const execArgv = ['--import', 'tsx', '--enable-source-maps']
  if (opts.exposeGc === true) execArgv.push('--expose-gc')
  if (opts.profile !== undefined) {
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${join(opts.profile.dir, opts.profile.name)}`)
  }
  // The worker's stdout (the daemon's JSON log lines) goes nowhere, unless BENCH_LOG_DIR names a
  // folder to keep them in (<worker>.<pid of this process>.log) for a look at what happened.
  const logDir = process.env.BENCH_LOG_DIR
  const stdout = logDir === undefined || logDir === '' ? 'ignore' : openSync(join(logDir, `${name}.${process.pid}.${Date.now()}.log`), 'a')
  const proc = fork(script, [], {
    execArgv,
    stdio: ['ignore', stdout, 'inherit', 'ipc'],
    env: { ...process.env, BENCH_ARGS: JSON.stringify({ codRoot, ...opts.args }) },
  })
  let next = 1
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  let readyResolve!: (info: Record<string, unknown>) => void
  let readyReject!: (e: Error) => void
  const ready = new Promise<Record<string, unknown>>((res, rej) => {
    readyResolve = res
    readyReject = rej
  })
  proc.on('message', (m: Reply) => {
    if (m.type === 'ready') return readyResolve((m.result ?? {}) as Record<string, unknown>)
    if (m.type === 'failed') return readyReject(new Error(`${name}: ${m.error ?? 'failed to start'}`))
    const p = m.id === undefined ? undefined : pending.get(m.id)
    if (p === undefined || m.id === undefined) return
    pending.delete(m.id)
    if (m.ok === true) p.resolve(m.result)
    else p.reject(new Error(`${name}: ${m.error ?? 'failed'}`))
  })
  void exited.then(() => {
    readyReject(new Error(`${name} exited (code ${String(proc.exitCode)})`))
    for (const p of pending.values()) p.reject(new Error(`${name} exited`))
    pending.clear()
  })
  const info = await ready
  return {
    name,
    proc,
    info,
    call<T>(type: string, payload: Record<string, unknown> = {}) {
      const id = next++
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: (v) => resolve(v as T), reject })
        proc.send({ id, type, ...payload })
      })
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
      const id = next++
      proc.send({ id, type: 'stop' })
      await exited
      clearTimeout(timer)
    },
  }
}

/**
 * A real redis-server (the Debian package; `.ci/run` installs it) for the cluster suite: on a free
 * loopback port, in a temporary folder, killed by its PID when the test ends (and through a
 * parent-death signal if this process is killed first). Without persistence by default; with
 * `aof: true` it writes an append-only file fsynced at every write, so a restart keeps everything.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { freePort } from '../faults/harness/stack.js'

/** The redis-server binary, or undefined (the suite is skipped with this reason). */
export function redisServerBinary(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' })
  const path = r.stdout.trim()
  return r.status === 0 && path !== '' ? path : undefined
}

export const SKIP_REASON = 'redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)'

export interface RedisServer {
  readonly port: number
  readonly url: string
  pid(): number | undefined
  /** SIGKILL: gone at once, as a crash. */
  kill(): Promise<void>
  /** Starts it again on the same port and folder (with `aof`, its data comes back). */
  start(): Promise<void>
}

const SETPRIV = '/usr/bin/setpriv'

export async function startRedisServer(t: Test, opts: { aof?: boolean } = {}): Promise<RedisServer> {
  const bin = redisServerBinary()
  if (bin === undefined) throw new Error(SKIP_REASON)
  const dir = mkdtempSync(join(tmpdir(), 'cod-redis-'))
  const port = await freePort()
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    ...(opts.aof === true ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    '--protected-mode', 'no', '--logfile', '',
  ]
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()

  const start = async (): Promise<void> => {
    const [cmd, argv] = existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'KILL', '--', bin, ...args]] : [bin, args]
    const c = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
    child = c
    exited = new Promise((resolve) => c.once('exit', () => resolve()))
    let out = ''
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start on ${port}: ${out.slice(-500)}`)), 15000)
      c.stdout?.on('data', (b: Buffer) => {
        out += b.toString()
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer)
          resolve()
        }
      })
      c.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`))
      })
    })
  }
  const kill = async (): Promise<void> => {
    const c = child
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return
    c.kill('SIGKILL')
    await exited
  }
  await start()
  t.teardown(async () => {
    await kill()
    rmSync(dir, { recursive: true, force: true })
  })
  return { port, url: `redis://127.0.0.1:${port}`, pid: () => child?.pid, kill, start }
}

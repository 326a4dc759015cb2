/**
 * The real daemon as operators run it (`node --import tsx src/main.ts --config <file>`) in a
 * child process, for the signal cases. Its JSON log lines (stdout) are collected; the base URL
 * comes from its "daemon listening" line (the fixtures listen on port 0).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { waitFor } from './in-process.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

export interface ChildDaemon {
  readonly proc: ChildProcess
  readonly lines: Array<Record<string, unknown>>
  readonly stderr: string[]
  readonly baseUrl: string
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>
  waitLog(msg: string, count?: number, ms?: number): Promise<Record<string, unknown>>
  count(msg: string): number
}

export async function spawnDaemon(t: Test, configFile: string): Promise<ChildDaemon> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--config', configFile], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: Array<Record<string, unknown>> = []
  const stderr: string[] = []
  collectJsonLines(proc.stdout, lines)
  proc.stderr?.on('data', (c: Buffer) => stderr.push(c.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL')
      await exited
    }
  })
  const count = (msg: string) => lines.filter((l) => l.msg === msg).length
  const waitLog = async (msg: string, n = 1, ms = 15000) => {
    await waitFor(`log "${msg}" x${n} (stderr: ${stderr.join('').slice(-500)})`, () => count(msg) >= n || proc.exitCode !== null, ms, 20)
    const found = lines.filter((l) => l.msg === msg)[n - 1]
    if (found === undefined) throw new Error(`the daemon exited (${proc.exitCode}) before logging "${msg}": ${stderr.join('').slice(-2000)}`)
    return found
  }
  // A start under tsx takes 2-4 s on an idle 2-core machine; 15 s was once not enough in a full run
  // beside other work (load 8): the start is not what these tests are about.
  const listening = await waitLog('daemon listening', 1, 45_000)
  const baseUrl = String(listening.url)
  await waitLog('FreeSWITCH link up', 1, 45_000)
  return { proc, lines, stderr, baseUrl, exited, waitLog, count }
}

/** Collects a child's JSON log lines as they arrive (a line that is not JSON is kept as its `msg`). */
export function collectJsonLines(stream: Readable | null, lines: Array<Record<string, unknown>>): void {
  let partial = ''
  stream?.on('data', (c: Buffer) => {
    partial += c.toString('utf8')
    const parts = partial.split('\n')
    partial = parts.pop() ?? ''
    for (const line of parts) {
      if (line.trim() === '') continue
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        lines.push({ msg: line })
      }
    }
  })
}

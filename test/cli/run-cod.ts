/**
 * Runs the `cod` command as users do, in a child process (`node --import tsx src/cli/cod.ts`, the
 * same module `npm run build` turns into dist/cli/cod.js), and returns its exit code and
 * output. Every run is bounded: a child still running after `timeoutMs` is killed by its PID and
 * the run fails. Temp folders for the tests' files are removed at their teardown.
 *
 * The many variations of a command (every usage mistake, every refused token...) run the same
 * dispatcher in this process (`codHere`: runCod with captured streams), so that the suite stays
 * quick on a loaded machine; each command's good and bad cases also run as a child process.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { runCod } from '../../src/cli/commands.js'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const COD_ENTRY = 'src/cli/cod.ts'

export interface CodRun {
  /** The exit code (null: killed at the timeout). */
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface CodOptions {
  readonly stdin?: string | Buffer
  readonly env?: Record<string, string>
  readonly timeoutMs?: number
}

export function cod(args: readonly string[], opts: CodOptions = {}): Promise<CodRun> {
  return new Promise((resolve, reject) => {
    // Without the test runner's NODE_OPTIONS (its process-info hook): a lighter child.
    const { NODE_OPTIONS: _runnerHooks, ...env } = process.env
    const child = spawn(process.execPath, ['--import', 'tsx', COD_ENTRY, ...args], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...env, ...opts.env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    const timeoutMs = opts.timeoutMs ?? 30_000
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
      reject(new Error(`cod ${args.join(' ')}: still running after ${timeoutMs} ms; stderr: ${stderr.slice(-1000)}`))
    }, timeoutMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.on('error', () => undefined)
    child.stdin.end(opts.stdin ?? '')
  })
}

/** A temp folder removed at the test's end. */
export function tempDir(t: Test, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cod-${prefix}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * The same command run in this process (runCod, the dispatcher the entry point calls), with its
 * output captured. Not for `start` and `simulator`, which wait for this process's signals. Paths
 * are taken from the repository root, as the child's.
 */
export async function codHere(args: readonly string[], opts: Omit<CodOptions, 'timeoutMs'> = {}): Promise<CodRun> {
  let stdout = ''
  let stderr = ''
  const code = await runCod(args.map((a) => a), {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Readable.from(opts.stdin === undefined ? [] : [Buffer.from(opts.stdin)]),
    env: { ...opts.env },
  })
  return { code, stdout, stderr }
}

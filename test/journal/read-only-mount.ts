/**
 * Runs a command for which one folder is on a read-only file system (EROFS), as a container's
 * `-v /srv/cod:/etc/cod:ro` makes it: in a mount namespace of its own (`unshare -m`), the folder
 * bind-mounted onto itself read-only, so that nothing outside the child sees the change. As root
 * the mode bits refuse nothing (no EACCES), so this is how a root CI shows a folder that cannot
 * be written. Needs root and util-linux's unshare: `readOnlyMountUnavailable` says why not.
 */
import { spawn, spawnSync } from 'node:child_process'

/** Why these tests cannot run here (for tap's `skip`), or false. */
export function readOnlyMountUnavailable(): string | false {
  if (process.getuid?.() !== 0) return 'needs root for a mount namespace (CI runs as root)'
  const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'true'], { encoding: 'utf8' })
  return probe.status === 0 ? false : `unshare -m does not work here: ${probe.error?.message ?? probe.stderr}`
}

export interface ChildRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `argv` run in `cwd` with `dir` read-only; killed (and failed) after `timeoutMs`. */
export function runWithReadOnlyFolder(dir: string, argv: readonly string[], cwd: string, timeoutMs = 30_000): Promise<ChildRun> {
  // Without the test runner's NODE_OPTIONS, which tap adds to every child it spawns (its
  // process-info hook writes to .tap/, which a child running as another user cannot).
  const script = 'unset NODE_OPTIONS; mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
  const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, dir, ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
      reject(new Error(`${argv.join(' ')}: still running after ${timeoutMs} ms; stderr: ${stderr.slice(-1000)}`))
    }, timeoutMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/**
 * Folders the daemon keeps its state in (the result journal): made when missing, and when one
 * cannot be used, the reason in the operator's terms, naming the folder that is in the way.
 *
 * Why not just report mkdir's error: node's recursive mkdir answers ENOENT for a folder whose
 * parent is on a read-only file system (it stats the path after the EROFS, and the path is not
 * there), which sends the operator looking for a missing folder. So the probe walks up to the
 * nearest folder that exists and asks the kernel whether this process may write it (access(2):
 * EROFS for a read-only mount, EACCES for the mode bits).
 */
import { constants } from 'node:fs'
import { access, mkdir, readFile, realpath, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { err, ok, type Result } from './result.js'

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? String(e)

/** A mount point of /proc/self/mountinfo, its octal escapes (`\040` for a space) undone. */
const unescapeMountPoint = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))

/**
 * Whether `path` is on a read-only mount (`-v /srv/cod:/etc/cod:ro`), from the mount options of
 * the innermost mount holding it in /proc/self/mountinfo; false where that cannot be read.
 * Needed because access(2) answers EACCES, not EROFS, when the mode bits refuse as well (a
 * container's user on a root-owned, read-only /etc/cod), and no chmod or chown can fix a mount.
 */
async function onReadOnlyMount(path: string): Promise<boolean> {
  let mountinfo: string
  try {
    mountinfo = await readFile('/proc/self/mountinfo', 'utf8')
  } catch {
    return false
  }
  const real = await realpath(path).catch(() => path)
  let innermost = { point: '', readOnly: false }
  for (const line of mountinfo.split('\n')) {
    // id parent major:minor root mount-point options ...
    const fields = line.split(' ')
    const [point, options] = [fields[4], fields[5]]
    if (point === undefined || options === undefined) continue
    const mountPoint = unescapeMountPoint(point)
    const holds = mountPoint === '/' || real === mountPoint || real.startsWith(`${mountPoint}/`)
    // Later lines are mounted over earlier ones at the same point: >= keeps the last.
    if (holds && mountPoint.length >= innermost.point.length) innermost = { point: mountPoint, readOnly: options.split(',').includes('ro') }
  }
  return innermost.readOnly
}

async function notWritable(path: string, code: string): Promise<string> {
  if (code === 'EROFS' || (code === 'EACCES' && (await onReadOnlyMount(path)))) return `${path} is on a read-only file system (EROFS)`
  if (code === 'EACCES' || code === 'EPERM') return `${path} is not writable by uid ${process.getuid?.() ?? '?'} (${code})`
  return `${path}: ${code}`
}

/**
 * Why `dir` could not be created or written by this process, or undefined when it can. Creates
 * nothing (`cod check-config` asks it about a configuration it does not run).
 */
export async function folderProblem(dir: string): Promise<string | undefined> {
  const target = resolve(dir)
  let path = target
  for (;;) {
    let isFolder: boolean
    try {
      isFolder = (await stat(path)).isDirectory()
    } catch (e) {
      const code = codeOf(e)
      // Missing (or a file in the way, found further up): the first folder that exists decides.
      if ((code === 'ENOENT' || code === 'ENOTDIR') && dirname(path) !== path) {
        path = dirname(path)
        continue
      }
      return `cannot be reached: ${path} (${code})`
    }
    const missing = path !== target
    if (!isFolder) return missing ? `cannot be created: ${path} is a file, not a folder (ENOTDIR)` : 'is a file, not a folder (ENOTDIR)'
    try {
      await access(path, constants.W_OK | constants.X_OK)
      return undefined
    } catch (e) {
      return `${missing ? 'cannot be created' : 'cannot be written'}: ${await notWritable(path, codeOf(e))}`
    }
  }
}

/** Creates `dir` (and its missing parents, with `mode`) unless it exists; err (the reason) when it cannot be written. */
export async function makeWritableFolder(dir: string, mode: number): Promise<Result<void, string>> {
  try {
    await mkdir(dir, { recursive: true, mode })
  } catch (e) {
    return err((await folderProblem(dir)) ?? `cannot be created: ${e instanceof Error ? e.message : String(e)}`)
  }
  // It may have existed already, read-only: said now rather than by the first file written in it.
  const problem = await folderProblem(dir)
  return problem === undefined ? ok(undefined) : err(problem)
}

/**
 * The one way a file name of the daemon's state folders is made from values (issue 28: "nothing
 * in a request ever becomes a path"). Every segment must be a plain name of [A-Za-z0-9._-], so
 * separators, NUL, `%2e%2e`-style encodings and non-ASCII look-alikes are refused by the
 * alphabet itself, not by a list of bad forms someone could forget one of; `.` and `..` are
 * refused by name. Then, because a folder inside the root may be a symbolic link to somewhere
 * else (planted by whoever can write there), no segment below the root may be a symbolic link
 * (dangling ones included), and the deepest part of the path that exists, resolved with
 * realpath, must still be inside the root's own realpath.
 *
 * Synchronous on purpose: the dialplan asks for a recording's file name while it renders a
 * document (src/recording/store.ts recordingFile); the checks are a few lstat/realpath calls.
 */
import { lstatSync, realpathSync, type Stats } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { err, ok, type Result } from './result.js'

const SEGMENT_RE = /^[A-Za-z0-9._-]{1,255}$/

/** Why a segment cannot be part of a path, or undefined when it can. */
export function segmentProblem(segment: string): string | undefined {
  if (segment === '.' || segment === '..') return `"${segment}" names a folder, not a file`
  if (!SEGMENT_RE.test(segment)) return 'must be 1-255 of A-Z a-z 0-9 . _ -'
  return undefined
}

/** Whether `path` is `root` itself or inside it (both absolute, normalised). */
const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

const codeOf = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch (e) {
    if (codeOf(e) === 'ENOENT') return undefined
    throw e
  }
}

/** The realpath of the deepest existing ancestor of `path` (itself included), and what is left below it. */
function realDeepestExisting(path: string): { real: string; rest: string } {
  let existing = path
  for (;;) {
    try {
      const real = realpathSync.native(existing)
      return { real, rest: relative(existing, path) }
    } catch (e) {
      const parent = dirname(existing)
      if ((codeOf(e) !== 'ENOENT' && codeOf(e) !== 'ENOTDIR') || parent === existing) throw e
      existing = parent
    }
  }
}

/**
 * `root/segment/...`, or why not: a segment outside the alphabet, or a path that a symbolic link
 * takes out of the root. The root itself may be anywhere (the operator chose it, links
 * included); what is below it must stay below it.
 */
export function confinedPath(root: string, ...segments: readonly string[]): Result<string, string> {
  return confine(root, segments, false)
}

/**
 * confinedPath for a file about to be deleted: its last segment may be a symbolic link, since
 * unlink(2) removes the link itself, never what it points to (a link planted in place of a
 * recording is deleted with the recording). Any link above it is refused as always.
 */
export function confinedPathToUnlink(root: string, ...segments: readonly string[]): Result<string, string> {
  return confine(root, segments, true)
}

function confine(root: string, segments: readonly string[], lastMayBeLink: boolean): Result<string, string> {
  if (segments.length === 0) return err('no file name')
  for (const segment of segments) {
    const problem = segmentProblem(segment)
    if (problem !== undefined) return err(`${JSON.stringify(segment.slice(0, 64))}: ${problem}`)
  }
  const absoluteRoot = resolve(root)
  const path = join(absoluteRoot, ...segments)
  // The alphabet already keeps the path lexically inside; this is the belt to those braces.
  if (!isInside(absoluteRoot, path) || path === absoluteRoot) return err('the path leaves the folder')
  try {
    // No segment below the root may be a symbolic link, dangling ones included (a write would
    // follow a dangling link and create its target, wherever that is).
    const checked = lastMayBeLink ? segments.slice(0, -1) : segments
    let below = absoluteRoot
    for (const segment of checked) {
      below = join(below, segment)
      const stat = lstatOrUndefined(below)
      if (stat === undefined) break
      if (stat.isSymbolicLink()) return err('a symbolic link is in the way')
    }
    // And what exists resolves inside the root's own real folder (a bind mount or a rename race
    // aside, the check above already says so; this one costs two realpath calls).
    const realRoot = realDeepestExisting(absoluteRoot)
    const target = realDeepestExisting(lastMayBeLink ? dirname(path) : path)
    if (!isInside(join(realRoot.real, realRoot.rest), join(target.real, target.rest))) return err('a symbolic link takes the path out of the folder')
  } catch (e) {
    return err(`cannot be checked: ${codeOf(e) ?? String(e)}`)
  }
  return ok(path)
}

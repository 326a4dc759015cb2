/**
 * Received faxes are kept `ivr.fax_retention_days` (default 30): files under
 * `<fax_dir>/<domain>/received_faxes/` older than that (by their modification time, which is
 * when FreeSWITCH finished writing them) are deleted at the daemon's start and every hour, the
 * shape of the recordings' sweep (src/recording/retention.ts). It reads the folders themselves,
 * so what an earlier run received ages out too. Every name goes through the confinement
 * function; what is not a plain file of ours (a symbolic link, a name outside the alphabet) is
 * left alone and never followed. Faxes to send (the rest of the domain's folder) are the
 * operator's and never touched.
 */
import { lstat, readdir, rm } from 'node:fs/promises'
import { confinedPath, confinedPathToUnlink, segmentProblem } from '../../util/confined-path.js'
import type { CancelTimer, Clock } from '../../util/clock.js'
import type { Logger } from '../../util/logger.js'
import { RECEIVED_FOLDER } from './fax-name.js'

const DAY_MS = 86_400_000
/**
 * How often the sweep runs after the first one.
 * @internal Exported for tests: test/ivr/fax-retention.test.ts moves its fake clock by it.
 */
export const FAX_SWEEP_INTERVAL_MS = 3_600_000
/** Folders below received_faxes/ a sweep walks into (the fax names' own limit is lower). */
const MAX_DEPTH = 8

interface FaxSweepOptions {
  /** `ivr.fax_dir`, resolved. */
  readonly root: string
  /** Wall clock, unix ms. */
  readonly now: number
  readonly retentionDays: number
  readonly logger: Logger
}

/** Names of `segments` below root that are folders of ours (not links), in order. */
async function entries(root: string, segments: readonly string[]): Promise<string[]> {
  const folder = segments.length === 0 ? { ok: true as const, value: root } : confinedPath(root, ...segments)
  if (!folder.ok) return []
  const names = await readdir(folder.value).catch(() => [] as string[])
  return names.filter((n) => segmentProblem(n) === undefined).sort()
}

/** Deletes old files below `segments` (a folder), depth first; the number deleted. */
async function sweepFolder(o: FaxSweepOptions, segments: readonly string[], depth: number): Promise<number> {
  let removed = 0
  for (const name of await entries(o.root, segments)) {
    const path = confinedPathToUnlink(o.root, ...segments, name)
    if (!path.ok) continue
    const stat = await lstat(path.value).catch(() => undefined)
    if (stat === undefined || stat.isSymbolicLink()) continue
    if (stat.isDirectory()) {
      if (depth < MAX_DEPTH) removed += await sweepFolder(o, [...segments, name], depth + 1)
      continue
    }
    if (!stat.isFile() || o.now - stat.mtimeMs < o.retentionDays * DAY_MS) continue
    try {
      await rm(path.value)
      removed++
    } catch {
      // Gone meanwhile, or not ours to delete: the next sweep tries again.
    }
  }
  return removed
}

/**
 * One sweep of every domain's received faxes; the number of files deleted.
 * @internal Exported for tests: test/ivr/fax-retention.test.ts runs one sweep at a given time.
 */
export async function sweepReceivedFaxes(o: FaxSweepOptions): Promise<number> {
  let removed = 0
  for (const domain of await entries(o.root, [])) {
    const received = confinedPath(o.root, domain, RECEIVED_FOLDER)
    if (!received.ok) continue
    const stat = await lstat(received.value).catch(() => undefined)
    if (stat?.isDirectory() !== true) continue
    removed += await sweepFolder(o, [domain, RECEIVED_FOLDER], 1)
  }
  if (removed > 0) o.logger.info({ files: removed }, 'received faxes past their retention deleted')
  return removed
}

interface FaxRetentionDeps {
  /** `ivr.fax_dir` and `ivr.fax_retention_days` as they are now (a reload applies to the next sweep). */
  readonly settings: () => { readonly root: string; readonly retentionDays: number }
  readonly clock: Clock
  /** Wall clock, unix ms (file times are wall-clock times). */
  readonly wallNow: () => number
  readonly logger: Logger
}

/** Sweeps now and every hour until stopped; a sweep never overlaps the previous one. */
export function startFaxRetention(d: FaxRetentionDeps): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve()
  let busy = false
  const sweep = (): void => {
    if (busy) return
    busy = true
    const { root, retentionDays } = d.settings()
    running = sweepReceivedFaxes({ root, retentionDays, now: d.wallNow(), logger: d.logger })
      .then(
        () => undefined,
        (e: unknown) => d.logger.warn({ err: e }, 'received faxes sweep failed'),
      )
      .finally(() => {
        busy = false
      })
  }
  sweep()
  const cancel: CancelTimer = d.clock.every(FAX_SWEEP_INTERVAL_MS, sweep)
  return {
    async stop() {
      cancel()
      await running
    },
  }
}

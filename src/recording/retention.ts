/**
 * Retention (issue 28 item 4): recordings older than their retention are deleted, audio and
 * record. The sweep reads the folder itself rather than the store's memory, so what an earlier run
 * left (a record the daemon was killed before completing, a WAV whose record never got written,
 * a temporary file of a cut-short write) goes too once it is old enough: retention holds across
 * restarts. Every name goes through the confinement function; an entry that is not one of ours
 * (a symbolic link, a name outside the alphabet) is left alone and never followed.
 */
import { lstat, readdir, rm } from 'node:fs/promises'
import { confinedPath, confinedPathToUnlink, segmentProblem } from '../util/confined-path.js'
import type { Logger } from '../util/logger.js'
import { isRecordingId } from './id.js'
import { readRecord, TEMP_SUFFIX } from './record-file.js'

const DAY_MS = 86_400_000
/** A temporary record file older than this was left by a write that never finished. */
const STALE_TEMP_MS = 3_600_000

export interface SweepOptions {
  readonly root: string
  /** Wall clock, unix ms. */
  readonly now: number
  /** The domain's retention_days now; undefined for a folder of a domain no longer configured. */
  readonly retentionDaysOf: (domain: string) => number | undefined
  /** Used for a domain no longer configured (its recordings age out all the same). */
  readonly defaultRetentionDays: number
  readonly logger: Logger
}

export interface SweepResult {
  /** Records deleted (with their audio), by domain and id. */
  readonly removed: ReadonlyArray<{ readonly domain: string; readonly id: string }>
  readonly strayFiles: number
}

async function realFolders(root: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(root)
  } catch {
    return []
  }
  const folders: string[] = []
  for (const name of names) {
    if (segmentProblem(name) !== undefined) continue
    const path = confinedPath(root, name)
    if (!path.ok) continue
    const stat = await lstat(path.value).catch(() => undefined)
    if (stat?.isDirectory() === true) folders.push(name)
  }
  return folders
}

/** Deletes `name` in `root/domain` (confined; a link there is removed itself); true when it was there. */
async function remove(root: string, domain: string, name: string): Promise<boolean> {
  const path = confinedPathToUnlink(root, domain, name)
  if (!path.ok) return false
  try {
    await rm(path.value)
    return true
  } catch {
    return false
  }
}

export async function sweepRecordings(opts: SweepOptions): Promise<SweepResult> {
  const removed: Array<{ domain: string; id: string }> = []
  let strayFiles = 0
  for (const domain of await realFolders(opts.root)) {
    const days = opts.retentionDaysOf(domain) ?? opts.defaultRetentionDays
    const folder = confinedPath(opts.root, domain)
    if (!folder.ok) continue
    const names = await readdir(folder.value).catch(() => [] as string[])
    const recordIds = new Set(names.filter((n) => n.endsWith('.json') && isRecordingId(n.slice(0, -5))).map((n) => n.slice(0, -5)))
    for (const id of recordIds) {
      const path = confinedPath(opts.root, domain, `${id}.json`)
      if (!path.ok) continue
      const record = await readRecord(path.value, id, domain)
      // A damaged record ages by its file's time, like a stray file.
      const startedAt = record.ok ? Date.parse(record.value.startedAt) : ((await lstat(path.value).catch(() => undefined))?.mtimeMs ?? opts.now)
      const keepDays = (record.ok ? record.value.retentionDays : undefined) ?? days
      if (opts.now - startedAt < keepDays * DAY_MS) continue
      await remove(opts.root, domain, `${id}.wav`)
      if (await remove(opts.root, domain, `${id}.json`)) removed.push({ domain, id })
    }
    for (const name of names) {
      const isStrayWav = name.endsWith('.wav') && isRecordingId(name.slice(0, -4)) && !recordIds.has(name.slice(0, -4))
      const isTemp = name.endsWith(TEMP_SUFFIX)
      if (!isStrayWav && !isTemp) continue
      const path = confinedPath(opts.root, domain, name)
      if (!path.ok) continue
      const stat = await lstat(path.value).catch(() => undefined)
      if (stat === undefined || !stat.isFile()) continue
      const age = opts.now - stat.mtimeMs
      if (age >= (isTemp ? STALE_TEMP_MS : days * DAY_MS) && (await remove(opts.root, domain, name))) strayFiles++
    }
  }
  if (removed.length > 0 || strayFiles > 0) opts.logger.info({ records: removed.length, stray_files: strayFiles }, 'recordings past their retention deleted')
  return { removed, strayFiles }
}

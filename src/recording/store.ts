/**
 * The recordings on disk (issue 28; docs/recording.md): `<recording.dir>/<domain>/<id>.wav`, the
 * audio FreeSWITCH writes, and `<id>.json` beside it, the record this store writes. Every file
 * name is made by src/util/confined-path.ts and nothing else; ids are the daemon's own UUIDs.
 *
 * The records are read from the folder at open (so a restart keeps them) and kept in memory for
 * the API's lists; every change is on disk (atomically, record-file.ts) before it is in memory.
 * Changes of one recording are made one at a time (begin, complete, fail, remove), so a
 * completion racing a deletion cannot bring a deleted record back.
 */
import { mkdirSync } from 'node:fs'
import { readdir, rm, stat } from 'node:fs/promises'
import { systemClock, type CancelTimer, type Clock } from '../util/clock.js'
import { confinedPath, confinedPathToUnlink, segmentProblem } from '../util/confined-path.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { makeWritableFolder } from '../util/writable-folder.js'
import { pageOf } from './cursor.js'
import { isRecordingId } from './id.js'
import { readRecord, writeRecord } from './record-file.js'
import { sweepRecordings } from './retention.js'
import type { BeginRecording, RecordingAudio, RecordingRecord, RecordingStats, RecordingStore, SweepReport } from './types.js'
import { WAV_HEADER_BYTES, wavFileDurationMs } from './wav.js'

export type * from './types.js'

/** The retention of a domain that is not configured (any more) and of a record without its own. */
const DEFAULT_RETENTION_DAYS = 30
const SWEEP_EVERY_MS = 3_600_000
/**
 * Folders FreeSWITCH writes into: group-writable, for a switch running as another user of the
 * daemon's group (docs/recording.md "Where"); nothing for others.
 */
const FOLDER_MODE = 0o770

export interface OpenRecordingStoreOptions {
  /** The folder (absolute): `recording.dir`, resolved (src/config/recording-dir.ts). */
  readonly dir: string
  readonly logger: Logger
  /** A domain's retention_days as configured now (SIGHUP applies); undefined for an unknown domain. */
  readonly retentionDaysOf: (domain: string) => number | undefined
  /** The hourly sweep's timer; the system clock by default. */
  readonly clock?: Clock
  /** Wall clock, unix ms (record times, ages); Date.now by default. */
  readonly now?: () => number
}

const domainKey = (domain: string): string => domain.toLowerCase()

class FileRecordingStore implements RecordingStore {
  /** Records by lower-case domain, then id. */
  private readonly byDomain = new Map<string, Map<string, RecordingRecord>>()
  /** The domain of each id (ids are unique across domains: UUIDs). */
  private readonly domainOfId = new Map<string, string>()
  /** The last change of each recording still running: the next waits for it. */
  private readonly changes = new Map<string, Promise<unknown>>()
  private readonly counts = { started: 0, completed: 0, failed: 0, bytesWritten: 0 }
  private cancelSweep: CancelTimer | undefined

  constructor(
    private readonly root: string,
    private readonly opts: OpenRecordingStoreOptions,
    private readonly now: () => number,
  ) {}

  /** Reads every record on disk into memory (open). */
  async load(): Promise<void> {
    const domains = await readdir(this.root).catch(() => [] as string[])
    for (const domain of domains) {
      if (segmentProblem(domain) !== undefined || domain !== domainKey(domain)) continue
      const folder = confinedPath(this.root, domain)
      if (!folder.ok) continue
      const names = await readdir(folder.value).catch(() => [] as string[])
      for (const name of names) {
        const id = name.slice(0, -'.json'.length)
        if (!name.endsWith('.json') || !isRecordingId(id)) continue
        const path = confinedPath(this.root, domain, name)
        if (!path.ok) continue
        const record = await readRecord(path.value, id, domain)
        if (record.ok) this.remember(record.value)
        else this.opts.logger.warn({ file: path.value, problem: record.error }, 'recording record ignored')
      }
    }
  }

  startSweeping(clock: Clock): void {
    this.cancelSweep = clock.every(SWEEP_EVERY_MS, () => void this.sweep())
  }

  private remember(r: RecordingRecord): void {
    let records = this.byDomain.get(r.domain)
    if (records === undefined) this.byDomain.set(r.domain, (records = new Map()))
    records.set(r.id, r)
    this.domainOfId.set(r.id, r.domain)
  }

  private forget(domain: string, id: string): void {
    this.byDomain.get(domain)?.delete(id)
    if (this.domainOfId.get(id) === domain) this.domainOfId.delete(id)
  }

  /** Runs `change` after the changes of `id` before it. */
  private serial<T>(id: string, change: () => Promise<T>): Promise<T> {
    const before = this.changes.get(id) ?? Promise.resolve()
    const run = before.then(change, change)
    const settled = run.catch(() => undefined)
    this.changes.set(id, settled)
    void settled.then(() => {
      if (this.changes.get(id) === settled) this.changes.delete(id)
    })
    return run
  }

  private file(domain: string, id: string, extension: 'wav' | 'json'): Result<string, string> {
    if (!isRecordingId(id)) return err('not a recording id')
    return confinedPath(this.root, domainKey(domain), `${id}.${extension}`)
  }

  recordingFile(domain: string, id: string): Result<string, string> {
    const path = this.file(domain, id, 'wav')
    if (!path.ok) return path
    const folder = confinedPath(this.root, domainKey(domain))
    if (!folder.ok) return folder
    try {
      mkdirSync(folder.value, { recursive: true, mode: FOLDER_MODE })
    } catch (e) {
      return err(`cannot make ${folder.value}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
    }
    // Made now: checked again, a link planted in the folder's place included.
    return this.file(domain, id, 'wav')
  }

  begin(b: BeginRecording): Promise<Result<RecordingRecord, string>> {
    return this.serial(b.id, async () => {
      const domain = domainKey(b.domain)
      if (this.domainOfId.has(b.id)) return err(`recording ${b.id} exists already`)
      const audio = this.recordingFile(domain, b.id)
      if (!audio.ok) return audio
      const path = this.file(domain, b.id, 'json')
      if (!path.ok) return path
      const record: RecordingRecord = {
        id: b.id,
        requestId: b.requestId,
        domain,
        legs: [...b.legs],
        startedAt: new Date(b.startedAt).toISOString(),
        bytes: 0,
        format: 'wav',
        status: 'recording',
        ...(b.retentionDays !== undefined ? { retentionDays: b.retentionDays } : {}),
      }
      const written = await writeRecord(path.value, record)
      if (!written.ok) return written
      this.remember(record)
      this.counts.started++
      return ok(record)
    })
  }

  /** Ends a running recording with what `decide` makes of it; an ended one is returned as it is. */
  private end(id: string, decide: (r: RecordingRecord, audioPath: string) => Promise<RecordingRecord>): Promise<Result<RecordingRecord, string>> {
    return this.serial(id, async () => {
      const domain = this.domainOfId.get(id)
      const current = domain === undefined ? undefined : this.byDomain.get(domain)?.get(id)
      if (domain === undefined || current === undefined) return err(`no recording ${id}`)
      if (current.status !== 'recording') return ok(current)
      const audio = this.file(domain, id, 'wav')
      const path = this.file(domain, id, 'json')
      if (!audio.ok) return audio
      if (!path.ok) return path
      const ended = await decide(current, audio.value)
      const written = await writeRecord(path.value, ended)
      if (!written.ok) return written
      this.remember(ended)
      if (ended.status === 'completed') {
        this.counts.completed++
        this.counts.bytesWritten += ended.bytes
      } else {
        this.counts.failed++
      }
      return ok(ended)
    })
  }

  complete(id: string, facts: { readonly durationMs?: number; readonly legs?: readonly string[] } = {}): Promise<Result<RecordingRecord, string>> {
    return this.end(id, async (begun, audioPath) => {
      // The other party's leg is known only once the call ended (RECORD_STOP's bridge_uuid).
      const r = facts.legs !== undefined ? { ...begun, legs: [...facts.legs] } : begun
      const bytes = await sizeOf(audioPath)
      if (bytes === undefined) return failed(r, 0, 'no audio file was written')
      if (bytes <= WAV_HEADER_BYTES) return failed(r, bytes, `the audio file holds no audio (${bytes} bytes)`)
      const durationMs = facts.durationMs ?? (await wavFileDurationMs(audioPath, bytes))
      return { ...r, status: 'completed', bytes, ...(durationMs !== undefined ? { durationMs: Math.max(0, Math.round(durationMs)) } : {}) }
    })
  }

  fail(id: string, reason: string): Promise<Result<RecordingRecord, string>> {
    return this.end(id, async (r, audioPath) => failed(r, (await sizeOf(audioPath)) ?? 0, reason))
  }

  get(domain: string, id: string): RecordingRecord | undefined {
    return this.byDomain.get(domainKey(domain))?.get(id)
  }

  unfinished(): RecordingRecord[] {
    const out: RecordingRecord[] = []
    for (const records of this.byDomain.values()) for (const r of records.values()) if (r.status === 'recording') out.push(r)
    return out
  }

  list(domain: string, query: { readonly limit: number; readonly after?: string }) {
    return pageOf(this.byDomain.get(domainKey(domain))?.values() ?? [], query)
  }

  async audio(domain: string, id: string): Promise<RecordingAudio | undefined> {
    const record = this.get(domain, id)
    // A file still being written has no length yet that a reader could rely on.
    if (record?.status !== 'completed') return undefined
    const path = this.file(domain, id, 'wav')
    if (!path.ok) return undefined
    const bytes = await sizeOf(path.value)
    return bytes === undefined ? undefined : { path: path.value, bytes }
  }

  remove(domain: string, id: string): Promise<boolean> {
    return this.serial(id, async () => {
      const key = domainKey(domain)
      if (this.get(key, id) === undefined) return false
      // Paths to unlink: a link planted in place of a file is removed itself, never followed.
      const audio = confinedPathToUnlink(this.root, key, `${id}.wav`)
      const path = confinedPathToUnlink(this.root, key, `${id}.json`)
      if (!audio.ok || !path.ok) return false
      // The audio first: a crash between the two leaves a record without audio, not audio without a record.
      await rm(audio.value, { force: true })
      await rm(path.value, { force: true })
      this.forget(key, id)
      return true
    })
  }

  async sweep(): Promise<SweepReport> {
    try {
      const result = await sweepRecordings({
        root: this.root,
        now: this.now(),
        retentionDaysOf: this.opts.retentionDaysOf,
        defaultRetentionDays: DEFAULT_RETENTION_DAYS,
        logger: this.opts.logger,
      })
      for (const { domain, id } of result.removed) this.forget(domain, id)
      return { records: result.removed.length, strayFiles: result.strayFiles }
    } catch (e) {
      this.opts.logger.error({ err: e }, 'recording retention sweep failed; the next one is in an hour')
      return { records: 0, strayFiles: 0 }
    }
  }

  stats(): RecordingStats {
    return { ...this.counts, onDisk: this.domainOfId.size }
  }

  close(): void {
    this.cancelSweep?.()
  }
}

const failed = (r: RecordingRecord, bytes: number, reason: string): RecordingRecord => ({ ...r, status: 'failed', bytes, reason })

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    const s = await stat(path)
    return s.isFile() ? s.size : undefined
  } catch {
    return undefined
  }
}

/**
 * Opens the store: the folder made (a folder that cannot be written stops the start), the
 * records read, the first retention sweep run, and one every hour on `clock` until close.
 */
export async function openRecordingStore(opts: OpenRecordingStoreOptions): Promise<Result<RecordingStore, string>> {
  const made = await makeWritableFolder(opts.dir, FOLDER_MODE)
  if (!made.ok) return err(`${opts.dir} ${made.error}`)
  const store = new FileRecordingStore(opts.dir, opts, opts.now ?? Date.now)
  await store.load()
  await store.sweep()
  store.startSweeping(opts.clock ?? systemClock)
  return ok(store)
}

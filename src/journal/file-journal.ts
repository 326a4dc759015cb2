/**
 * The journal on disk (types.ts says what it promises): opening it (read every segment, keep what
 * is valid, move a corrupt segment aside, go on appending to the one segment read whole or start
 * a fresh segment from a snapshot), appending through the group committer, and compacting when
 * the dead records dominate.
 *
 * Compaction is the same operation as a start from several segments or a corrupt one: the live
 * state's snapshot becomes a new segment (segments.ts: whole or not at all), then the old one is
 * removed. It runs between two group commits, so no append is ever written to a segment that is
 * being replaced; appends that arrive meanwhile wait for the next batch, which goes to the new
 * segment.
 */
import type { FileHandle } from 'node:fs/promises'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { GroupCommitter, type AppendOptions } from './group-commit.js'
import { decodeRecords, encodeRecord, type BadLine, type JournalRecord } from './record.js'
import { lockJournal, type JournalLock } from './lock.js'
import { createSegment, listSegments, moveAside, readSegment, removeSegment, reopenSegment, type SegmentFile } from './segments.js'
import { JournalState } from './state.js'
import { acceptedIsUrgent, type AcceptedRequest, type DeadLetter, type DeliveryProgress, type Journal, type JournalReplay, type JournalStats, type NoticeFields, type OriginateIntent, type ResultRecord } from './types.js'

export interface FileJournalOptions {
  readonly dir: string
  readonly logger: Logger
  /** A compaction is considered once the segment passes this size (default 4 MiB)... */
  readonly compactMinBytes?: number
  /** ...and done when the live records take less than 1/this of it (default 2). */
  readonly compactRatio?: number
  /** Wall clock (ms). */
  readonly now?: () => number
}

const DEFAULT_COMPACT_MIN_BYTES = 4 * 1024 * 1024
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Opens the journal in `dir`; err only when the folder cannot be used at all. */
export async function openFileJournal(opts: FileJournalOptions): Promise<Result<Journal, string>> {
  const now = opts.now ?? Date.now
  const log = opts.logger
  let segments: SegmentFile[]
  try {
    segments = await listSegments(opts.dir)
  } catch (e) {
    return err(`journal folder ${opts.dir}: ${message(e)}`)
  }
  const locked = await lockJournal(opts.dir)
  if (!locked.ok) return err(`journal folder ${opts.dir}: ${locked.error}`)
  const state = new JournalState()
  const readOnes: ReadSegment[] = []
  const corrupt: SegmentFile[] = []
  for (const seg of segments) {
    let text: string
    try {
      text = await readSegment(seg.path)
    } catch (e) {
      log.error({ file: seg.path, err: message(e) }, 'journal segment could not be read: moved aside (the daemon starts without it)')
      corrupt.push(seg)
      continue
    }
    const { records, bad } = decodeRecords(text)
    for (const r of records) state.apply(r)
    reportBadLines(log, seg.path, bad)
    if (bad.some((b) => b.kind !== 'torn')) corrupt.push(seg)
    else readOnes.push({ ...seg, validBytes: Buffer.byteLength(text) - bad.reduce((n, b) => n + Buffer.byteLength(b.text), 0) })
  }
  state.prune(now())
  const replay = state.replay(now())
  const opened = await continueOrRewrite(opts, state, segments, readOnes, corrupt)
  if (!opened.ok) {
    await locked.value.release()
    return opened
  }
  const segment = opened.value
  // The segment in use holds everything valid that was read: the others can go.
  for (const seg of corrupt) {
    try {
      const aside = await moveAside(seg.path, now())
      log.error({ file: aside }, 'corrupt journal segment moved aside; its valid records were kept')
    } catch (e) {
      log.error({ file: seg.path, err: message(e) }, 'corrupt journal segment could not be moved aside')
    }
  }
  for (const seg of readOnes) if (seg.path !== segment.path) await removeSegment(seg.path).catch(() => undefined)
  const stats = state.counts()
  log.info({ dir: opts.dir, segment: segment.path, continued: segment.continued, ...stats }, 'journal opened')
  return ok(new FileJournal(opts, state, replay, segment, locked.value))
}

/** A segment read whole without a bad record: `validBytes` of it, the rest a torn last record. */
interface ReadSegment extends SegmentFile {
  readonly validBytes: number
}

interface OpenSegment {
  readonly handle: FileHandle
  readonly path: string
  readonly seq: number
  readonly bytes: number
  /** Appended to where it ended (dead records still in it) rather than a snapshot of the live ones. */
  readonly continued: boolean
}

/**
 * The segment the journal appends to. When the folder held one segment and every record of it
 * was read (a torn last one aside), appends go on at its end: rewriting it would cost the start
 * as much again as the reading (encoding and writing every live record, 58 MB for 100,000
 * pending results and as many open requests: docs/bench.md), and compaction drops its dead
 * records once they dominate. Otherwise (no segment, several, a corrupt one, or the first cannot
 * be opened) the live state's snapshot becomes a new segment, as a compaction does.
 */
async function continueOrRewrite(
  opts: FileJournalOptions,
  state: JournalState,
  segments: readonly SegmentFile[],
  readOnes: readonly ReadSegment[],
  corrupt: readonly SegmentFile[],
): Promise<Result<OpenSegment, string>> {
  const only = readOnes[0]
  if (segments.length === 1 && readOnes.length === 1 && corrupt.length === 0 && only !== undefined) {
    try {
      const handle = await reopenSegment(only.path, only.validBytes)
      return ok({ handle, path: only.path, seq: only.seq, bytes: only.validBytes, continued: true })
    } catch (e) {
      opts.logger.warn({ file: only.path, err: message(e) }, 'journal segment could not be opened for appending: its live records go to a new one')
    }
  }
  const seq = (segments.at(-1)?.seq ?? 0) + 1
  const snapshot = snapshotText(state)
  try {
    const created = await createSegment(opts.dir, seq, snapshot)
    return ok({ ...created, seq, bytes: Buffer.byteLength(snapshot), continued: false })
  } catch (e) {
    return err(`journal folder ${opts.dir}: ${message(e)}`)
  }
}

function reportBadLines(log: Logger, file: string, bad: readonly BadLine[]): void {
  for (const b of bad) {
    // A torn last line is the expected trace of a crash mid-write: its caller was never answered.
    if (b.kind === 'torn') log.warn({ file, line: b.line, bytes: b.text.length }, 'journal: torn last record skipped (a crash during its write)')
    else log.error({ file, line: b.line, kind: b.kind, text: b.text.slice(0, 2000) }, 'journal: unreadable record skipped')
  }
}

const snapshotText = (state: JournalState): string => state.snapshot().map(encodeRecord).join('')

class FileJournal implements Journal {
  private readonly log: Logger
  private readonly now: () => number
  private readonly committer: GroupCommitter
  private readonly compactMinBytes: number
  private readonly compactRatio: number
  private handle: FileHandle
  private path: string
  private seq: number
  private bytes: number
  /** The segment size at which compaction is considered again. */
  private nextCheckAt: number
  private closed = false
  private readonly counts = { appended: 0, compactions: 0, writeErrors: 0 }

  constructor(
    private readonly opts: FileJournalOptions,
    private readonly state: JournalState,
    private readonly replayed: JournalReplay,
    segment: OpenSegment,
    private readonly lock: JournalLock,
  ) {
    this.log = opts.logger
    this.now = opts.now ?? Date.now
    this.compactMinBytes = opts.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES
    this.compactRatio = opts.compactRatio ?? 2
    this.handle = segment.handle
    this.path = segment.path
    this.seq = segment.seq
    this.bytes = segment.bytes
    // A snapshot holds only live records: compaction is worth a look once as much again is written.
    // A continued segment may hold dead ones too: a look after the usual growth (a look encodes the
    // live state, which the start has not done).
    this.nextCheckAt = segment.continued ? segment.bytes + this.compactMinBytes : Math.max(this.compactMinBytes, segment.bytes * this.compactRatio)
    this.committer = new GroupCommitter({
      commit: (text) => this.write(text),
      between: () => this.maybeCompact(),
      failed: (e, records) => {
        this.counts.writeErrors++
        this.log.error({ err: message(e), records, file: this.path }, 'journal write failed: these records may be lost at a crash')
      },
    })
  }

  intended(rec: OriginateIntent): Promise<void> {
    const { idempotency } = rec
    return this.append({
      k: 'intended',
      ...this.requestFields(rec),
      ...(idempotency !== undefined ? { idempotency: { key: idempotency.key, bodyDigest: idempotency.bodyDigest } } : {}),
    })
  }

  unplaced(requestId: string): Promise<void> {
    return this.append({ k: 'unplaced', at: this.now(), requestId })
  }

  accepted(rec: AcceptedRequest): Promise<void> {
    // Unhurried when a crash could lose nothing of the request (types.ts acceptedIsUrgent): the API does not wait for it then.
    const idempotency = rec.idempotency !== undefined ? { idempotency: { ...rec.idempotency } } : {}
    const status = rec.status !== undefined ? { status: { url: rec.status.url, events: [...rec.status.events] } } : {}
    return this.append({ k: 'accepted', ...this.requestFields(rec), ...idempotency, ...status }, { unhurried: !acceptedIsUrgent(rec) })
  }

  followed(requestId: string): Promise<void> {
    // Unhurried: should a crash lose it, the next start takes the request up, finds its legs all
    // told, and writes it again (callbacks/status-events.ts).
    return this.append({ k: 'followed', at: this.now(), requestId }, { unhurried: true })
  }

  /** The fields an accepted request and an intent share (record.ts requestFields), stamped now. */
  private requestFields(rec: OriginateIntent) {
    return {
      at: this.now(),
      requestId: rec.requestId,
      domain: rec.domain,
      operation: rec.operation,
      uuids: [...rec.uuids],
      ...(rec.callbackUrl !== undefined ? { callbackUrl: rec.callbackUrl } : {}),
      answerDeadlineAt: Math.max(0, Math.round(rec.answerDeadlineAt)),
    }
  }

  async ended(requestId: string): Promise<void> {
    // The engine tells its outcome listeners before it hands the result to the callbacks: one
    // microtask later, a request with a callback has its result record and needs no `ended`.
    await Promise.resolve()
    if (this.state.wasEnded(requestId)) return
    // Unhurried (group-commit.ts): it rides with the next batch, or goes out within 50 ms. Nobody
    // waits for it, and should a crash lose it, recovery finds the request's legs gone and ends it
    // again (origination/recovery.ts); its legs' records are deleted only 5 s after its result
    // (origination/leg-records.ts), long after this record is on the disk.
    return this.append({ k: 'ended', at: this.now(), requestId }, { unhurried: true })
  }

  result(rec: ResultRecord): Promise<void> {
    return this.append({ k: 'result', at: this.now(), ...rec })
  }

  notice(rec: ResultRecord & { readonly notice: NoticeFields }): Promise<void> {
    return this.append({ k: 'notice', at: this.now(), ...rec })
  }

  attempted(deliveryId: string, p: DeliveryProgress): Promise<void> {
    return this.append({ k: 'attempted', at: this.now(), deliveryId, ...p })
  }

  acked(deliveryId: string): Promise<void> {
    return this.append({ k: 'acked', at: this.now(), deliveryId })
  }

  deadLetter(deliveryId: string, reason: string, attempts: number): Promise<void> {
    return this.append({ k: 'dead', at: this.now(), deliveryId, reason: reason.slice(0, 2000), attempts })
  }

  revived(deliveryId: string, giveUpAt: number): Promise<void> {
    return this.append({ k: 'revived', at: this.now(), deliveryId, giveUpAt })
  }

  replay(): JournalReplay {
    return this.replayed
  }

  deadLetters(): DeadLetter[] {
    return this.state.deadLetters()
  }

  stats(): JournalStats {
    return {
      ...this.counts,
      commits: this.committer.commits,
      ...this.state.counts(),
      segmentBytes: this.bytes,
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.committer.flushed()
    await this.handle.close().catch(() => undefined)
    await this.lock.release()
  }

  private append(r: JournalRecord, o: AppendOptions = {}): Promise<void> {
    if (this.closed) {
      this.log.error({ record: r }, 'journal closed: record not written (it is in this log line)')
      return Promise.resolve()
    }
    let line: string
    try {
      line = encodeRecord(r)
    } catch (e) {
      this.counts.writeErrors++
      this.log.error({ err: message(e), record: r }, 'journal record could not be encoded')
      return Promise.resolve()
    }
    // State first: a compaction between now and the write keeps this record; applying it twice is harmless.
    this.state.apply(r)
    this.counts.appended++
    return this.committer.append(line, o)
  }

  /** Appends `text`; durable when it resolves (the segment is opened O_DSYNC: segments.ts). */
  private async write(text: string): Promise<void> {
    const buf = Buffer.from(text, 'utf8')
    let off = 0
    while (off < buf.length) {
      const { bytesWritten } = await this.handle.write(buf, off, buf.length - off)
      off += bytesWritten
    }
    this.bytes += buf.length
  }

  private async maybeCompact(): Promise<void> {
    if (this.bytes < this.nextCheckAt || this.closed) return
    this.state.prune(this.now())
    const text = snapshotText(this.state)
    const live = Buffer.byteLength(text)
    if (live * this.compactRatio > this.bytes) {
      // Mostly live: look again once the segment has grown by as much again.
      this.nextCheckAt = this.bytes + Math.max(this.compactMinBytes, live)
      return
    }
    const oldPath = this.path
    const oldHandle = this.handle
    // Should the new segment fail (disk full), the next try waits for more growth, not the next batch.
    this.nextCheckAt = this.bytes + this.compactMinBytes
    const created = await createSegment(this.opts.dir, this.seq + 1, text)
    this.seq++
    this.handle = created.handle
    this.path = created.path
    this.bytes = live
    this.nextCheckAt = Math.max(this.compactMinBytes, live * this.compactRatio * 2)
    this.counts.compactions++
    await oldHandle.close().catch(() => undefined)
    await removeSegment(oldPath).catch((e: unknown) => this.log.warn({ file: oldPath, err: message(e) }, 'old journal segment could not be removed'))
    this.log.debug({ segment: this.path, live_bytes: live }, 'journal compacted')
  }
}

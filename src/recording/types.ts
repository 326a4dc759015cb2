/**
 * What a recording is (issue 28 item 3; docs/recording.md "Records"): the record kept beside
 * each audio file as `<id>.json`, and the store's interface as the call path (the lead's wiring:
 * request → recording events → store → callbacks), the API and the dialplan use it.
 */
import type { Result } from '../util/result.js'

export type RecordingStatus = 'recording' | 'completed' | 'failed'

/** The sidecar record `<recording.dir>/<domain>/<id>.json`, as written (camelCase) and read back. */
export interface RecordingRecord {
  readonly id: string
  /** The request whose call this is (X-Request-Id, the journal's request id). */
  readonly requestId: string
  /** The domain, lower-case (also the folder's name). */
  readonly domain: string
  /** The UUIDs of the call's legs that were recorded. */
  readonly legs: readonly string[]
  /** ISO 8601, UTC. */
  readonly startedAt: string
  /** Known once completed (given by the caller, or read from the WAV header). */
  readonly durationMs?: number
  /** Size of the audio file; 0 while recording. */
  readonly bytes: number
  readonly format: 'wav'
  readonly status: RecordingStatus
  /** Why it failed. */
  readonly reason?: string
  /** Days it is kept, as the policy said when it began (src/recording/policy.ts); absent: the domain's retention_days at each sweep. */
  readonly retentionDays?: number
}

export interface BeginRecording {
  /** The id the API decided (OriginationPlan.recording.id): a lower-case UUID. */
  readonly id: string
  readonly requestId: string
  readonly domain: string
  readonly legs: readonly string[]
  /** Unix ms. */
  readonly startedAt: number
  readonly retentionDays?: number
}

export interface RecordingPage {
  /** Newest first. */
  readonly recordings: readonly RecordingRecord[]
  /** The `after` of the next page; absent on the last page. */
  readonly next?: string
}

export interface ListQuery {
  /** 1 to 100. */
  readonly limit: number
  /** A `next` of an earlier page. */
  readonly after?: string
}

/** The audio of one recording, for a reader: its confined path and its size now. */
export interface RecordingAudio {
  readonly path: string
  readonly bytes: number
}

/** The counts the metrics read at scrape time (src/metrics/sources.ts RecordingFigures has this shape). */
export interface RecordingStats {
  /** Since start. */
  readonly started: number
  readonly completed: number
  readonly failed: number
  readonly bytesWritten: number
  /** Records on disk now (any status). */
  readonly onDisk: number
}

export interface RecordingStore {
  /**
   * Where FreeSWITCH writes recording `id` of `domain` (the dialplan's record_session argument):
   * `<recording.dir>/<domain lower-case>/<id>.wav`, made only by src/util/confined-path.ts. The
   * domain's folder is made when missing, so that the switch can write there.
   */
  recordingFile(domain: string, id: string): Result<string, string>
  /** A recording starts: its record, status `recording`, is on disk when this resolves. */
  begin(b: BeginRecording): Promise<Result<RecordingRecord, string>>
  /**
   * A recording ended: `completed` with the file's size (and the duration given, else read from
   * the WAV header), or `failed` when the file is missing or holds no audio.
   */
  complete(id: string, facts?: { readonly durationMs?: number; readonly legs?: readonly string[] }): Promise<Result<RecordingRecord, string>>
  /** A recording ended without audio (a refused write, a full disk): `failed` with the reason. */
  fail(id: string, reason: string): Promise<Result<RecordingRecord, string>>
  /** A record of this domain; another domain's id answers as a missing one. */
  get(domain: string, id: string): RecordingRecord | undefined
  /** Every record still `recording` (at start: those an earlier run did not see end). */
  unfinished(): RecordingRecord[]
  /** The domain's records, newest first; err for an `after` that is no cursor of ours. */
  list(domain: string, query: ListQuery): Result<RecordingPage, string>
  /** The audio file of a recording of this domain, when it exists. */
  audio(domain: string, id: string): Promise<RecordingAudio | undefined>
  /** Deletes file and record; false when the domain has no such recording. */
  remove(domain: string, id: string): Promise<boolean>
  /** Deletes what is older than its retention (also run at open and every hour until close). */
  sweep(): Promise<SweepReport>
  stats(): RecordingStats
  close(): void
}

export interface SweepReport {
  /** Records (with their audio) deleted. */
  readonly records: number
  /** Audio and leftover files deleted without a record. */
  readonly strayFiles: number
}

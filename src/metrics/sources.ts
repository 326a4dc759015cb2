/**
 * What the metrics read from the running daemon at each scrape (docs/operations.md "Metrics").
 * Plain functions that daemon.ts builds from the parts (the channel model, the configuration,
 * the ESL link, the callback dispatcher, the journal), so that this folder imports none of them
 * and nothing is counted on the hot path: the numbers are read when Prometheus asks.
 */

export interface DomainLimit {
  /** The domain's name as configured. */
  readonly name: string
  readonly channelLimit: number
}

export interface CallbackFigures {
  /** Results waiting for an attempt or a retry, and attempts running. */
  readonly queued: number
  readonly inFlight: number
  /** Unix ms the oldest result not yet delivered was produced; undefined when none is pending. */
  readonly oldestPendingAt: number | undefined
  /** Since start: delivered (2xx), attempts failed and retried later, results given up (dead letters). */
  readonly delivered: number
  readonly retried: number
  readonly deadLettered: number
}

export interface JournalFigures {
  /** Bytes of the active segment file. */
  readonly bytes: number
  readonly deadLetters: number
  readonly pendingResults: number
  readonly openRequests: number
  readonly writeErrors: number
}

/** The recording store's counts (src/recording/types.ts RecordingStats has this shape). */
export interface RecordingFigures {
  /** Since start: recordings begun, completed with audio, failed. */
  readonly started: number
  readonly completed: number
  readonly failed: number
  /** Since start: bytes of the completed recordings' audio. */
  readonly bytesWritten: number
  /** Recordings (records) on disk now. */
  readonly onDisk: number
}

/** origination/channel-wait.ts WaitFigures has this shape. */
export interface WaitingFigures {
  /** Requests waiting now, per lower-case domain. */
  readonly waiting: ReadonlyMap<string, number>
  /** Since start: waits by how they ended (taken, timeout, full, abandoned). */
  readonly ended: Readonly<Record<'taken' | 'timeout' | 'full' | 'abandoned', number>>
  /** Since start: the time all waits took, ms. */
  readonly waitedMs: number
  /** Originates waiting now for their turn under FreeSWITCH's session rate (origination/pace.ts), on this box. */
  readonly pacedNow?: number
}

export interface MetricSources {
  /** The configured domains and their channel_limit (read at each scrape: SIGHUP applies). */
  domains(): readonly DomainLimit[]
  /** Live channels per lower-case domain name, any domain FreeSWITCH reports included (folded by the metrics). */
  liveChannels(): ReadonlyMap<string, number>
  eslConnected(): boolean
  callbacks(): CallbackFigures
  journal(): JournalFigures
  /** The recording store (issue 28); absent: every recording figure is 0. */
  recordings?(): RecordingFigures
  /** Requests waiting for a free channel (issue 31, origination/channel-wait.ts); absent: none. */
  waits?(): WaitingFigures
  /** Wall clock (ms); Date.now by default. */
  now?: () => number
}

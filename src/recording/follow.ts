/**
 * A recording's life as FreeSWITCH tells it (docs/recording.md "How FreeSWITCH records";
 * test/fixtures/freeswitch/esl/28-32), kept in the store and told to whoever asked:
 *
 * - RECORD_START (record_session armed the media bug on the answered leg): the record is made,
 *   status `recording`;
 * - RECORD_STOP (the leg hung up): `completed` with the file's size and FreeSWITCH's own
 *   `record_ms`; a bridge that never connected (`empty-file`, RECORD_DISCARDED: FreeSWITCH deleted
 *   the file) recorded nothing, and its record goes;
 * - a write FreeSWITCH refused fires no RECORD_* event at all (esl/29): the leg's CHANNEL_HANGUP
 *   carries `record_completion_cause=uri-failure`, and the recording ends `failed` with the reason;
 * - the dialplan could not arm it (refused()): `failed` too. The call goes on in every case.
 *
 * An ended recording's record is POSTed to its request's recording_callback_url, or the domain's
 * recording.callback_url, as a notice (durable, signed, retried: src/callbacks). The request's own
 * URL is known from its acceptance; after a restart of the daemon mid-call only the domain's is.
 *
 * A record an earlier run left `recording` (the daemon stopped or died before its RECORD_STOP):
 * settled at start (settleUnfinished) once FreeSWITCH says its leg is gone, from the file it wrote;
 * a leg still up ends with its own RECORD_STOP.
 *
 * Typed structurally (the event, the accepted request, the notice sink): this part depends on no
 * FreeSWITCH, origination or callback module (docs/architecture.md, side parts).
 */
import type { Logger } from '../util/logger.js'
import { ok, type Result } from '../util/result.js'
import { isRecordingId } from './id.js'
import type { RecordingRecord, RecordingStore } from './types.js'
import { viewOf } from './view.js'

/** An ESL event's headers (src/pbx FsEvent has this shape). */
export type RecordingEvent = Readonly<Partial<Record<string, string>>>

/** A request the API accepted (src/origination RequestAccepted has this shape). */
export interface AcceptedWithRecording {
  readonly plan: {
    readonly requestId: string
    readonly domain: string
    readonly recording?: { readonly id: string; readonly callbackUrl?: string; readonly retentionDays?: number }
  }
}

export interface RecordingFollowerDeps {
  readonly store: RecordingStore
  /** Every ESL event (the link's onEvent); only RECORD_* and CHANNEL_HANGUP are read. */
  readonly onEvent: (listener: (e: RecordingEvent) => void) => () => void
  /** Requests as they are accepted (the engine's onAccepted). */
  readonly onAccepted: (listener: (a: AcceptedWithRecording) => void) => () => void
  /** The domain's recording.callback_url, read when a recording ends (a reload applies). */
  readonly domainCallbackUrl: (domain: string) => string | undefined
  /** Hands a notice over (CallbackDispatcher.notify). */
  readonly notify: (domain: string, url: string, body: string, meta: { readonly requestId: string; readonly kind: 'recording' }) => void
  readonly logger: Logger
}

export interface RecordingFollower {
  /** The dialplan could not arm recording `id` of `domain` (xmlcurl DialplanRecording.recordingRefused). */
  refused(domain: string, id: string, reason: string): void
  /**
   * Ends the records an earlier run left `recording` whose leg FreeSWITCH no longer has
   * (`legExists`: true, false, or undefined when it could not be asked: tried again at the next
   * call). Resolves with how many are still unfinished.
   */
  settleUnfinished(legExists: (uuid: string) => Promise<boolean | undefined>): Promise<number>
  close(): void
}

/** How long a request's recording_callback_url is kept waiting for its recording to end. */
const CALLBACK_MEMORY_MS = 24 * 60 * 60 * 1000

/** The body of a recording notice: the record as the API shows it (GET .../recordings/{id}). */
const recordingNoticeBody = (r: RecordingRecord): string => JSON.stringify({ event: 'recording.' + r.status, recording: viewOf(r) })

export function followRecordings(deps: RecordingFollowerDeps): RecordingFollower {
  const { store, logger: log } = deps
  /** Recording id → what its request asked (callback URL, retention), until it ends. */
  const asked = new Map<string, { readonly requestId: string; readonly callbackUrl?: string; readonly retentionDays?: number; readonly at: number }>()

  const forgetOld = (now: number): void => {
    for (const [id, a] of asked) {
      if (now - a.at < CALLBACK_MEMORY_MS) break
      asked.delete(id)
    }
  }

  const tell = (r: RecordingRecord): void => {
    const a = asked.get(r.id)
    asked.delete(r.id)
    const url = a?.callbackUrl ?? deps.domainCallbackUrl(r.domain)
    log.info({ recordingId: r.id, requestId: r.requestId, status: r.status, bytes: r.bytes, reason: r.reason }, 'recording ended')
    if (url !== undefined) deps.notify(r.domain, url, recordingNoticeBody(r), { requestId: r.requestId, kind: 'recording' })
  }

  /** The recording's record, made now if it is new; why not, when the store could not write it. */
  const begin = async (domain: string, id: string, requestId: string, legs: readonly string[], at: number): Promise<Result<RecordingRecord, string>> => {
    const existing = store.get(domain, id)
    if (existing !== undefined) return ok(existing)
    const retention = asked.get(id)?.retentionDays
    const r = await store.begin({ id, requestId, domain, legs, startedAt: at, ...(retention !== undefined ? { retentionDays: retention } : {}) })
    if (!r.ok) log.error({ recordingId: id, domain, error: r.error }, 'recording record could not be written')
    return r
  }

  const failed = async (domain: string, id: string, requestId: string, legs: readonly string[], reason: string) => {
    const begun = await begin(domain, id, requestId, legs, Date.now())
    if (!begun.ok) {
      // The store cannot keep even its record (the folder it cannot write is the cause, often):
      // whoever asked still hears that the recording failed, and why.
      const at = new Date().toISOString()
      return tell({ id, requestId, domain: domain.toLowerCase(), legs: [...legs], startedAt: at, bytes: 0, format: 'wav', status: 'failed', reason: `${reason}; its record could not be kept: ${begun.error}` })
    }
    if (begun.value.status !== 'recording') return
    const r = await store.fail(id, reason)
    if (r.ok) tell(r.value)
  }

  /** The recording of an event's leg: its id (a UUID, else ignored), domain and request. */
  const recordingOf = (e: RecordingEvent) => {
    const id = e['variable_cod_recording_id']
    const domain = e['variable_cod_domain']
    const requestId = e['variable_cod_request_id']
    const uuid = e['Unique-ID']
    if (id === undefined || !isRecordingId(id) || domain === undefined || requestId === undefined || uuid === undefined) return undefined
    return { id, domain, requestId, uuid }
  }

  /** Epoch ms of the event (FreeSWITCH's microseconds), else now. */
  const timeOf = (e: RecordingEvent): number => {
    const us = Number(e['Event-Date-Timestamp'])
    return Number.isFinite(us) && us > 0 ? Math.floor(us / 1000) : Date.now()
  }

  const onEvent = (e: RecordingEvent): void => {
    const name = e['Event-Name']
    if (name !== 'RECORD_START' && name !== 'RECORD_STOP' && name !== 'CHANNEL_HANGUP') return
    const rec = recordingOf(e)
    if (rec === undefined) return
    // An IVR <Record> on the same leg (src/ivr/elements/record.ts) fires RECORD_START/STOP with the
    // leg's cod_recording_id too, for a file of its own (`<its id>.wav`, made by the store): not
    // this recording's (test/fixtures/freeswitch/esl/40-record-app.txt).
    const named = /([0-9a-f-]{36})\.wav$/.exec(e['Record-File-Path'] ?? '')?.[1]
    if (name !== 'CHANNEL_HANGUP' && named !== undefined && isRecordingId(named) && named !== rec.id) return
    // One recording's events are handled one after the other (a RECORD_STOP may come while its
    // RECORD_START's record is still being written).
    inOrder(rec.id, async () => {
      if (name === 'RECORD_START') {
        await begin(rec.domain, rec.id, rec.requestId, [rec.uuid], timeOf(e))
        return
      }
      if (name === 'CHANNEL_HANGUP') {
        // A refused write leaves only this trace (esl/29); a recording that began ends at RECORD_STOP.
        if (e['variable_record_completion_cause'] !== 'uri-failure' || store.get(rec.domain, rec.id)?.status === 'completed') return
        await failed(rec.domain, rec.id, rec.requestId, [rec.uuid], 'FreeSWITCH could not write the recording file (record_completion_cause uri-failure; its log says why)')
        return
      }
      // RECORD_STOP
      const cause = e['Record-Completion-Cause'] ?? e['variable_record_completion_cause']
      if (e['variable_RECORD_DISCARDED'] === 'true' || cause === 'empty-file') {
        // Nothing was connected: no conversation, no file (FreeSWITCH deleted it), no recording.
        if (store.get(rec.domain, rec.id)?.status === 'recording') await store.remove(rec.domain, rec.id)
        asked.delete(rec.id)
        return
      }
      const begun = await begin(rec.domain, rec.id, rec.requestId, [rec.uuid], timeOf(e))
      if (!begun.ok || begun.value.status !== 'recording') return
      const ms = Number(e['variable_record_ms'])
      const other = e['variable_bridge_uuid'] ?? e['Other-Leg-Unique-ID']
      const r = await store.complete(rec.id, {
        ...(Number.isFinite(ms) && ms >= 0 ? { durationMs: ms } : {}),
        ...(other !== undefined && other !== rec.uuid ? { legs: [rec.uuid, other] } : {}),
      })
      if (!r.ok) log.error({ recordingId: rec.id, error: r.error }, 'recording could not be completed')
      else tell(r.value)
    })
  }

  /** Per recording id, the tail of its work: each new piece runs after the one before. */
  const chains = new Map<string, Promise<void>>()
  const inOrder = (id: string, work: () => Promise<void>): void => {
    const next = (chains.get(id) ?? Promise.resolve())
      .then(work)
      .catch((err: unknown) => log.error({ err, recordingId: id }, 'recording event failed'))
    chains.set(id, next)
    void next.then(() => {
      if (chains.get(id) === next) chains.delete(id)
    })
  }

  const offEvents = deps.onEvent(onEvent)
  const offAccepted = deps.onAccepted((a) => {
    const rec = a.plan.recording
    if (rec === undefined) return
    const now = Date.now()
    forgetOld(now)
    asked.set(rec.id, {
      requestId: a.plan.requestId,
      ...(rec.callbackUrl !== undefined ? { callbackUrl: rec.callbackUrl } : {}),
      ...(rec.retentionDays !== undefined ? { retentionDays: rec.retentionDays } : {}),
      at: now,
    })
  })

  return {
    async settleUnfinished(legExists) {
      let left = 0
      for (const r of store.unfinished()) {
        const leg = r.legs[0]
        const exists = leg === undefined ? false : await legExists(leg)
        if (exists !== false) {
          left++
          continue
        }
        inOrder(r.id, async () => {
          if (store.get(r.domain, r.id)?.status !== 'recording') return
          // FreeSWITCH finished the file while the daemon was away: its size and header tell the rest.
          const ended = await store.complete(r.id)
          if (ended.ok) tell(ended.value)
        })
      }
      return left
    },
    refused(domain, id, reason) {
      if (!isRecordingId(id)) return
      const requestId = asked.get(id)?.requestId ?? 'unknown'
      inOrder(id, () => failed(domain, id, requestId, [], `the dialplan could not arm the recording: ${reason}`))
    },
    close() {
      offEvents()
      offAccepted()
      asked.clear()
    },
  }
}

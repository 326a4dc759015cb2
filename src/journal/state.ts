/**
 * What the journal's records add up to: the live requests, results and dead letters, kept in
 * memory and updated by every record (read at start, appended while running). From it come the
 * replay at start and the snapshot a compaction writes: the fewest records that rebuild the same
 * state. Applying a record twice changes nothing, so a segment read twice (a crash between a
 * compaction's rename and the old segment's removal) is harmless.
 */
import type { JournalRecord } from './record.js'
import {
  IDEMPOTENCY_TTL_MS,
  type AcceptedRequest,
  type DeadLetter,
  type DeliveryProgress,
  type JournalReplay,
  type ResultRecord,
} from './types.js'

type AcceptedRec = Extract<JournalRecord, { k: 'accepted' }>
type IntendedRec = Extract<JournalRecord, { k: 'intended' }>

interface RequestEntry {
  readonly rec: AcceptedRec
  /** A result or `ended` was recorded: kept only while its Idempotency-Key lives. */
  open: boolean
}

interface ResultEntry {
  readonly rec: ResultRecord
  readonly at: number
  progress: DeliveryProgress | undefined
  dead: { readonly reason: string; readonly attempts: number; readonly at: number } | undefined
}

/**
 * A result or `ended` may be recorded before its request's `accepted` (the call ended in the
 * few ms between FreeSWITCH's acceptance and the API's append): remembered this long, so that
 * the late `accepted` does not open a request that is over.
 */
const EARLY_END_TTL_MS = 10 * 60 * 1000

/** How many ended request ids are remembered (a day of ended requests is not needed: minutes are). */
const RECENTLY_ENDED = 100_000

export class JournalState {
  private readonly requests = new Map<string, RequestEntry>()
  /** Intended, neither accepted nor unplaced yet (types.ts OriginateIntent). */
  private readonly intents = new Map<string, IntendedRec>()
  private readonly results = new Map<string, ResultEntry>()
  /** Request ids ended before their `accepted` was seen, with the time. */
  private readonly endedEarly = new Map<string, number>()
  /** The latest ended request ids (insertion order is age), so that a second end writes nothing. */
  private readonly recentlyEnded = new Set<string>()

  apply(r: JournalRecord): void {
    switch (r.k) {
      case 'intended':
        // An intent after its request's `accepted` (a segment read twice) settles nothing again.
        if (!this.requests.has(r.requestId)) this.intents.set(r.requestId, r)
        return
      case 'unplaced':
        this.intents.delete(r.requestId)
        return
      case 'accepted': {
        this.intents.delete(r.requestId)
        const early = this.endedEarly.get(r.requestId)
        if (early !== undefined) this.endedEarly.delete(r.requestId)
        const existing = this.requests.get(r.requestId)
        this.requests.set(r.requestId, { rec: r, open: existing?.open ?? early === undefined })
        return
      }
      case 'ended':
        return this.endRequest(r.requestId, r.at)
      case 'notice':
      case 'result': {
        if (r.k === 'result') this.endRequest(r.requestId, r.at)
        if (this.results.has(r.deliveryId)) return
        const { k: _k, at, ...rec } = r
        this.results.set(r.deliveryId, { rec, at, progress: undefined, dead: undefined })
        return
      }
      case 'attempted': {
        const e = this.results.get(r.deliveryId)
        if (e !== undefined && e.dead === undefined) {
          e.progress = {
            attempts: r.attempts,
            nextAttemptAt: r.nextAttemptAt,
            giveUpAt: r.giveUpAt,
            ...(r.receiverAsked === true ? { receiverAsked: true } : {}),
          }
        }
        return
      }
      case 'acked':
        this.results.delete(r.deliveryId)
        return
      case 'dead': {
        const e = this.results.get(r.deliveryId)
        if (e !== undefined) e.dead = { reason: r.reason, attempts: r.attempts, at: r.at }
        return
      }
      case 'revived': {
        const e = this.results.get(r.deliveryId)
        if (e === undefined || e.dead === undefined) return
        e.progress = { attempts: e.dead.attempts, nextAttemptAt: 0, giveUpAt: r.giveUpAt }
        e.dead = undefined
        return
      }
    }
  }

  private endRequest(requestId: string, at: number): void {
    this.recentlyEnded.add(requestId)
    if (this.recentlyEnded.size > RECENTLY_ENDED) {
      const oldest = this.recentlyEnded.values().next()
      if (oldest.done !== true) this.recentlyEnded.delete(oldest.value)
    }
    const e = this.requests.get(requestId)
    if (e === undefined) this.endedEarly.set(requestId, at)
    // Without an Idempotency-Key nothing of an ended request is needed any more.
    else if (e.rec.idempotency === undefined) this.requests.delete(requestId)
    else e.open = false
  }

  /** Drops what can no longer matter: ended requests whose key expired, stale early ends. */
  prune(now: number): void {
    for (const [id, e] of this.requests) {
      if (!e.open && (e.rec.idempotency === undefined || e.rec.at + IDEMPOTENCY_TTL_MS <= now)) this.requests.delete(id)
    }
    for (const [id, at] of this.endedEarly) if (at + EARLY_END_TTL_MS <= now) this.endedEarly.delete(id)
  }

  /** The records that rebuild this state (after prune): what a compaction writes. */
  snapshot(): JournalRecord[] {
    const out: JournalRecord[] = [...this.intents.values()]
    for (const e of this.requests.values()) {
      out.push(e.rec)
      if (!e.open) out.push({ k: 'ended', at: e.rec.at, requestId: e.rec.requestId })
    }
    for (const [requestId, at] of this.endedEarly) out.push({ k: 'ended', at, requestId })
    for (const e of this.results.values()) {
      // A result record also ends its request; that is harmless here: it was ended already.
      const { notice } = e.rec
      out.push(notice === undefined ? { k: 'result', at: e.at, ...e.rec } : { k: 'notice', at: e.at, ...e.rec, notice })
      if (e.progress !== undefined) out.push({ k: 'attempted', at: e.at, deliveryId: e.rec.deliveryId, ...e.progress })
      if (e.dead !== undefined) {
        out.push({ k: 'dead', at: e.dead.at, deliveryId: e.rec.deliveryId, reason: e.dead.reason, attempts: e.dead.attempts })
      }
    }
    return out
  }

  hasResult(deliveryId: string): boolean {
    return this.results.has(deliveryId)
  }

  /** The request was ended lately (by its result or `ended`): another `ended` is not needed. */
  wasEnded(requestId: string): boolean {
    return this.recentlyEnded.has(requestId)
  }

  deadLetters(): DeadLetter[] {
    const out: DeadLetter[] = []
    for (const e of this.results.values()) {
      if (e.dead !== undefined) out.push({ result: e.rec, attempts: e.dead.attempts, reason: e.dead.reason, deadAt: e.dead.at })
    }
    return out
  }

  counts(): { openRequests: number; pendingResults: number; deadLetters: number } {
    let open = 0
    for (const e of this.requests.values()) if (e.open) open++
    let dead = 0
    for (const e of this.results.values()) if (e.dead !== undefined) dead++
    return { openRequests: open, pendingResults: this.results.size - dead, deadLetters: dead }
  }

  replay(now: number): JournalReplay {
    const openRequests: (AcceptedRequest & { acceptedAt: number })[] = []
    const idempotencyKeys: JournalReplay['idempotencyKeys'][number][] = []
    for (const { rec, open } of this.requests.values()) {
      const { k: _k, at, ...accepted } = rec
      if (open) openRequests.push({ ...accepted, acceptedAt: at })
      if (rec.idempotency !== undefined && at + IDEMPOTENCY_TTL_MS > now) {
        idempotencyKeys.push({ domain: rec.domain, requestId: rec.requestId, fields: rec.idempotency, acceptedAt: at })
      }
    }
    const pendingResults = [...this.results.values()]
      .filter((e) => e.dead === undefined)
      .map((e) => ({ result: e.rec, progress: e.progress }))
    const unsettledIntents = [...this.intents.values()].map(({ k: _k, at, ...intent }) => ({ ...intent, intendedAt: at }))
    return { openRequests, unsettledIntents, pendingResults, deadLetters: this.deadLetters(), idempotencyKeys }
  }
}

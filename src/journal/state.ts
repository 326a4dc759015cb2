/**
 * What the journal's records add up to: the live requests, results and dead letters, kept in
 * memory and updated by every record (read at start, appended while running). From it come the
 * replay at start and the snapshot a compaction writes: the fewest records that rebuild the same
 * state. Applying a record twice changes nothing, so a segment read twice (a crash between a
 * compaction's rename and the old segment's removal) is harmless.
 */
import { RecentIds } from '../util/recent-ids.js'
import type { JournalRecord } from './record.js'
import {
  FOLLOWING_TTL_MS,
  IDEMPOTENCY_TTL_MS,
  type AcceptedRequest,
  type DeadLetter,
  type DeliveryProgress,
  type JournalReplay,
  type ResultRecord,
  type StatusFollowing,
  type StatusSubscription,
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

/** How long an ended request is remembered so that a second end writes nothing (it needs seconds)... */
const RECENTLY_ENDED_MS = 5 * 60 * 1000
/** ...and at most how many ended (and followed) request ids, whatever their age. */
const RECENTLY_ENDED = 100_000

/** A request's status progress (types.ts StatusFollowing), with the time it began. */
interface FollowingEntry {
  readonly domain: string
  /** From its `accepted`; until that is read, the notice's URL and no events (nothing more is sent). */
  status: StatusSubscription
  origin: readonly string[]
  sequence: number
  readonly sent: string[]
  readonly at: number
}

export class JournalState {
  private readonly requests = new Map<string, RequestEntry>()
  /** Intended, neither accepted nor unplaced yet (types.ts OriginateIntent). */
  private readonly intents = new Map<string, IntendedRec>()
  private readonly results = new Map<string, ResultEntry>()
  /** Request ids ended before their `accepted` was seen, with the time. */
  private readonly endedEarly = new Map<string, number>()
  /**
   * Requests ended lately, so that a second end writes nothing: the `ended` an engine writes one
   * microtask after the result (file-journal.ts ended).
   */
  private readonly recentlyEnded = new RecentIds(RECENTLY_ENDED_MS, RECENTLY_ENDED)
  /** Requests whose status events are being followed (types.ts StatusFollowing). */
  private readonly following = new Map<string, FollowingEntry>()
  /** Requests `followed` lately: a segment read twice does not open their progress again (kept as long as a progress is). */
  private readonly recentlyFollowed = new RecentIds(FOLLOWING_TTL_MS, RECENTLY_ENDED)

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
        if (r.status !== undefined) {
          const f = this.followingOf(r.requestId, r.domain, r.status.url, r.at)
          if (f !== undefined) {
            f.status = r.status
            f.origin = r.uuids
          }
        }
        return
      }
      case 'followed':
        this.following.delete(r.requestId)
        this.recentlyFollowed.add(r.requestId, r.at)
        return
      case 'following': {
        if (this.recentlyFollowed.has(r.requestId)) return
        const { k: _k, at, requestId, ...rest } = r
        this.following.set(requestId, { ...rest, sent: [...rest.sent], at })
        return
      }
      case 'ended':
        return this.endRequest(r.requestId, r.at)
      case 'notice':
      case 'result': {
        if (r.k === 'result') this.endRequest(r.requestId, r.at)
        const mark = r.k === 'notice' ? r.notice.status : undefined
        if (mark !== undefined) {
          const f = this.followingOf(r.requestId, r.domain, r.url, r.at)
          const said = `${mark.uuid} ${mark.event}`
          if (f !== undefined && !f.sent.includes(said)) {
            f.sent.push(said)
            f.sequence = Math.max(f.sequence, mark.sequence)
          }
        }
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

  /** The request's status progress, begun if need be; undefined once it was `followed`. */
  private followingOf(requestId: string, domain: string, url: string, at: number): FollowingEntry | undefined {
    if (this.recentlyFollowed.has(requestId)) return undefined
    let f = this.following.get(requestId)
    if (f === undefined) {
      f = { domain, status: { url, events: [] }, origin: [], sequence: 0, sent: [], at }
      this.following.set(requestId, f)
    }
    return f
  }

  private endRequest(requestId: string, at: number): void {
    this.recentlyEnded.add(requestId, at)
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
    for (const [id, f] of this.following) if (f.at + FOLLOWING_TTL_MS <= now) this.following.delete(id)
  }

  /** The records that rebuild this state (after prune): what a compaction writes. */
  snapshot(): JournalRecord[] {
    const out: JournalRecord[] = [...this.intents.values()]
    for (const e of this.requests.values()) {
      // Its status events were followed to the end: the subscription must not open them again.
      const { status: _status, ...withoutStatus } = e.rec
      out.push(e.rec.status !== undefined && !this.following.has(e.rec.requestId) ? withoutStatus : e.rec)
      if (!e.open) out.push({ k: 'ended', at: e.rec.at, requestId: e.rec.requestId })
    }
    for (const [requestId, at] of this.endedEarly) out.push({ k: 'ended', at, requestId })
    for (const [requestId, f] of this.following) {
      out.push({ k: 'following', at: f.at, requestId, domain: f.domain, status: { url: f.status.url, events: [...f.status.events] }, origin: [...f.origin], sequence: f.sequence, sent: [...f.sent] })
    }
    for (const e of this.results.values()) {
      // A result record also ends its request; that is harmless here: it was ended already.
      const { notice } = e.rec
      if (notice === undefined) out.push({ k: 'result', at: e.at, ...e.rec })
      else {
        // A status mark of a request followed to its end would open its progress again at replay.
        const { status: mark, ...unmarked } = notice
        const keep = mark !== undefined && this.following.has(e.rec.requestId)
        out.push({ k: 'notice', at: e.at, ...e.rec, notice: keep ? notice : unmarked })
      }
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
    const statusFollowing: StatusFollowing[] = [...this.following].map(([requestId, f]) => ({
      requestId,
      domain: f.domain,
      status: f.status,
      origin: [...f.origin],
      sequence: f.sequence,
      sent: [...f.sent],
    }))
    return { openRequests, unsettledIntents, pendingResults, deadLetters: this.deadLetters(), idempotencyKeys, statusFollowing }
  }
}

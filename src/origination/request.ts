/**
 * One accepted-or-not request, from its admission to its one result: the single place where a
 * request's life is written. It owns
 *
 * - its phase (the state machine below, every transition a method of this class);
 * - its channel reservations (channel-limit.ts: its originator legs, its destination's hold);
 * - its originates (attempt.ts: the one ringing now, which closing cancels);
 * - its journal record (intents.ts: written once before its first originate, unwritten when the
 *   request is refused after it);
 * - the API's reply (`reply`, decided once: accepted with its leg UUIDs, or a refusal);
 * - its result, reported once to the ledger (requests.ts: CTI listeners and the callback).
 *
 * How it is placed (one originate, or a hunt) is the strategies' business (single-call.ts,
 * group-call.ts); they drive it only through these methods.
 *
 *     placing ──accept(uuids)──▶ accepted ──settle(outcome)──▶ settled   (result reported)
 *        │
 *        └────withdraw(refusal)──▶ withdrawn                           (the refusal is the reply)
 *
 * `stopping` is not a phase: the engine is closing, and a request in any live phase stops
 * ringing; a placing request that has not rung yet is withdrawn at once.
 */
import type { DomainDirectory } from '../directory/directory.js'
import type { Runtime } from '../runtime/store.js'
import { delay, type Clock } from '../util/clock.js'
import { err, ok, type Result } from '../util/result.js'
import type { SharedLimit } from './admission.js'
import type { Attempt, AttemptEnd, Attempts } from './attempt.js'
import type { LegCanceller } from './cancel.js'
import type { ChannelLimiter } from './channel-limit.js'
import type { ChannelWaits } from './channel-wait.js'
import type { OriginateIntents } from './intents.js'
import type { LegPlan } from './originate-spec.js'
import type { AttemptOutcome } from './outcome.js'
import type { OriginationAccepted, OriginationPlan } from './plan.js'
import { refusal, STOPPING, type OriginationRefusal } from './refusal.js'

export type RequestPhase = 'placing' | 'accepted' | 'settled' | 'withdrawn'

/** How often a request that may still wait asks the cluster again after it said full. */
const CLUSTER_RETRY_MS = 200

/** The API's answer to a request: given once, when FreeSWITCH accepted its first originate or it was refused. */
export type RequestReply = Result<OriginationAccepted, OriginationRefusal>

/** Where a request tells what became of it (requests.ts). */
export interface RequestLedger {
  /** The API is told the request is placed, with these legs. */
  accepted(req: OriginationRequest, uuids: readonly string[]): void
  /** The request has ended: it no longer counts as in flight. */
  leave(requestId: string): void
  /** Reports an accepted request's result, once (the request makes sure). */
  report(req: OriginationRequest, outcome: AttemptOutcome): void
}

/** What every request of one engine shares (made once by engine.ts). */
export interface RequestServices {
  readonly limiter: ChannelLimiter
  /** Requests waiting for a free channel, per domain (channel-wait.ts). */
  readonly waits: ChannelWaits
  readonly attempts: Attempts
  readonly cancel: LegCanceller
  readonly ledger: RequestLedger
  readonly runtime: () => Runtime
  /** In a cluster: the limit across nodes, asked after this node's own (docs/cluster.md). */
  readonly shared?: SharedLimit
  /** The engine's clock: a request's wait for a channel counts on it. */
  readonly clock: Clock
  /** The journal's write-ahead record; without it nothing is written before an originate. */
  readonly intents?: OriginateIntents
}

export class OriginationRequest {
  readonly plan: OriginationPlan
  /** The domain as configured (channel variables, dialplan context). */
  readonly domainName: string
  /** Lower case: the key of counts and queues. */
  readonly domain: string
  /** The API's reply: resolved by accept() or withdraw(), whichever comes first. */
  readonly reply: Promise<RequestReply>

  #phase: RequestPhase = 'placing'
  #stopping = false
  /** The originate ringing now (or being accepted): stop() cancels it. */
  #attempt: Attempt | undefined
  /** Its intent is written: a withdrawal unwrites it. */
  #intended = false
  #answer!: (r: RequestReply) => void
  readonly #services: RequestServices
  /** Ends a wait for a channel: the engine closes (stop()), or the client went away (its signal). */
  readonly #abandon = new AbortController()

  constructor(plan: OriginationPlan, dom: DomainDirectory, services: RequestServices, clientGone?: AbortSignal) {
    this.plan = plan
    this.domainName = dom.name
    this.domain = dom.name.toLowerCase()
    this.#services = services
    this.reply = new Promise((resolve) => (this.#answer = resolve))
    clientGone?.addEventListener('abort', () => this.#abandon.abort(), { once: true })
  }

  get requestId(): string {
    return this.plan.requestId
  }

  get phase(): RequestPhase {
    return this.#phase
  }

  /** The engine is closing: nothing more is rung for this request. */
  get stopping(): boolean {
    return this.#stopping
  }

  get abandoned(): AbortSignal {
    return this.#abandon.signal
  }

  /** The domain's channel_limit now (a reload may change it between a hunt's members). */
  #limit(): number {
    return this.#services.runtime().directory.domain(this.plan.domain)?.config.channel_limit ?? 0
  }

  // ---- channel reservations (channel-limit.ts) ----

  /**
   * Reserves the first legs this request rings and its destination's slots, all or nothing, on this
   * node and then (in a cluster) across nodes. No await between this node's check and its
   * reservation: two requests can never both take the last channel.
   */
  async reserve(uuids: readonly string[], destinationSlots: number): Promise<Result<void, OriginationRefusal>> {
    const { clock } = this.#services
    const deadline = clock.now() + (this.plan.waitMs ?? 0)
    for (;;) {
      const local = await this.#reserveHere(uuids, destinationSlots, Math.max(0, deadline - clock.now()))
      if (!local.ok) return local
      const shared = await this.#reserveShared(uuids, destinationSlots)
      if (shared.ok || shared.error.reason !== 'channel_limit_reached' || clock.now() + CLUSTER_RETRY_MS > deadline) return shared
      // The cluster is full and the request may still wait: again after a while (the count is the cluster's).
      await delay(clock, CLUSTER_RETRY_MS)
      if (this.#abandon.signal.aborted) return err(STOPPING)
    }
  }

  /** This node's limiter: at once, or as the domain's oldest waiter within `waitMs` (channel-wait.ts). */
  async #reserveHere(uuids: readonly string[], destinationSlots: number, waitMs: number): Promise<Result<void, OriginationRefusal>> {
    if (this.#phase !== 'placing' || this.#stopping) return err(STOPPING)
    const { limiter, waits } = this.#services
    const take = (): boolean =>
      this.#phase === 'placing' && limiter.tryReserve(this.plan.domain, this.#limit(), { uuids, destination: { requestId: this.requestId, slots: destinationSlots } })
    // Nobody waits ahead of it (first come, first served) and it fits: taken now.
    if (waits.mayTakeWithoutWaiting(this.plan.domain) && take()) return ok(undefined)
    const refused = (why: string) =>
      refusal(
        'channel_limit_reached',
        `domain ${this.plan.domain} would exceed its channel_limit of ${this.#limit()} (${limiter.inUse(this.plan.domain)} in use, ${uuids.length + destinationSlots} needed)${why}`,
      )
    if (waitMs <= 0) return err(refused(waits.waiting(this.plan.domain) > 0 ? `; ${waits.waiting(this.plan.domain)} request(s) wait ahead of it` : ''))
    const maxWaiting = this.#services.runtime().directory.domain(this.plan.domain)?.config.limits.max_waiting ?? 0
    const end = await waits.wait(this.plan.domain, waitMs, maxWaiting, take, this.#abandon.signal)
    switch (end) {
      case 'taken':
        return ok(undefined)
      case 'timeout':
        return err(refused(` after waiting ${this.plan.waitMs ?? waitMs} ms`))
      case 'full':
        return err(refused(`, and ${maxWaiting} request(s) already wait (limits.max_waiting)`))
      case 'abandoned':
        return err(STOPPING)
    }
  }

  /** In a cluster, the other nodes' channels count too (this node's reservation already counts in localInUse). */
  async #reserveShared(uuids: readonly string[], destinationSlots: number): Promise<Result<void, OriginationRefusal>> {
    const { limiter, shared } = this.#services
    if (shared === undefined) return ok(undefined)
    const r = await shared.reserve(this.plan.domain, this.#limit(), uuids.length + destinationSlots, limiter.inUse(this.plan.domain))
    if (r.ok && !this.#stopping) return r
    limiter.release(...uuids)
    limiter.dropHold(this.requestId)
    this.#services.waits.poke(this.plan.domain)
    return r.ok ? err(STOPPING) : r
  }

  /**
   * Reserves a later hunt member's legs (this node only: docs/cluster.md); the destination is held
   * since the first reservation. False when they do not fit.
   */
  reserveMore(uuids: readonly string[]): boolean {
    return this.#services.limiter.tryReserve(this.plan.domain, this.#limit(), { uuids })
  }

  /** Ends the reservation of legs that will not be rung, or that FreeSWITCH created or ended. */
  releaseLegs(uuids: readonly string[]): void {
    this.#services.limiter.release(...uuids)
    this.#services.waits.poke(this.plan.domain)
  }

  // ---- originates (attempt.ts) ----

  /**
   * Rings these legs (reserved already) in one originate. Before the request's first originate its
   * intent is made durable. Resolves once FreeSWITCH accepted it, with the end of the originate; a
   * refusal releases the legs' reservations.
   */
  async ring(legs: readonly LegPlan[], timeoutSec: number): Promise<Result<AttemptEnd, OriginationRefusal>> {
    const uuids = legs.map((l) => l.uuid)
    const { intents, attempts } = this.#services
    if (intents !== undefined && !this.#intended && !this.#stopping) {
      this.#intended = true
      await intents.intended(this.plan, uuids)
    }
    if (this.#stopping || this.#phase === 'settled' || this.#phase === 'withdrawn') {
      this.releaseLegs(uuids)
      return err(STOPPING)
    }
    return attempts.start(this, legs, timeoutSec)
  }

  /** attempt.ts tells its owner which originate is ringing for it (before FreeSWITCH accepted it). */
  attemptBegan(a: Attempt): void {
    this.#attempt = a
  }

  // ---- transitions ----

  /** FreeSWITCH accepted the first originate: the API answers with these legs; a result will follow. */
  accept(uuids: readonly string[]): void {
    if (this.#phase !== 'placing') return
    this.#phase = 'accepted'
    this.#answer(ok({ uuids }))
    this.#services.ledger.accepted(this, uuids)
  }

  /** Not placed after all: the API answers with the refusal; nothing of the request remains. */
  withdraw(why: OriginationRefusal): void {
    if (this.#phase !== 'placing') return
    this.#phase = 'withdrawn'
    this.#abandon.abort()
    this.#services.limiter.dropHold(this.requestId)
    this.#services.waits.poke(this.plan.domain)
    // Withdrawn means FreeSWITCH never saw an originate of it (attempt.ts): the intent placed nothing.
    if (this.#intended) this.#services.intents?.unplaced(this.plan)
    this.#services.ledger.leave(this.requestId)
    this.#answer(err(why))
  }

  /**
   * The request's outcome is known. Accepted, it is reported once and the destination's hold follows
   * the answered leg (or ends); still placing (closing overtook it), it is withdrawn instead.
   */
  settle(outcome: AttemptOutcome): void {
    if (this.#phase === 'placing') return this.withdraw(STOPPING)
    if (this.#phase !== 'accepted') return
    this.#phase = 'settled'
    const { limiter, ledger } = this.#services
    // The destination's hold lasts while the answered leg lives; unanswered, nothing more comes.
    if (outcome.answered) limiter.bindWinner(this.requestId, outcome.uuid)
    else limiter.dropHold(this.requestId)
    this.#services.waits.poke(this.plan.domain)
    ledger.leave(this.requestId)
    ledger.report(this, outcome)
  }

  /**
   * The engine is closing: the originate ringing now is cancelled (and reported so), and every leg
   * FreeSWITCH may be creating for it right now is hung up. A request that has rung nothing yet
   * is refused at once.
   */
  stop(): void {
    if (this.#stopping) return
    this.#stopping = true
    this.#abandon.abort()
    if (this.#phase === 'placing' && this.#attempt === undefined) return this.withdraw(STOPPING)
    if (this.#attempt !== undefined) this.#services.attempts.cancel(this.#attempt)
    this.#services.cancel.hangupRequest(this.requestId)
  }
}

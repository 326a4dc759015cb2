/**
 * Delivery of result callbacks (docs/design.md "Result callbacks"; docs/callbacks.md): the part that
 * ties the others together and keeps every delivery's state.
 *
 * One delivery per final result: a delivery id (UUID) and the body bytes are fixed when the
 * engine hands the result over, written to the journal (src/journal/), and only once that record
 * is durable is the first attempt made. Every attempt re-sends exactly those bytes under that id,
 * also after a crash or a restart (start() delivers what the journal still holds), so a receiver
 * can drop duplicates and verify the signature over the bytes it got. At least once, never lost.
 *
 * Retries go by time (schedule.ts): exponential backoff with jitter, capped, for
 * give_up_after_ms (24 h by default); each failed attempt's schedule is journaled, so a restart
 * continues it: the attempt count and give-up time carry on, and the next attempt comes at once
 * (a restart is a fresh chance) unless the receiver had asked for a later time (Retry-After).
 * A result that still fails then, or is refused for good (4xx, 3xx), becomes a
 * dead letter: logged at error level with its body, kept in the journal, listed by
 * listDeadLetters() and sent again by redeliver().
 *
 * Isolation: each domain has its own queue (domain-queues.ts), so a slow or dead receiver only
 * ever occupies its own domain's slots. A delivery waiting for its retry holds no slot at all.
 *
 * Notices (notify(): status events, finished recordings, ticketing events; journal/types.ts
 * NoticeFields) travel the same way with their own delivery ids. Those of one order key (a
 * request's status events) go one at a time in sequence: the next is held until the one before it
 * is delivered or given up, also after a restart.
 *
 * Longer than our usual ~400 lines: the deliveries' state (in flight, waiting, adopted from a
 * peer, dead) is one map that every path here changes under the same rules; the parts without
 * that state are apart (policy, attempt, schedule, body, delivery, domain-queues).
 */
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { DeadLetter, Journal, NoticeFields, PendingResult, ResultRecord } from '../journal/types.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import type { OutboundTransport } from '../net/transport.js'
import { attemptDelivery, DEFAULT_USER_AGENT } from './attempt.js'
import { callbackBody } from './body.js'
import { logFields, newDelivery, type Delivery } from './delivery.js'
import { DomainQueues } from './domain-queues.js'
import { FinalResults } from './final-results.js'
import { describeError, parseTarget, type AttemptOutcome } from './policy.js'
import { nextRetryStep } from './schedule.js'
import { importSpool } from './spool-import.js'
import { createCallbackTransport } from './transport.js'
import type { CallbackSettings, CallbackSink, CallResult } from './types.js'

export type { CallbackSettings, CallbackSink, CallResult } from './types.js'

export interface CallbackDispatcherOptions {
  /** The `callbacks` section of daemon.yaml, read at each use so that SIGHUP applies. */
  settings: () => CallbackSettings
  /**
   * The secret that signs a delivery: the domain's callback_secret, or for a notice with a
   * `signer` (NoticeFields) that signer's; undefined: not signed.
   */
  secretFor: (domain: string, signer?: string) => string | undefined
  /** Where every result is durable before its first attempt (src/journal/). */
  journal: Journal
  logger: Logger
  /** Wall clock (ms): signature timestamps, Retry-After dates, give-up times. */
  now?: () => number
  /** Jitter source in [0, 1). */
  random?: () => number
  userAgent?: string
  /** Where attempts are sent; default one with `settings().allow` (callbacks.allow). */
  transport?: OutboundTransport
}

export interface CallbackStats {
  /** Queued for an attempt or waiting for a retry. */
  pending: number
  inFlight: number
  delivered: number
  /** Made dead letters since start (given up, or refused for good by the receiver). */
  failed: number
  /** Left pending in the journal at shutdown: delivered at the next start. */
  spooled: number
  /** Dead letters in the journal now. */
  deadLetters: number
}

/** What the metrics read besides stats() (src/metrics/, at scrape time). */
export interface CallbackBacklog {
  /** Failed attempts tried again later, since start. */
  retried: number
  /** Unix ms the oldest result not yet delivered was produced; undefined when none is. */
  oldestPendingAt: number | undefined
}

/** Where the dispatcher is in its life; it only moves forward. */
type Phase =
  | { readonly kind: 'running' }
  /** shutdown() began: attempts go on until the deadline (monotonic ms). */
  | { readonly kind: 'closing'; readonly deadlineAt: number }
  /** The deadline passed: no more attempts; what is left stays pending in the journal. */
  | { readonly kind: 'closed' }

/** The request id goes into a header: anything else is percent-encoded. */
const HEADER_SAFE = /^[\x21-\x7e]{1,200}$/

const mono = (): number => performance.now()

/** How many of the results replayed at start are queued in one turn of the event loop. */
const REPLAY_SLICE = 1000

export class CallbackDispatcher implements CallbackSink {
  private readonly settings: () => CallbackSettings
  private readonly secretFor: (domain: string, signer?: string) => string | undefined
  private readonly journal: Journal
  private readonly logger: Logger
  private readonly now: () => number
  private readonly random: () => number
  private readonly userAgent: string
  private readonly transport: OutboundTransport

  private readonly active = new Map<string, Delivery>()
  private readonly queues = new DomainQueues()
  private readonly finals = new FinalResults(() => this.now())
  /** Notices of one order key not done yet, in sequence order: only the first is ever tried. */
  private readonly ordered = new Map<string, Delivery[]>()
  /**
   * The next sequence number of each order key with a notice pending (journal replay continues
   * it). Forgotten once none is (forgetOrderIfIdle), so that a key per request is not kept for
   * the daemon's life; the key's next notice starts again at 0, as after a restart.
   */
  private readonly nextSeq = new Map<string, number>()
  /** Notices of each order key handed over whose journal record is not durable yet. */
  private readonly journalingOfKey = new Map<string, number>()
  /** Results handed over whose journal record is not durable yet. */
  private journaling = 0
  /** Results the journal held at start that are not queued yet (queueReplayedSlice). */
  private replayed: { readonly results: readonly PendingResult[]; next: number } | undefined
  private idleWaiters: Array<() => void> = []
  /** Aborts in-flight attempts at the shutdown deadline. */
  private readonly abort = new AbortController()
  private readonly counts = { delivered: 0, failed: 0, left: 0, retried: 0 }

  private started = false
  private phase: Phase = { kind: 'running' }
  private shutdownResult: Promise<{ delivered: number; spooled: number }> | undefined

  constructor(opts: CallbackDispatcherOptions) {
    this.settings = opts.settings
    this.secretFor = opts.secretFor
    this.journal = opts.journal
    this.logger = opts.logger
    this.now = opts.now ?? Date.now
    this.random = opts.random ?? Math.random
    this.userAgent = opts.userAgent ?? DEFAULT_USER_AGENT
    this.transport = opts.transport ?? createCallbackTransport(opts.settings)
  }

  /** Never blocks the caller and never throws: the result is journaled then tried, or logged in full. */
  deliver(domain: string, url: string, result: CallResult, meta: { requestId: string }): void {
    try {
      const body = callbackBody(result)
      const requestId = HEADER_SAFE.test(meta.requestId)
        ? meta.requestId
        : encodeURIComponent(meta.requestId).slice(0, 200) || 'unknown'
      if (!this.finals.remember(domain, requestId)) {
        // docs/design.md "Result callbacks": exactly one final callback per request. A second one is an engine bug;
        // the receiver must not see two contradicting finals.
        this.logger.error(
          { domain, request_id: requestId, body },
          'second final result for one request: not sent (exactly one callback per request)',
        )
        return
      }
      const record: ResultRecord = { deliveryId: randomUUID(), requestId, domain, url, body, createdAt: this.now() }
      this.journaling++
      // Called now (not after an await) so that the record is ordered before anything later.
      void this.journal.result(record).then(() => {
        this.journaling--
        this.accept({ result: record, progress: undefined })
        this.notifyIfIdle()
      })
    } catch (e) {
      this.safeLog(() => this.logger.error({ err: e, domain, request_id: meta.requestId, result }, 'callback could not be queued'))
    }
  }

  /**
   * Hands over a notice (not a final result: NoticeFields). Never blocks and never throws, as
   * deliver(). `orderKey`: notices with the same key are delivered one at a time, in the order
   * they were handed over. `status`: a status event's leg, event and sequence, which the journal
   * keeps as its request's progress (journal/types.ts StatusFollowing). Resolves once the notice is durable (callers need not wait).
   */
  notify(
    domain: string,
    url: string,
    body: string,
    meta: {
      readonly requestId: string
      readonly kind: NoticeFields['kind']
      readonly signer?: string
      readonly orderKey?: string
      readonly status?: NoticeFields['status']
    },
  ): Promise<void> {
    try {
      const requestId = HEADER_SAFE.test(meta.requestId) ? meta.requestId : encodeURIComponent(meta.requestId).slice(0, 200) || 'unknown'
      let order: NoticeFields['order']
      if (meta.orderKey !== undefined) {
        const seq = this.nextSeq.get(meta.orderKey) ?? 0
        this.nextSeq.set(meta.orderKey, seq + 1)
        this.journalingOfKey.set(meta.orderKey, (this.journalingOfKey.get(meta.orderKey) ?? 0) + 1)
        order = { key: meta.orderKey, seq }
      }
      const notice: NoticeFields = {
        kind: meta.kind,
        ...(meta.signer !== undefined ? { signer: meta.signer } : {}),
        ...(order !== undefined ? { order } : {}),
        ...(meta.status !== undefined ? { status: meta.status } : {}),
      }
      const record = { deliveryId: randomUUID(), requestId, domain, url, body, createdAt: this.now(), notice }
      this.journaling++
      // Called now (not after an await): notices of one key are journaled in their order.
      return this.journal.notice(record).then(() => {
        this.journaling--
        if (order !== undefined) {
          const left = (this.journalingOfKey.get(order.key) ?? 1) - 1
          if (left > 0) this.journalingOfKey.set(order.key, left)
          else this.journalingOfKey.delete(order.key)
        }
        this.accept({ result: record, progress: undefined })
        if (order !== undefined) this.forgetOrderIfIdle(order.key)
        this.notifyIfIdle()
      })
    } catch (e) {
      this.safeLog(() => this.logger.error({ err: e, domain, request_id: meta.requestId, kind: meta.kind, body }, 'notice could not be queued'))
      return Promise.resolve()
    }
  }

  /**
   * A result another node of a cluster produced and did not deliver before it died (src/cluster/,
   * docs/cluster.md "Results survive a node"): journaled here and delivered with the same delivery
   * id and bytes. A second final result for the request is refused as deliver() refuses it.
   */
  adopt(record: ResultRecord): void {
    if (!this.finals.remember(record.domain, record.requestId)) {
      this.logger.error({ domain: record.domain, request_id: record.requestId, body: record.body }, 'second final result for one request: not sent (exactly one callback per request)')
      return
    }
    this.journaling++
    void this.journal.result(record).then(() => {
      this.journaling--
      this.accept({ result: record, progress: undefined })
      this.notifyIfIdle()
    })
  }

  /**
   * Queues what the journal still held at open (same delivery ids and bytes; due at once, or at
   * the receiver's Retry-After), and moves a spool file left by an older version into the journal.
   */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    const s = this.settings()
    if (s.max_attempts !== undefined) this.logger.warn('callbacks.max_attempts is deprecated and ignored: retries go on for callbacks.give_up_after_ms')
    const pending = [...this.journal.replay().pendingResults]
    if (s.spool_file !== undefined) {
      this.logger.warn({ file: s.spool_file }, 'callbacks.spool_file is deprecated: results are kept in the journal; a spool file found there is moved into it')
      pending.push(...(await importSpool(s.spool_file, this.journal, this.logger, s.give_up_after_ms)))
    }
    // Notices of one order key in their sequence, so that each is held behind the one before it.
    pending.sort((a, b) => (a.result.notice?.order?.seq ?? 0) - (b.result.notice?.order?.seq ?? 0))
    const unordered: PendingResult[] = []
    for (const p of pending) {
      const order = p.result.notice?.order
      if (p.result.notice === undefined) this.finals.remember(p.result.domain, p.result.requestId)
      if (order === undefined) unordered.push(p)
      else {
        // Queued now: a notice of the same key handed over from now on must find these in its line.
        this.nextSeq.set(order.key, Math.max(this.nextSeq.get(order.key) ?? 0, order.seq + 1))
        if (!this.active.has(p.result.deliveryId)) this.accept(p)
      }
    }
    this.replayed = { results: unordered, next: 0 }
    this.queueReplayedSlice()
    if (pending.length > 0) this.logger.info({ count: pending.length }, 'pending callbacks from the journal queued')
  }

  /**
   * Queues the next slice of the results replayed at start, and the slice after it once the event
   * loop has turned: 100,000 queued at once held the daemon's start for half a second
   * (docs/bench.md, restart), while a slice of 1,000 takes a few ms. Nothing depends on their
   * order (each is a request's own). Those not queued by the shutdown's end stay pending in the
   * journal (leaveReplayed).
   */
  private queueReplayedSlice(): void {
    const r = this.replayed
    if (r === undefined) return
    const end = Math.min(r.results.length, r.next + REPLAY_SLICE)
    for (; r.next < end; r.next++) {
      const p = r.results[r.next] as PendingResult
      if (!this.active.has(p.result.deliveryId)) this.accept(p)
    }
    if (r.next < r.results.length) setImmediate(() => this.queueReplayedSlice())
    else {
      this.replayed = undefined
      this.notifyIfIdle()
    }
  }

  /** The replayed results not queued yet: left pending in the journal for the next start. */
  private leaveReplayed(): void {
    const r = this.replayed
    if (r === undefined) return
    this.counts.left += r.results.length - r.next
    this.replayed = undefined
  }

  /** The dead letters in the journal: results given up, with why (for operator tools). */
  listDeadLetters(): DeadLetter[] {
    return this.journal.deadLetters()
  }

  /** Sends a dead letter again (same delivery id and bytes), with a fresh give-up window. */
  async redeliver(deliveryId: string): Promise<Result<void, string>> {
    const dead = this.journal.deadLetters().find((d) => d.result.deliveryId === deliveryId)
    if (dead === undefined) return err(`no dead letter with delivery id ${deliveryId}`)
    if (this.phase.kind !== 'running') return err('the callback dispatcher is stopping')
    const giveUpAt = this.now() + this.settings().give_up_after_ms
    await this.journal.revived(deliveryId, giveUpAt)
    this.logger.info({ delivery_id: deliveryId, request_id: dead.result.requestId }, 'dead letter sent again')
    this.accept({ result: dead.result, progress: { attempts: dead.attempts, nextAttemptAt: 0, giveUpAt } })
    return ok(undefined)
  }

  /**
   * Graceful stop: attempts go on for at most `deadlineMs` (a duration); then in-flight attempts
   * are aborted, and whatever is not delivered stays pending in the journal for the next start.
   * `delivered` counts deliveries completed during the shutdown; `spooled` those left pending.
   */
  shutdown(deadlineMs: number): Promise<{ delivered: number; spooled: number }> {
    this.shutdownResult ??= this.runShutdown(deadlineMs)
    return this.shutdownResult
  }

  stats(): CallbackStats {
    let pending = this.journaling + this.replayedLeft()
    let inFlight = 0
    for (const d of this.active.values()) {
      if (d.state === 'inflight') inFlight++
      else pending++
    }
    const { delivered, failed, left } = this.counts
    return { pending, inFlight, delivered, failed, spooled: left, deadLetters: this.journal.stats().deadLetters }
  }

  /** O(pending): read at a metrics scrape, not per delivery. */
  backlog(): CallbackBacklog {
    let oldestPendingAt: number | undefined
    const older = (createdAt: number): void => {
      if (oldestPendingAt === undefined || createdAt < oldestPendingAt) oldestPendingAt = createdAt
    }
    for (const d of this.active.values()) older(d.record.createdAt)
    const r = this.replayed
    if (r !== undefined) for (let i = r.next; i < r.results.length; i++) older((r.results[i] as PendingResult).result.createdAt)
    return { retried: this.counts.retried, oldestPendingAt }
  }

  private async runShutdown(budgetMs: number): Promise<{ delivered: number; spooled: number }> {
    const before = { ...this.counts }
    const budget = Math.max(0, budgetMs)
    const deadlineAt = mono() + budget
    this.phase = { kind: 'closing', deadlineAt }
    // A retry due after the deadline would only be left at the deadline: leave it now, so that
    // the wait below ends as soon as the rest is done.
    for (const d of [...this.active.values()]) {
      if (d.state === 'waiting' && d.dueAt > deadlineAt) this.leave(d)
    }
    await this.idleOrTimeout(budget)

    this.phase = { kind: 'closed' }
    this.leaveReplayed()
    for (const d of [...this.active.values()]) {
      if (d.state === 'waiting' || d.state === 'queued' || d.state === 'held') this.leave(d)
    }
    this.queues.clear()
    this.abort.abort()
    // Aborted attempts end at once and are left pending (settle() sees the closed phase).
    await this.whenIdle()
    const delivered = this.counts.delivered - before.delivered
    const spooled = this.counts.left - before.left
    this.logger.info({ delivered, left_in_journal: spooled }, 'callback dispatcher stopped')
    return { delivered, spooled }
  }

  /** Never throws (settings() may): a result that cannot be queued becomes a dead letter, logged in full. */
  private accept(p: PendingResult): void {
    try {
      this.queue(p)
    } catch (e) {
      const d = this.active.get(p.result.deliveryId)
      if (d !== undefined) this.finish(d)
      this.deadOnArrival(p.result, p.progress?.attempts ?? 0, `could not be queued: ${describeError(e)}`)
    }
  }

  private queue(p: PendingResult): void {
    const rec = p.result
    const target = parseTarget(rec.url)
    const attempts = p.progress?.attempts ?? 0
    if (!target.ok) return this.deadOnArrival(rec, attempts, target.error)
    // Handed over after the deadline: it is durable in the journal, the next start sends it.
    if (this.phase.kind === 'closed') {
      this.counts.left++
      return
    }
    const d = newDelivery(rec, target.value, attempts, p.progress?.giveUpAt ?? rec.createdAt + this.settings().give_up_after_ms)
    this.active.set(rec.deliveryId, d)
    if (this.holdBehindEarlier(d)) return
    // Replayed at start: tried at once, unless the receiver asked for a later time (Retry-After).
    const wait = p.progress?.receiverAsked === true ? p.progress.nextAttemptAt - this.now() : 0
    if (wait > 0) this.waitForRetry(d, wait)
    else this.enqueue(d)
  }

  private enqueue(d: Delivery): void {
    const concurrency = this.settings().concurrency_per_domain
    d.state = 'queued'
    this.queues.add(d.record.domain, concurrency, () => this.attempt(d)).catch((e: unknown) => {
      this.safeLog(() => this.logger.error({ err: e, delivery_id: d.record.deliveryId }, 'callback queue task failed'))
    })
  }

  private async attempt(d: Delivery): Promise<void> {
    // Left pending by shutdown while it waited in the queue.
    if (d.state !== 'queued' || this.active.get(d.record.deliveryId) !== d) return
    d.state = 'inflight'
    d.attempts++
    const r = d.record
    let outcome: AttemptOutcome
    try {
      outcome = await attemptDelivery(
        {
          deliveryId: r.deliveryId,
          requestId: r.requestId,
          attempt: d.attempts,
          target: d.target,
          body: r.body,
          secret: this.secretFor(r.domain, r.notice?.signer),
          ...(r.notice !== undefined ? { notice: r.notice.kind } : {}),
        },
        { timeoutMs: this.settings().timeout_ms, signal: this.abort.signal, now: this.now, userAgent: this.userAgent, transport: this.transport },
      )
    } catch (e) {
      // secretFor() or settings() threw: an attempt that could not be made is retried.
      outcome = { kind: 'retry', reason: describeError(e) }
    }
    try {
      this.settle(d, outcome)
    } catch (e) {
      // settings() or the logger threw: never leave the delivery half-done.
      if (d.state === 'inflight') this.deadLetter(d, `internal error: ${describeError(e)}`)
    }
  }

  private settle(d: Delivery, outcome: AttemptOutcome): void {
    if (outcome.kind === 'delivered') {
      this.finish(d)
      this.counts.delivered++
      void this.journal.acked(d.record.deliveryId)
      this.logger.info({ ...logFields(d), attempt: d.attempts, status: outcome.status }, 'callback delivered')
      return
    }
    if (outcome.kind === 'fatal') return this.deadLetter(d, outcome.reason)
    // Aborted at the shutdown deadline: it may have reached the receiver; sent again at the next start.
    if (this.phase.kind === 'closed') return this.leave(d, 0)
    const step = nextRetryStep(
      {
        reason: outcome.reason,
        ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
        attempts: d.attempts,
        now: this.now(),
        giveUpAt: d.giveUpAt,
        msBeforeDeadline: this.phase.kind === 'closing' ? this.phase.deadlineAt - mono() : undefined,
      },
      this.settings(),
      this.random,
    )
    if (step.kind === 'give_up') return this.deadLetter(d, step.reason)
    this.counts.retried++
    this.logger.warn({ ...logFields(d), attempt: d.attempts, reason: outcome.reason, delay_ms: step.delayMs }, 'callback attempt failed; retry scheduled')
    // The schedule survives a restart; not awaited: lost at a crash, the retry only comes sooner.
    void this.journal.attempted(d.record.deliveryId, {
      attempts: d.attempts,
      nextAttemptAt: this.now() + step.delayMs,
      giveUpAt: d.giveUpAt,
      ...(outcome.retryAfterMs !== undefined ? { receiverAsked: true } : {}),
    })
    if (step.kind === 'leave') return this.leave(d)
    this.waitForRetry(d, step.delayMs)
  }

  private waitForRetry(d: Delivery, delay: number): void {
    d.state = 'waiting'
    d.dueAt = mono() + delay
    d.timer = setTimeout(() => {
      d.timer = undefined
      if (d.state === 'waiting' && this.active.get(d.record.deliveryId) === d) this.enqueue(d)
    }, delay)
    // shutdown() takes over every waiting retry (runs it before the deadline or leaves it in
    // the journal), so the timer need not keep the process alive on its own.
    d.timer.unref()
  }

  private deadLetter(d: Delivery, reason: string): void {
    this.finish(d)
    this.deadOnArrival(d.record, d.attempts, reason)
  }

  /** Kept in the journal as a dead letter, and logged in full so the result is in the logs too. */
  private deadOnArrival(rec: ResultRecord, attempts: number, reason: string): void {
    this.counts.failed++
    void this.journal.deadLetter(rec.deliveryId, reason, attempts)
    const url = parseTarget(rec.url)
    this.logger.error(
      {
        domain: rec.domain,
        request_id: rec.requestId,
        delivery_id: rec.deliveryId,
        url: url.ok ? url.value.logUrl : '(invalid URL)',
        attempts,
        reason,
        body: rec.body,
        dead_letter: true,
      },
      // The message operators may alert on is unchanged; the result stays in the journal as a dead letter.
      'callback not delivered; giving up (the result is in this log line)',
    )
  }

  /** Shutdown: the delivery stays pending in the journal (an aborted attempt: due at once next start). */
  private leave(d: Delivery, nextAttemptAt?: number): void {
    this.finish(d, 'left')
    this.counts.left++
    // Also in the log with its body: with the journal switched off (benchmarks) it is the only trace.
    this.logger.warn({ ...logFields(d), attempts: d.attempts, body: d.record.body }, 'callback left pending in the journal for the next start')
    if (nextAttemptAt !== undefined) {
      void this.journal.attempted(d.record.deliveryId, { attempts: d.attempts, nextAttemptAt, giveUpAt: d.giveUpAt })
    }
  }

  /**
   * A notice with an order key waits behind the earlier ones of its key that are not done: true
   * when it was held (it is queued once they are).
   */
  private holdBehindEarlier(d: Delivery): boolean {
    const order = d.record.notice?.order
    if (order === undefined) return false
    const line = this.ordered.get(order.key) ?? []
    this.ordered.set(order.key, line)
    let at = line.length
    while (at > 0 && (line[at - 1]?.record.notice?.order?.seq ?? 0) > order.seq) at--
    line.splice(at, 0, d)
    if (at === 0 && line.length === 1) return false
    // A notice handed over before one already on its way (a replay race) waits all the same.
    d.state = 'held'
    return true
  }

  /**
   * Every delivery ends here exactly once (delivered, dead-lettered or left pending). A notice
   * after it in its order goes next; one left pending takes the rest of its order with it, so the
   * next start sends them in order.
   */
  private finish(d: Delivery, how: 'over' | 'left' = 'over'): void {
    if (d.timer !== undefined) clearTimeout(d.timer)
    d.timer = undefined
    d.state = 'done'
    this.active.delete(d.record.deliveryId)
    const next = this.outOfOrderLine(d)
    if (next !== undefined && next.state === 'held') {
      if (how === 'left' || this.phase.kind === 'closed') this.leave(next)
      else this.enqueue(next)
    }
    this.notifyIfIdle()
  }

  /** Takes `d` out of its order's line; the delivery now first in it, if any. */
  private outOfOrderLine(d: Delivery): Delivery | undefined {
    const key = d.record.notice?.order?.key
    if (key === undefined) return undefined
    const line = this.ordered.get(key)
    if (line === undefined) return undefined
    const i = line.indexOf(d)
    if (i >= 0) line.splice(i, 1)
    if (line.length === 0) {
      this.ordered.delete(key)
      this.forgetOrderIfIdle(key)
    }
    return line[0]
  }

  /**
   * Forgets an order key's next sequence once no notice of it is queued, held, in flight or being
   * journaled. Not sooner: a notice numbered while another of its key is still being journaled
   * must come after it (the journal makes them durable in the order they were handed over).
   */
  private forgetOrderIfIdle(key: string): void {
    if (!this.ordered.has(key) && !this.journalingOfKey.has(key)) this.nextSeq.delete(key)
  }

  private replayedLeft(): number {
    return this.replayed === undefined ? 0 : this.replayed.results.length - this.replayed.next
  }

  private notifyIfIdle(): void {
    if (this.active.size > 0 || this.journaling > 0 || this.replayed !== undefined) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const w of waiters) w()
  }

  private whenIdle(): Promise<void> {
    if (this.active.size === 0 && this.journaling === 0 && this.replayed === undefined) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private idleOrTimeout(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      void this.whenIdle().then(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  private safeLog(f: () => void): void {
    try {
      f()
    } catch {
      // The logger itself failed: nothing better to do, and deliver() must not throw.
    }
  }
}

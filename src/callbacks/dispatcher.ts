/**
 * Delivery of result callbacks (docs/design.md "Result callbacks"; docs/callbacks.md): the part
 * that ties the others together and keeps every delivery's state.
 *
 * One delivery per final result: a delivery id (UUID) and the body bytes are fixed when the
 * engine hands the result over, and every attempt re-sends exactly those, so a receiver can
 * drop duplicates and verify the signature over the bytes it got.
 *
 * Isolation: each domain has its own queue (domain-queues.ts), so a slow or dead receiver only
 * ever occupies its own domain's slots. A delivery waiting for its retry holds no slot at all:
 * the attempt (attempt.ts) ends, a timer waits out the backoff (schedule.ts), and the delivery
 * is queued again.
 *
 * Nothing is dropped silently: a result is delivered, or logged at error level with its full
 * body (final failure), or written to the spool file at shutdown (or logged in full when
 * there is no spool file), and the spool is delivered at the next start (spool-keeper.ts).
 */
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { Logger } from '../util/logger.js'
import { attemptDelivery, DEFAULT_USER_AGENT } from './attempt.js'
import { callbackBody } from './body.js'
import { logFields, newDelivery, spoolEntryOf, type Delivery } from './delivery.js'
import { DomainQueues } from './domain-queues.js'
import { FinalResults } from './final-results.js'
import { describeError, parseTarget, type AttemptOutcome } from './policy.js'
import { nextRetryStep } from './schedule.js'
import type { SpoolEntry } from './spool.js'
import { SpoolKeeper } from './spool-keeper.js'
import type { CallbackSettings, CallbackSink, CallResult } from './types.js'

export type { CallbackSettings, CallbackSink, CallResult } from './types.js'
export { DEFAULT_USER_AGENT } from './attempt.js'

export interface CallbackDispatcherOptions {
  /** The `callbacks` section of daemon.yaml, read at each use so that SIGHUP applies. */
  settings: () => CallbackSettings
  /** The domain's callback_secret; undefined: requests are not signed. */
  secretFor: (domain: string) => string | undefined
  logger: Logger
  /** Wall clock (ms): signature timestamps, Retry-After dates. */
  now?: () => number
  /** Jitter source in [0, 1). */
  random?: () => number
  userAgent?: string
}

export interface CallbackStats {
  /** Queued for an attempt or waiting for a retry. */
  pending: number
  inFlight: number
  delivered: number
  /** Given up (final failure logged with the body). */
  failed: number
  /** Written to the spool file (or logged in full) at shutdown. */
  spooled: number
}

/** Where the dispatcher is in its life; it only moves forward. */
type Phase =
  | { readonly kind: 'running' }
  /** shutdown() began: attempts go on until the deadline (monotonic ms). */
  | { readonly kind: 'closing'; readonly deadlineAt: number }
  /** The deadline passed: no more attempts; everything left goes to the spool. */
  | { readonly kind: 'closed' }
  /** The spool was written: later results are appended one by one. */
  | { readonly kind: 'flushed' }

/** The request id goes into a header: anything else is percent-encoded. */
const HEADER_SAFE = /^[\x21-\x7e]{1,200}$/

const mono = (): number => performance.now()

export class CallbackDispatcher implements CallbackSink {
  private readonly settings: () => CallbackSettings
  private readonly secretFor: (domain: string) => string | undefined
  private readonly logger: Logger
  private readonly now: () => number
  private readonly random: () => number
  private readonly userAgent: string

  private readonly active = new Map<string, Delivery>()
  private readonly queues = new DomainQueues()
  private readonly finals = new FinalResults()
  private readonly spool: SpoolKeeper
  private idleWaiters: Array<() => void> = []
  /** Aborts in-flight attempts at the shutdown deadline. */
  private readonly abort = new AbortController()
  /** Taken at or during shutdown, written once the in-flight attempts ended. */
  private readonly spoolLater: SpoolEntry[] = []
  private readonly counts = { delivered: 0, failed: 0 }

  private started = false
  private phase: Phase = { kind: 'running' }
  private shutdownResult: Promise<{ delivered: number; spooled: number }> | undefined

  constructor(opts: CallbackDispatcherOptions) {
    this.settings = opts.settings
    this.secretFor = opts.secretFor
    this.logger = opts.logger
    this.now = opts.now ?? Date.now
    this.random = opts.random ?? Math.random
    this.userAgent = opts.userAgent ?? DEFAULT_USER_AGENT
    this.spool = new SpoolKeeper({ spoolFile: () => this.settings().spool_file, logger: this.logger })
  }

  /** Never blocks the caller and never throws: the result is queued, or logged in full. */
  deliver(domain: string, url: string, result: CallResult, meta: { requestId: string }): void {
    try {
      const body = callbackBody(result)
      const requestId = HEADER_SAFE.test(meta.requestId)
        ? meta.requestId
        : encodeURIComponent(meta.requestId).slice(0, 200) || 'unknown'
      if (!this.finals.remember(domain, requestId)) {
        // docs/design.md "Result callbacks": exactly one final callback per request. A second one
        // is an engine bug; the receiver must not see two contradicting finals.
        this.logger.error(
          { domain, request_id: requestId, body },
          'second final result for one request: not sent (exactly one callback per request)',
        )
        return
      }
      this.accept(
        {
          v: 1,
          delivery_id: randomUUID(),
          domain,
          url,
          request_id: requestId,
          body,
          attempts: 0,
          created_at: this.now(),
        },
        false,
      )
    } catch (e) {
      this.safeLog(() => this.logger.error({ err: e, domain, request_id: meta.requestId, result }, 'callback could not be queued'))
    }
  }

  /** Loads the spool file left by the last shutdown and queues its deliveries. */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    const loaded = await this.spool.load()
    if (loaded === undefined) return
    for (const e of loaded.entries) {
      if (this.active.has(e.delivery_id)) continue
      this.finals.remember(e.domain, e.request_id)
      this.accept(e, true)
    }
    if (loaded.entries.length > 0) this.logger.info({ file: loaded.file, count: loaded.entries.length }, 'spooled callbacks queued')
    this.spool.releaseIfDone()
  }

  /**
   * Graceful stop: attempts go on for at most `deadlineMs` (a duration); then in-flight
   * attempts are aborted and every undelivered result is written to the spool file, or
   * logged at error level with its body when there is none (or it cannot be written).
   * `delivered` counts deliveries completed during the shutdown.
   */
  shutdown(deadlineMs: number): Promise<{ delivered: number; spooled: number }> {
    this.shutdownResult ??= this.runShutdown(deadlineMs)
    return this.shutdownResult
  }

  stats(): CallbackStats {
    let pending = 0
    let inFlight = 0
    for (const d of this.active.values()) {
      if (d.state === 'inflight') inFlight++
      else pending++
    }
    return { pending, inFlight, ...this.counts, spooled: this.spool.spooled }
  }

  private async runShutdown(budgetMs: number): Promise<{ delivered: number; spooled: number }> {
    const deliveredBefore = this.counts.delivered
    const budget = Math.max(0, budgetMs)
    const deadlineAt = mono() + budget
    this.phase = { kind: 'closing', deadlineAt }
    this.spool.beginShutdown()
    // A retry due after the deadline would only be spooled at the deadline: spool it now,
    // so that the wait below ends as soon as the rest is done.
    for (const d of [...this.active.values()]) {
      if (d.state === 'waiting' && d.dueAt > deadlineAt) this.toSpool(d)
    }
    await this.idleOrTimeout(budget)

    this.phase = { kind: 'closed' }
    for (const d of [...this.active.values()]) {
      if (d.state === 'waiting' || d.state === 'queued') this.toSpool(d)
    }
    this.queues.clear()
    this.abort.abort()
    // Aborted attempts end at once and spool themselves (settle() sees the closed phase).
    await this.whenIdle()

    const taken = this.spoolLater.splice(0)
    await this.spool.persist(taken)
    this.phase = { kind: 'flushed' }
    // Results handed over while the file was being written.
    const late = this.spoolLater.splice(0)
    for (const e of late) this.spool.append(e)
    const spooled = taken.length + late.length
    this.logger.info({ delivered: this.counts.delivered - deliveredBefore, spooled }, 'callback dispatcher stopped')
    return { delivered: this.counts.delivered - deliveredBefore, spooled }
  }

  private accept(e: SpoolEntry, fromSpool: boolean): void {
    const target = parseTarget(e.url)
    if (!target.ok) {
      this.counts.failed++
      this.logger.error(
        { domain: e.domain, request_id: e.request_id, delivery_id: e.delivery_id, reason: target.error, body: e.body },
        'callback not delivered: bad callback_url (the result is in this log line)',
      )
      return
    }
    if (this.phase.kind === 'flushed') return this.spool.append(e)
    if (this.phase.kind === 'closed') {
      this.spoolLater.push(e)
      return
    }
    const d = newDelivery(e, target.value, fromSpool)
    this.active.set(d.id, d)
    if (fromSpool) this.spool.trackFromSpool()
    try {
      this.enqueue(d)
    } catch (err) {
      this.finalFailure(d, `could not be queued: ${describeError(err)}`)
    }
  }

  private enqueue(d: Delivery): void {
    const concurrency = this.settings().concurrency_per_domain
    d.state = 'queued'
    this.queues.add(d.domain, concurrency, () => this.attempt(d)).catch((e: unknown) => {
      this.safeLog(() => this.logger.error({ err: e, delivery_id: d.id }, 'callback queue task failed'))
    })
  }

  private async attempt(d: Delivery): Promise<void> {
    // Taken by shutdown (spooled) while it waited in the queue.
    if (d.state !== 'queued' || this.active.get(d.id) !== d) return
    d.state = 'inflight'
    d.attempts++
    let outcome: AttemptOutcome
    try {
      outcome = await attemptDelivery(
        { deliveryId: d.id, requestId: d.requestId, attempt: d.attempts, target: d.target, body: d.body, secret: this.secretFor(d.domain) },
        { timeoutMs: this.settings().timeout_ms, signal: this.abort.signal, now: this.now, userAgent: this.userAgent },
      )
    } catch (e) {
      // secretFor() or settings() threw: an attempt that could not be made is retried.
      outcome = { kind: 'retry', reason: describeError(e) }
    }
    try {
      this.settle(d, outcome)
    } catch (e) {
      // settings() or the logger threw: never leave the delivery half-done.
      if (d.state === 'inflight') this.finalFailure(d, `internal error: ${describeError(e)}`)
    }
  }

  private settle(d: Delivery, outcome: AttemptOutcome): void {
    if (outcome.kind === 'delivered') {
      this.finish(d)
      this.counts.delivered++
      this.logger.info({ ...logFields(d), attempt: d.attempts, status: outcome.status }, 'callback delivered')
      return
    }
    if (outcome.kind === 'fatal') return this.finalFailure(d, outcome.reason)
    if (this.phase.kind === 'closed' || this.phase.kind === 'flushed') return this.toSpool(d)
    const step = nextRetryStep(
      {
        reason: outcome.reason,
        ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
        attempts: d.attempts,
        msBeforeDeadline: this.phase.kind === 'closing' ? this.phase.deadlineAt - mono() : undefined,
      },
      this.settings(),
      this.random,
    )
    if (step.kind === 'give_up') return this.finalFailure(d, step.reason)
    if (step.kind === 'spool') return this.toSpool(d)
    this.waitForRetry(d, outcome.reason, step.delayMs)
  }

  private waitForRetry(d: Delivery, reason: string, delay: number): void {
    this.logger.warn({ ...logFields(d), attempt: d.attempts, reason, delay_ms: delay }, 'callback attempt failed; retry scheduled')
    d.state = 'waiting'
    d.dueAt = mono() + delay
    d.timer = setTimeout(() => {
      d.timer = undefined
      if (d.state === 'waiting' && this.active.get(d.id) === d) this.enqueue(d)
    }, delay)
    // shutdown() takes over every waiting retry (runs it before the deadline or spools it),
    // so the timer need not keep the process alive on its own.
    d.timer.unref()
  }

  private finalFailure(d: Delivery, reason: string): void {
    this.finish(d)
    this.counts.failed++
    this.logger.error(
      { ...logFields(d), attempts: d.attempts, reason, body: d.body },
      'callback not delivered; giving up (the result is in this log line)',
    )
  }

  private toSpool(d: Delivery): void {
    this.finish(d)
    this.spoolLater.push(spoolEntryOf(d))
  }

  /** Every delivery ends here exactly once (delivered, failed or spooled). */
  private finish(d: Delivery): void {
    if (d.timer !== undefined) clearTimeout(d.timer)
    d.timer = undefined
    d.state = 'done'
    this.active.delete(d.id)
    if (d.fromSpool) this.spool.fromSpoolEnded()
    if (this.active.size === 0) {
      const waiters = this.idleWaiters
      this.idleWaiters = []
      for (const w of waiters) w()
    }
  }

  private whenIdle(): Promise<void> {
    if (this.active.size === 0) return Promise.resolve()
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

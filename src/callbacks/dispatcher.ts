/**
 * Delivery of result callbacks (DESIGN.md "Result callbacks"; docs/callbacks.md).
 *
 * One delivery per final result: a delivery id (UUID) and the body bytes are fixed when the
 * engine hands the result over, and every attempt re-sends exactly those, so a receiver can
 * drop duplicates and verify the signature over the bytes it got.
 *
 * Isolation: each domain has its own queue (p-queue, concurrency_per_domain), so a slow or
 * dead receiver only ever occupies its own domain's slots. A delivery waiting for its retry
 * holds no slot at all: the attempt ends, a timer waits out the backoff, and the delivery is
 * queued again.
 *
 * Nothing is dropped silently: a result is delivered, or logged at error level with its full
 * body (final failure), or written to the spool file at shutdown (or logged in full when
 * there is no spool file), and the spool is delivered at the next start.
 */
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import PQueue from 'p-queue'
import type { Logger } from '../util/logger.js'
import { callbackBody, signatureHeader } from './body.js'
import { classifyStatus, describeError, parseTarget, retryDelay, type AttemptOutcome, type Target } from './policy.js'
import { appendSpoolSync, readSpool, removeSpoolSync, writeSpool, type SpoolEntry } from './spool.js'
import type { CallbackSettings, CallbackSink, CallResult } from './types.js'

export type { CallbackSettings, CallbackSink, CallResult } from './types.js'

export const DEFAULT_USER_AGENT = 'fs-call-originator/0.1 (result-callback)'

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

type State = 'queued' | 'inflight' | 'waiting' | 'done'

interface Delivery {
  readonly id: string
  readonly domain: string
  readonly url: string
  readonly target: Target
  readonly requestId: string
  readonly body: string
  readonly createdAt: number
  readonly fromSpool: boolean
  attempts: number
  state: State
  timer: NodeJS.Timeout | undefined
  /** Monotonic time the waiting retry is due. */
  dueAt: number
}

/** How many request ids are remembered to refuse a second final result for one request. */
const REMEMBERED_REQUESTS = 100_000
/** Bytes of a receiver's reply kept for the logs. */
const SNIPPET_BYTES = 512
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
  private readonly queues = new Map<string, PQueue>()
  /** Insertion order is age: the oldest is forgotten first. */
  private readonly seenRequests = new Set<string>()
  private idleWaiters: Array<() => void> = []
  /** Aborts in-flight attempts at the shutdown deadline. */
  private readonly abort = new AbortController()
  /** Taken at or during shutdown, written once the in-flight attempts ended. */
  private readonly spoolLater: SpoolEntry[] = []
  private readonly counts = { delivered: 0, failed: 0, spooled: 0 }

  private started = false
  /** The spool file start() read: only that file may be replaced (else entries are appended). */
  private ownedSpool: string | undefined
  private fromSpoolLeft = 0
  /** Set when shutdown begins. */
  private closing: { deadlineAt: number } | undefined
  /** Set at the deadline: no more attempts; everything left goes to the spool. */
  private closed = false
  /** Set once the spool was written: later results are appended one by one. */
  private flushed = false
  private shutdownResult: Promise<{ delivered: number; spooled: number }> | undefined

  constructor(opts: CallbackDispatcherOptions) {
    this.settings = opts.settings
    this.secretFor = opts.secretFor
    this.logger = opts.logger
    this.now = opts.now ?? Date.now
    this.random = opts.random ?? Math.random
    this.userAgent = opts.userAgent ?? DEFAULT_USER_AGENT
  }

  /** Never blocks the caller and never throws: the result is queued, or logged in full. */
  deliver(domain: string, url: string, result: CallResult, meta: { requestId: string }): void {
    try {
      const body = callbackBody(result)
      const requestId = HEADER_SAFE.test(meta.requestId)
        ? meta.requestId
        : encodeURIComponent(meta.requestId).slice(0, 200) || 'unknown'
      if (!this.remember(domain, requestId)) {
        // DESIGN.md: exactly one final callback per request. A second one is an engine bug;
        // the receiver must not see two contradicting finals.
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
    const file = this.settings().spool_file
    if (file === undefined) return
    const r = await readSpool(file)
    if (!r.ok) {
      this.logger.error({ file, error: r.error }, 'spool file could not be read; it is left as it is')
      return
    }
    this.ownedSpool = file
    for (const line of r.value.bad) {
      this.logger.error({ file, line }, 'unreadable spool line: not delivered (kept in this log line)')
    }
    for (const e of r.value.entries) {
      if (this.active.has(e.delivery_id)) continue
      this.remember(e.domain, e.request_id)
      this.accept(e, true)
    }
    if (r.value.entries.length > 0) this.logger.info({ file, count: r.value.entries.length }, 'spooled callbacks queued')
    this.maybeRemoveSpool()
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
    return { pending, inFlight, ...this.counts }
  }

  private async runShutdown(budgetMs: number): Promise<{ delivered: number; spooled: number }> {
    const deliveredBefore = this.counts.delivered
    const budget = Math.max(0, budgetMs)
    const deadlineAt = mono() + budget
    this.closing = { deadlineAt }
    // A retry due after the deadline would only be spooled at the deadline: spool it now,
    // so that the wait below ends as soon as the rest is done.
    for (const d of [...this.active.values()]) {
      if (d.state === 'waiting' && d.dueAt > deadlineAt) this.toSpool(d)
    }
    await this.idleOrTimeout(budget)

    this.closed = true
    for (const d of [...this.active.values()]) {
      if (d.state === 'waiting' || d.state === 'queued') this.toSpool(d)
    }
    for (const q of this.queues.values()) q.clear()
    this.abort.abort()
    // Aborted attempts end at once and spool themselves (settle() sees `closed`).
    await this.whenIdle()

    const taken = this.spoolLater.splice(0)
    await this.persist(taken)
    this.flushed = true
    // Results handed over while the file was being written.
    const late = this.spoolLater.splice(0)
    for (const e of late) this.appendAfterFlush(e)
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
    if (this.flushed) return this.appendAfterFlush(e)
    if (this.closed) {
      this.spoolLater.push(e)
      return
    }
    const d: Delivery = {
      id: e.delivery_id,
      domain: e.domain,
      url: e.url,
      target: target.value,
      requestId: e.request_id,
      body: e.body,
      createdAt: e.created_at,
      fromSpool,
      attempts: e.attempts,
      state: 'queued',
      timer: undefined,
      dueAt: 0,
    }
    this.active.set(d.id, d)
    if (fromSpool) this.fromSpoolLeft++
    try {
      this.enqueue(d)
    } catch (err) {
      this.finalFailure(d, `could not be queued: ${describeError(err)}`)
    }
  }

  private enqueue(d: Delivery): void {
    const concurrency = this.settings().concurrency_per_domain
    let q = this.queues.get(d.domain)
    if (q === undefined) {
      q = new PQueue({ concurrency })
      this.queues.set(d.domain, q)
    } else if (q.concurrency !== concurrency) {
      q.concurrency = concurrency
    }
    d.state = 'queued'
    q.add(() => this.attempt(d)).catch((e: unknown) => {
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
      const signal = AbortSignal.any([AbortSignal.timeout(this.settings().timeout_ms), this.abort.signal])
      const res = await fetch(d.target.href, {
        method: 'POST',
        headers: this.headers(d),
        body: d.body,
        redirect: 'manual',
        signal,
      })
      outcome = classifyStatus(res.status, res.headers.get('retry-after'), this.now())
      // Reading a short reply lets the connection be reused and gives the logs the receiver's words.
      const reply = await readSnippet(res)
      if (outcome.kind !== 'delivered' && reply !== '') outcome = { ...outcome, reason: `${outcome.reason}: ${reply}` }
    } catch (e) {
      outcome = { kind: 'retry', reason: describeError(e) }
    }
    try {
      this.settle(d, outcome)
    } catch (e) {
      // settings() or the logger threw: never leave the delivery half-done.
      if (d.state === 'inflight') this.finalFailure(d, `internal error: ${describeError(e)}`)
    }
  }

  private headers(d: Delivery): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.userAgent,
      'x-delivery-id': d.id,
      'x-delivery-attempt': String(d.attempts),
      'x-request-id': d.requestId,
    }
    if (d.target.authorization !== undefined) h['authorization'] = d.target.authorization
    const secret = this.secretFor(d.domain)
    // Signed per attempt with the attempt's own timestamp, so receivers can refuse stale replays.
    if (secret !== undefined && secret !== '') h['x-signature'] = signatureHeader(secret, Math.floor(this.now() / 1000), d.body)
    return h
  }

  private settle(d: Delivery, outcome: AttemptOutcome): void {
    if (outcome.kind === 'delivered') {
      this.finish(d)
      this.counts.delivered++
      this.logger.info({ ...this.fields(d), attempt: d.attempts, status: outcome.status }, 'callback delivered')
      return
    }
    if (outcome.kind === 'fatal') return this.finalFailure(d, outcome.reason)
    if (this.closed) return this.toSpool(d)
    const s = this.settings()
    if (d.attempts >= s.max_attempts) return this.finalFailure(d, `${outcome.reason} (attempt ${d.attempts} of ${s.max_attempts})`)
    const delay = retryDelay(d.attempts, s, this.random, outcome.retryAfterMs)
    if (this.closing !== undefined && mono() + delay > this.closing.deadlineAt) return this.toSpool(d)
    this.logger.warn(
      { ...this.fields(d), attempt: d.attempts, reason: outcome.reason, delay_ms: delay },
      'callback attempt failed; retry scheduled',
    )
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
      { ...this.fields(d), attempts: d.attempts, reason, body: d.body },
      'callback not delivered; giving up (the result is in this log line)',
    )
  }

  private toSpool(d: Delivery): void {
    this.finish(d)
    this.spoolLater.push({
      v: 1,
      delivery_id: d.id,
      domain: d.domain,
      url: d.url,
      request_id: d.requestId,
      body: d.body,
      attempts: d.attempts,
      created_at: d.createdAt,
    })
  }

  /** Every delivery ends here exactly once (delivered, failed or spooled). */
  private finish(d: Delivery): void {
    if (d.timer !== undefined) clearTimeout(d.timer)
    d.timer = undefined
    d.state = 'done'
    this.active.delete(d.id)
    if (d.fromSpool) {
      this.fromSpoolLeft--
      this.maybeRemoveSpool()
    }
    if (this.active.size === 0) {
      const waiters = this.idleWaiters
      this.idleWaiters = []
      for (const w of waiters) w()
    }
  }

  /**
   * Everything read from the spool has ended: remove the file, so that a crash later does
   * not deliver those results again. (Shutdown writes a new one if needed.)
   */
  private maybeRemoveSpool(): void {
    if (this.fromSpoolLeft > 0 || this.closing !== undefined || this.ownedSpool === undefined) return
    const r = removeSpoolSync(this.ownedSpool)
    if (!r.ok) this.logger.warn({ file: this.ownedSpool, error: r.error }, 'spool file could not be removed')
  }

  private async persist(entries: SpoolEntry[]): Promise<void> {
    const file = this.settings().spool_file
    if (file !== undefined) {
      if (file === this.ownedSpool) {
        // Replace: the file held only what start() read, and those are either done or in `entries`.
        const r = await writeSpool(file, entries)
        if (r.ok) {
          this.counts.spooled += entries.length
          if (entries.length > 0) this.logger.warn({ file, count: entries.length }, 'undelivered callbacks written to the spool file')
          return
        }
        this.logger.error({ file, error: r.error }, 'spool file could not be written')
      } else {
        // Not read at start (or another file): never overwrite results of an earlier run.
        for (const e of entries) this.appendAfterFlush(e)
        return
      }
    }
    for (const e of entries) this.logLost(e, 'callback not delivered before shutdown and not spooled (the result is in this log line)')
  }

  private appendAfterFlush(e: SpoolEntry): void {
    const file = this.settings().spool_file
    if (file !== undefined) {
      const r = appendSpoolSync(file, e)
      if (r.ok) {
        this.counts.spooled++
        this.logger.warn({ file, delivery_id: e.delivery_id, request_id: e.request_id }, 'callback appended to the spool file')
        return
      }
      this.logger.error({ file, error: r.error }, 'spool file could not be written')
    }
    this.logLost(e, 'callback not delivered before shutdown and not spooled (the result is in this log line)')
  }

  private logLost(e: SpoolEntry, msg: string): void {
    this.counts.spooled++
    this.logger.error(
      {
        domain: e.domain,
        request_id: e.request_id,
        delivery_id: e.delivery_id,
        url: redactUrl(e.url),
        attempts: e.attempts,
        body: e.body,
      },
      msg,
    )
  }

  private remember(domain: string, requestId: string): boolean {
    const key = `${domain}\n${requestId}`
    if (this.seenRequests.has(key)) return false
    this.seenRequests.add(key)
    if (this.seenRequests.size > REMEMBERED_REQUESTS) {
      const oldest = this.seenRequests.values().next()
      if (oldest.done !== true) this.seenRequests.delete(oldest.value)
    }
    return true
  }

  private fields(d: Delivery): Record<string, string> {
    return { domain: d.domain, request_id: d.requestId, delivery_id: d.id, url: d.target.logUrl }
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

const redactUrl = (url: string): string => {
  const t = parseTarget(url)
  return t.ok ? t.value.logUrl : '(invalid URL)'
}

/** Up to SNIPPET_BYTES of the reply; errors while reading are ignored (the status decided). */
async function readSnippet(res: Response): Promise<string> {
  if (res.body === null) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let n = 0
  try {
    while (n < SNIPPET_BYTES) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      n += value.byteLength
    }
    if (n >= SNIPPET_BYTES) await reader.cancel()
  } catch {
    // Reset or timeout while reading the reply: the status already decided the outcome.
  }
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8').trim()
}

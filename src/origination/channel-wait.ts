/**
 * Waiting for a free channel (issue 31 item 2; docs/engine.md "Waiting for a channel"): a request
 * whose channels do not fit under its domain's limit may wait, up to its `wait_ms`, instead of
 * being refused at once. Waiters of a domain are served first come, first served: only the
 * oldest one is ever tried, and while a domain has waiters a request that does not wait cannot
 * take a channel ahead of them (it is refused at once, as before). A domain's waiters are
 * bounded (`limits.max_waiting`): beyond that a request is refused at once.
 *
 * Whether the head fits is asked again whenever something may have freed a channel (the engine
 * pokes on every channel change and reservation release of the domain) and, as a safety net,
 * on a short timer while anyone waits. `tryTake` is the request's own all-or-nothing reservation
 * (request.ts reserve): run synchronously, so that nothing can take the slot between the check
 * and the reservation.
 */
import type { Clock } from '../util/clock.js'

/** How often the oldest waiter is tried again while nothing pokes (a leak guard: pokes do the work). */
const RETRY_MS = 100

export type WaitEnd =
  /** It fits now and is reserved (tryTake said so). */
  | 'taken'
  /** Its wait ran out. */
  | 'timeout'
  /** The domain already has as many waiters as it may. */
  | 'full'
  /** Given up by its request (the client went away, the engine closes). */
  | 'abandoned'

interface Waiter {
  readonly tryTake: () => boolean
  readonly done: (end: WaitEnd) => void
  readonly cancelTimer: () => void
}

/** What the metrics read (src/metrics: cod_requests_waiting, cod_channel_waits_total, cod_channel_wait_seconds_total). */
export interface WaitFigures {
  /** Requests waiting now, per lower-case domain. */
  readonly waiting: ReadonlyMap<string, number>
  /** Since start: waits by how they ended, and the time they took in all (ms). */
  readonly ended: Readonly<Record<WaitEnd, number>>
  readonly waitedMs: number
  /** Originates waiting now for their turn under the session rate (pace.ts; the engine adds it). */
  readonly pacedNow?: number
}

export class ChannelWaits {
  private readonly queues = new Map<string, Waiter[]>()
  private stopRetry: (() => void) | undefined
  private readonly ended: Record<WaitEnd, number> = { taken: 0, timeout: 0, full: 0, abandoned: 0 }
  private waitedMs = 0

  constructor(private readonly clock: Clock) {}

  /** Requests waiting in this domain now. */
  waiting(domain: string): number {
    return this.queues.get(domain.toLowerCase())?.length ?? 0
  }

  figures(): WaitFigures {
    const waiting = new Map<string, number>()
    for (const [domain, queue] of this.queues) waiting.set(domain, queue.length)
    return { waiting, ended: { ...this.ended }, waitedMs: this.waitedMs }
  }

  /** Whether a request that does not wait may take a channel now (no one is waiting ahead of it). */
  mayTakeWithoutWaiting(domain: string): boolean {
    return this.waiting(domain) === 0
  }

  /**
   * Waits until `tryTake` succeeds as the domain's oldest waiter, or `waitMs` passes, or `abandon`
   * is signalled. `maxWaiting` bounds the domain's queue (this request included).
   */
  wait(domain: string, waitMs: number, maxWaiting: number, tryTake: () => boolean, abandon?: AbortSignal): Promise<WaitEnd> {
    const key = domain.toLowerCase()
    const queue = this.queues.get(key) ?? []
    if (queue.length >= maxWaiting) {
      this.ended.full++
      return Promise.resolve('full')
    }
    if (abandon?.aborted === true) {
      this.ended.abandoned++
      return Promise.resolve('abandoned')
    }
    const since = this.clock.now()
    return new Promise<WaitEnd>((resolve) => {
      let over = false
      const finish = (end: WaitEnd): void => {
        if (over) return
        over = true
        this.ended[end]++
        this.waitedMs += this.clock.now() - since
        waiter.cancelTimer()
        abandon?.removeEventListener('abort', onAbort)
        this.remove(key, waiter)
        resolve(end)
        // The next one may fit now (a timeout or abandon freed the head of the line).
        this.poke(key)
      }
      const onAbort = (): void => finish('abandoned')
      const waiter: Waiter = {
        tryTake,
        done: finish,
        cancelTimer: this.clock.after(waitMs, () => finish('timeout')),
      }
      abandon?.addEventListener('abort', onAbort, { once: true })
      queue.push(waiter)
      this.queues.set(key, queue)
      this.armRetry()
      // Free already (the channels that refused it a moment ago have gone meanwhile)?
      this.poke(key)
    })
  }

  /** Something of the domain may have freed a channel: serve its waiters in order while they fit. */
  poke(domain: string): void {
    const queue = this.queues.get(domain.toLowerCase())
    while (queue !== undefined && queue.length > 0) {
      const head = queue[0] as Waiter
      if (!head.tryTake()) return
      head.done('taken')
    }
  }

  /** Ends every wait (the engine closes): each request is refused as stopping. */
  close(): void {
    for (const queue of [...this.queues.values()]) for (const w of [...queue]) w.done('abandoned')
    this.stopRetry?.()
    this.stopRetry = undefined
  }

  private remove(key: string, waiter: Waiter): void {
    const queue = this.queues.get(key)
    if (queue === undefined) return
    const i = queue.indexOf(waiter)
    if (i >= 0) queue.splice(i, 1)
    if (queue.length === 0) this.queues.delete(key)
    if (this.queues.size === 0) {
      this.stopRetry?.()
      this.stopRetry = undefined
    }
  }

  private armRetry(): void {
    if (this.stopRetry !== undefined) return
    this.stopRetry = this.clock.every(RETRY_MS, () => {
      for (const key of [...this.queues.keys()]) this.poke(key)
    })
  }
}

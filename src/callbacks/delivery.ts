/**
 * A delivery: one final result on its way to one callback_url, from the moment the engine hands
 * it over until it is delivered, given up or spooled. The fixed part (id, body, URL) is the
 * spool entry; the rest is where the delivery stands right now.
 */
import type { Target } from './policy.js'
import type { SpoolEntry } from './spool.js'

/**
 * - queued: waiting in its domain's queue for an attempt;
 * - inflight: an attempt is running;
 * - waiting: a retry timer runs (holds no queue slot);
 * - done: delivered, given up or spooled (no longer in the dispatcher).
 */
export type DeliveryState = 'queued' | 'inflight' | 'waiting' | 'done'

export interface Delivery {
  readonly id: string
  readonly domain: string
  readonly url: string
  readonly target: Target
  readonly requestId: string
  readonly body: string
  readonly createdAt: number
  readonly fromSpool: boolean
  attempts: number
  state: DeliveryState
  timer: NodeJS.Timeout | undefined
  /** Monotonic time the waiting retry is due. */
  dueAt: number
}

export const newDelivery = (e: SpoolEntry, target: Target, fromSpool: boolean): Delivery => ({
  id: e.delivery_id,
  domain: e.domain,
  url: e.url,
  target,
  requestId: e.request_id,
  body: e.body,
  createdAt: e.created_at,
  fromSpool,
  attempts: e.attempts,
  state: 'queued',
  timer: undefined,
  dueAt: 0,
})

export const spoolEntryOf = (d: Delivery): SpoolEntry => ({
  v: 1,
  delivery_id: d.id,
  domain: d.domain,
  url: d.url,
  request_id: d.requestId,
  body: d.body,
  attempts: d.attempts,
  created_at: d.createdAt,
})

/** The fields every log line about a delivery carries (the URL without credentials or query). */
export const logFields = (d: Delivery): Record<string, string> => ({
  domain: d.domain,
  request_id: d.requestId,
  delivery_id: d.id,
  url: d.target.logUrl,
})

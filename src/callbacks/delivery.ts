/**
 * A delivery: one final result on its way to one callback_url, from the moment its journal record
 * is durable until it is delivered, given up (a dead letter) or left pending in the journal at
 * shutdown. The fixed part (id, body, URL) is the journal's result record; the rest is where the
 * delivery stands right now.
 */
import type { ResultRecord } from '../journal/types.js'
import type { Target } from './policy.js'

/**
 * - held: a notice waiting for the notices before it in its order (NoticeFields.order);
 * - queued: waiting in its domain's queue for an attempt;
 * - inflight: an attempt is running;
 * - waiting: a retry timer runs (holds no queue slot);
 * - done: delivered, dead-lettered or left pending at shutdown (no longer in the dispatcher).
 */
export type DeliveryState = 'held' | 'queued' | 'inflight' | 'waiting' | 'done'

export interface Delivery {
  readonly record: ResultRecord
  readonly target: Target
  attempts: number
  /** Unix ms from which a failed attempt makes it a dead letter. */
  giveUpAt: number
  state: DeliveryState
  timer: NodeJS.Timeout | undefined
  /** Monotonic time the waiting retry is due. */
  dueAt: number
}

export const newDelivery = (record: ResultRecord, target: Target, attempts: number, giveUpAt: number): Delivery => ({
  record,
  target,
  attempts,
  giveUpAt,
  state: 'queued',
  timer: undefined,
  dueAt: 0,
})

/** The fields every log line about a delivery carries (the URL without credentials or query). */
export const logFields = (d: Delivery): Record<string, string> => ({
  domain: d.record.domain,
  request_id: d.record.requestId,
  delivery_id: d.record.deliveryId,
  url: d.target.logUrl,
})

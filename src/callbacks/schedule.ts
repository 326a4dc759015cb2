/**
 * The retry schedule: after an attempt that may be retried, what becomes of the delivery.
 * Retries go by time, not by count (issue 11 item 3): a result is tried again, with exponential
 * backoff capped at backoff_max_ms, until give_up_after_ms (default 24 h) have passed since it
 * was handed over; only a failure after that makes it a dead letter. A pure decision (settings,
 * clock and the time left before a shutdown deadline in; a step out), kept apart from the timers
 * and queues that carry it out, so that it is tested alone and applied alike after a restart.
 */
import { retryDelay, type Backoff } from './policy.js'

export type RetryStep =
  /** The give-up time passed: the delivery becomes a dead letter (logged with its body). */
  | { readonly kind: 'give_up'; readonly reason: string }
  /** Shutting down and the retry would come after the deadline: it stays pending in the journal. */
  | { readonly kind: 'leave'; readonly delayMs: number }
  /** Wait `delayMs`, then queue the delivery again. */
  | { readonly kind: 'retry'; readonly delayMs: number }

export interface RetryInput {
  /** Why the attempt failed (from its AttemptOutcome). */
  readonly reason: string
  /** The receiver's Retry-After, in ms, when it sent one. */
  readonly retryAfterMs?: number
  /** Attempts made so far, the failed one included. */
  readonly attempts: number
  /** Wall clock now and the delivery's give-up time (unix ms). */
  readonly now: number
  readonly giveUpAt: number
  /** Time left before the shutdown deadline; undefined while not shutting down. */
  readonly msBeforeDeadline: number | undefined
}

export function nextRetryStep(input: RetryInput, settings: Backoff, random: () => number): RetryStep {
  if (input.now >= input.giveUpAt) {
    return { kind: 'give_up', reason: `${input.reason} (still failing after ${input.attempts} attempts, past the give-up time)` }
  }
  const delayMs = retryDelay(input.attempts, settings, random, input.retryAfterMs)
  if (input.msBeforeDeadline !== undefined && delayMs > input.msBeforeDeadline) return { kind: 'leave', delayMs }
  return { kind: 'retry', delayMs }
}

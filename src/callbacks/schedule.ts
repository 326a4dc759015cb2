/**
 * The retry schedule: after an attempt that may be retried, what becomes of the delivery.
 * A pure decision (settings, attempt count and the time left before a shutdown deadline in; a
 * step out), kept apart from the timers and queues that carry it out, so that it can be tested
 * and reused as is (e.g. when replaying a journal).
 */
import { retryDelay } from './policy.js'
import type { CallbackSettings } from './types.js'

export type RetryStep =
  /** max_attempts reached: the delivery is given up (and logged with its body). */
  | { readonly kind: 'give_up'; readonly reason: string }
  /** Shutting down and the retry would come after the deadline: written to the spool instead. */
  | { readonly kind: 'spool' }
  /** Wait `delayMs`, then queue the delivery again. */
  | { readonly kind: 'retry'; readonly delayMs: number }

export interface RetryInput {
  /** Why the attempt failed (from its AttemptOutcome). */
  readonly reason: string
  /** The receiver's Retry-After, in ms, when it sent one. */
  readonly retryAfterMs?: number
  /** Attempts made so far, the failed one included. */
  readonly attempts: number
  /** Time left before the shutdown deadline; undefined while not shutting down. */
  readonly msBeforeDeadline: number | undefined
}

export function nextRetryStep(input: RetryInput, settings: CallbackSettings, random: () => number): RetryStep {
  if (input.attempts >= settings.max_attempts) {
    return { kind: 'give_up', reason: `${input.reason} (attempt ${input.attempts} of ${settings.max_attempts})` }
  }
  const delayMs = retryDelay(input.attempts, settings, random, input.retryAfterMs)
  if (input.msBeforeDeadline !== undefined && delayMs > input.msBeforeDeadline) return { kind: 'spool' }
  return { kind: 'retry', delayMs }
}

/**
 * Time as a part reads it, injected: a part that waits, times out or measures durations takes a
 * Clock instead of calling the timer globals itself, so that one place says where time comes from
 * and a test can say it too.
 *
 * `systemClock` reads the globals at each call, not once at import: a test that installs a fake
 * clock (@sinonjs/fake-timers, test/support/fake-clock.ts) moves every part at once, including
 * those built before it was installed.
 */
import { performance } from 'node:perf_hooks'

/** Cancels a timer; calling it again, or after the timer ran, does nothing. */
export type CancelTimer = () => void

export interface Clock {
  /** Monotonic milliseconds (performance.now()): for durations and deadlines, never for dates. */
  now(): number
  /** Runs `fn` once after `ms`. The timer does not keep the process alive. */
  after(ms: number, fn: () => void): CancelTimer
  /** Runs `fn` every `ms` until cancelled. The timer does not keep the process alive. */
  every(ms: number, fn: () => void): CancelTimer
}

export const systemClock: Clock = {
  now: () => performance.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms)
    t.unref()
    return () => clearTimeout(t)
  },
  every(ms, fn) {
    const t = setInterval(fn, ms)
    t.unref()
    return () => clearInterval(t)
  },
}

/** Resolves after `ms` on `clock` (a bounded wait: races a promise that may never settle). */
export const delay = (clock: Clock, ms: number): Promise<void> => new Promise((resolve) => clock.after(ms, resolve))

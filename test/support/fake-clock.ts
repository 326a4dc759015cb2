/**
 * A fake clock for a test about time: `setTimeout`, `setInterval`, `Date` and `performance.now`
 * stop following the wall clock and move only when the test advances them, so "nothing more
 * happened in the next minute" is proved by advancing a minute, not by waiting one (a wait
 * passes trivially on a slow machine). Promise callbacks, `setImmediate` and `process.nextTick`
 * stay real, so I/O and `await` keep working; `advance` lets the promises that each timer wakes
 * settle before the next timer fires (@sinonjs/fake-timers' tickAsync).
 *
 * Run the body of a test in `withFakeClock`: the fake clock is installed before the code under
 * test creates its timers and uninstalled as the body ends. Tap clears timers of its own while a
 * body runs: those are real, so a clear of a timer the clock did not make goes to the real
 * `clearTimeout` (shouldClearNativeTimers; without it the next test may never start).
 */
import FakeTimers from '@sinonjs/fake-timers'

export interface FakeClock {
  /** Moves time forward by `ms`, firing every timer due on the way, in order. */
  advance(ms: number): Promise<void>
  /** Milliseconds since the epoch on the fake clock (what `Date.now()` returns). */
  now(): number
  /** Timers still scheduled (a closed component leaves none). */
  pending(): number
  /**
   * Lets real I/O run and, whenever `idle()` says nothing is in flight on a real socket, fires
   * the next timer, until `cond` holds; rejects after `realMs` of wall time naming `what`. Time
   * jumps only while idle, so a request's own timeout never fires under it.
   */
  runUntil(what: string, cond: () => boolean, idle: () => boolean, realMs?: number): Promise<void>
  /**
   * Moves time forward by `ms` in steps of `stepMs`, letting real I/O finish between steps
   * while `idle()` is false: "nothing more happened in the next minute" with real sockets.
   */
  advanceIdle(ms: number, idle: () => boolean, stepMs?: number, realMs?: number): Promise<void>
}

/** One turn of the event loop: I/O callbacks run (setImmediate is not faked). */
const ioTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export async function withFakeClock<T>(body: (clock: FakeClock) => Promise<T>, start = Date.now()): Promise<T> {
  const clock = FakeTimers.install({
    now: start,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    shouldClearNativeTimers: true,
  })
  try {
    return await body({
      advance: async (ms) => {
        await clock.tickAsync(ms)
      },
      now: () => clock.now,
      pending: () => clock.countTimers(),
      runUntil: async (what, cond, idle, realMs = 5000) => {
        // process.hrtime is not faked: the wall-time bound holds whatever the fake clock says.
        const deadline = process.hrtime.bigint() + BigInt(realMs) * 1_000_000n
        while (!cond()) {
          if (process.hrtime.bigint() > deadline) throw new Error(`timed out after ${realMs} ms (wall time) waiting for ${what}`)
          if (idle() && clock.countTimers() > 0) await clock.nextAsync()
          else await ioTurn()
        }
      },
      advanceIdle: async (ms, idle, stepMs = 50, realMs = 5000) => {
        const deadline = process.hrtime.bigint() + BigInt(realMs) * 1_000_000n
        const target = clock.now + ms
        while (clock.now < target || !idle()) {
          if (process.hrtime.bigint() > deadline) throw new Error(`timed out after ${realMs} ms (wall time) advancing the clock`)
          if (!idle()) await ioTurn()
          else await clock.tickAsync(Math.min(stepMs, target - clock.now))
        }
      },
    })
  } finally {
    clock.uninstall()
  }
}

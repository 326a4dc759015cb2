/**
 * Pacing per box: the daemon starts at most `limit()` originate legs in any window of a second
 * and a margin (PACE_WINDOW_MS), so that FreeSWITCH never refuses one for its session rate
 * (docs/engine.md "Pacing"). Every originate passes here just before it is written (attempt.ts),
 * each of its legs counting as one session (a ring-all of ten terminals is ten).
 *
 * Why a sliding window and not a token bucket: FreeSWITCH counts sessions per second of its own
 * timer (switch_time.c refills `sps` once a second; switch_core_session.c refuses the session that
 * brings it to 0). A token bucket of rate N and depth N can start 2N within one of those seconds
 * (a full bucket, then its refill); the window never starts more than N within any window,
 * wherever FreeSWITCH's second begins.
 *
 * Two things make the window longer than a second, and a start count from when FreeSWITCH
 * accepted the originate rather than from its turn here: the originates of one turn reach
 * FreeSWITCH one after the other (the ESL socket carries one command at a time, behind the other
 * requests' lookups), and FreeSWITCH's timer thread counts its second late when it is busy. With
 * the window exactly a second, the real-switch lane saw a burst paced at 8 a second put 10 sessions
 * in one of FreeSWITCH's seconds and one `Throttle Error!` (test/realfs/pacing.ts).
 *
 * Callers over the pace wait for their turn first come, first served (a small originate never
 * overtakes a larger one ahead of it), each bounded by its own wait; past it, it is told so and
 * nothing of it counts.
 */
import type { CancelTimer, Clock } from '../util/clock.js'

/**
 * FreeSWITCH's second, and the margin for its timer running late (see above).
 * @internal Exported for tests: test/origination/pace.test.ts counts in windows.
 */
export const PACE_WINDOW_MS = 1100

/**
 * How long an originate may wait for its turn when its request gave no longer wait_ms: a burst
 * of twice the rate clears in about a second, and a client waiting for its reply expects seconds,
 * not tens of them. The alternative to waiting is worse: FreeSWITCH would refuse the originate
 * after the API said 200.
 */
export const DEFAULT_PACE_WAIT_MS = 2000

/** FreeSWITCH's vanilla `sessions-per-second` (switch.conf.xml), assumed until it was read. */
export const VANILLA_SESSIONS_PER_SECOND = 30

/**
 * The pace to keep under FreeSWITCH's `sessions-per-second`: 80 % of it, so that the sessions
 * FreeSWITCH creates on its own in the same second (inbound calls, the destination legs the
 * dialplan bridges on answer) fit too; at most sps - 1, because FreeSWITCH admits only sps - 1
 * new sessions a second (the sps-th brings its counter to 0, which it refuses:
 * test/fixtures/freeswitch/esl/35-sessions-per-second.txt, 4 of 5); at least 1.
 */
export function paceBelow(sessionsPerSecond: number): number {
  return Math.max(1, Math.min(Math.floor(sessionsPerSecond * 0.8), sessionsPerSecond - 1))
}

/**
 * How a wait for the pace ended. 'go': the legs may start now; the caller says when FreeSWITCH has
 * them (`written`: their start counts from then) or that it never will (`unused`: they count no
 * more). Otherwise the wait ran out, or the pace closed.
 */
export type PaceTurn = { readonly end: 'go'; written(): void; unused(): void } | { readonly end: 'timeout' } | { readonly end: 'abandoned' } | { readonly end: 'closed' }
/** @internal Exported for tests: test/origination/pace.test.ts records how waits ended. */
export type PaceEnd = PaceTurn['end']

export interface Pace {
  /**
   * Resolves 'go' once `sessions` more starts fit in the window, behind every earlier
   * caller still waiting; 'timeout' after `maxWaitMs` (nothing counted). An originate of more
   * legs than the whole rate goes alone, once the window is empty.
   */
  /** Waits for a turn; `abandon` (the client went away before its reply) leaves the line at once. */
  take(sessions: number, maxWaitMs: number, abandon?: AbortSignal): Promise<PaceTurn>
  /** Originates waiting for their turn now. */
  waiting(): number
  /** The legs per window kept now. */
  limit(): number
  /** Every waiter is told 'closed'. */
  close(): void
}

interface Waiter {
  readonly sessions: number
  readonly resolve: (turn: PaceTurn) => void
  cancelDeadline: CancelTimer
}

/** The legs of one turn, and when they started (their turn, then FreeSWITCH's acceptance). */
interface Start {
  at: number
  readonly sessions: number
}

export interface PaceDeps {
  readonly clock: Clock
  /** Legs per window (read at each take: a reload or a reconnection may change it). */
  readonly limit: () => number
  /** Real seconds per FreeSWITCH second (engine.ts timeScale; only a sped-up simulator has another): the window scales. Default 1. */
  readonly timeScale?: number
}

export function createPace(deps: PaceDeps): Pace {
  const { clock } = deps
  const windowMs = PACE_WINDOW_MS * (deps.timeScale ?? 1)
  /** The turns of the last window (any order: a written turn moves later). */
  let starts: Start[] = []
  const queue: Waiter[] = []
  let cancelWake: CancelTimer | undefined
  let closed = false

  const limit = () => Math.max(1, Math.floor(deps.limit()))
  /** Zero when `sessions` fit now, else how long until enough of the window's starts age out. */
  const delayFor = (sessions: number): number => {
    const now = clock.now()
    starts = starts.filter((s) => s.at > now - windowMs)
    const inWindow = starts.reduce((n, s) => n + s.sessions, 0)
    const max = limit()
    // More legs than the rate: alone in an empty window, the best that can be done.
    let over = sessions > max ? inWindow : inWindow + sessions - max
    if (over <= 0) return 0
    // The oldest starts age out first: wait for as many legs as are over.
    for (const s of [...starts].sort((a, b) => a.at - b.at)) {
      over -= s.sessions
      if (over <= 0) return s.at + windowMs - now
    }
    return windowMs
  }
  const grant = (sessions: number): PaceTurn => {
    const start: Start = { at: clock.now(), sessions }
    starts.push(start)
    return {
      end: 'go',
      written: () => {
        start.at = clock.now()
      },
      unused: () => {
        starts = starts.filter((s) => s !== start)
        pump()
      },
    }
  }

  /** Lets the waiters at the head go while they fit; wakes again when the head will. */
  const pump = () => {
    cancelWake?.()
    cancelWake = undefined
    for (;;) {
      const head = queue[0]
      if (head === undefined) return
      const wait = delayFor(head.sessions)
      if (wait > 0) {
        cancelWake = clock.after(wait, pump)
        return
      }
      queue.shift()
      head.cancelDeadline()
      head.resolve(grant(head.sessions))
    }
  }

  return {
    take(sessions, maxWaitMs, abandon) {
      if (closed) return Promise.resolve({ end: 'closed' })
      if (abandon?.aborted === true) return Promise.resolve({ end: 'abandoned' })
      if (queue.length === 0 && delayFor(sessions) === 0) return Promise.resolve(grant(sessions))
      if (maxWaitMs <= 0) return Promise.resolve({ end: 'timeout' })
      return new Promise<PaceTurn>((resolve) => {
        /** Out of the line with this end (the head may have gone: the next one may fit already). */
        const leave = (end: 'timeout' | 'abandoned'): void => {
          const i = queue.indexOf(w)
          if (i < 0) return
          queue.splice(i, 1)
          w.cancelDeadline()
          resolve({ end })
          if (i === 0) pump()
        }
        const onAbandon = (): void => leave('abandoned')
        const w: Waiter = {
          sessions,
          resolve: (turn) => {
            abandon?.removeEventListener('abort', onAbandon)
            resolve(turn)
          },
          cancelDeadline: () => undefined,
        }
        const cancelTimer = clock.after(maxWaitMs, () => leave('timeout'))
        w.cancelDeadline = () => {
          cancelTimer()
          abandon?.removeEventListener('abort', onAbandon)
        }
        abandon?.addEventListener('abort', onAbandon, { once: true })
        queue.push(w)
        if (queue.length === 1) pump()
      })
    },
    waiting: () => queue.length,
    limit,
    close() {
      closed = true
      cancelWake?.()
      cancelWake = undefined
      for (const w of queue.splice(0)) {
        w.cancelDeadline()
        w.resolve({ end: 'closed' })
      }
    },
  }
}

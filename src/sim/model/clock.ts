/**
 * Simulated time: every delay the simulator waits (a phone ringing, an answer after N seconds,
 * originate_timeout, sleep...) is multiplied by `timeScale`, so tests run a 20 s scenario in 1 s.
 * Every timer is tracked so that close() leaves no handle behind. Waiting for an interruption
 * (untilAborted) is here too: it is the other way an application's time ends.
 */
export interface TimerHandle {
  cancel(): void
}

export class Clock {
  private readonly timers = new Set<NodeJS.Timeout>()
  private closed = false

  constructor(readonly timeScale: number) {}

  /** Runs `fn` after `seconds` of simulated time (0 = on the next turn of the event loop). */
  after(seconds: number, fn: () => void): TimerHandle {
    if (this.closed) return { cancel: () => undefined }
    const ms = Math.max(0, seconds * 1000 * this.timeScale)
    const t = setTimeout(() => {
      this.timers.delete(t)
      fn()
    }, ms)
    this.timers.add(t)
    return {
      cancel: () => {
        clearTimeout(t)
        this.timers.delete(t)
      },
    }
  }

  /** Resolves after `seconds` of simulated time, or at once (false) when `signal` aborts. */
  sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false)
      const onAbort = (): void => {
        timer.cancel()
        resolve(false)
      }
      const timer = this.after(seconds, () => {
        signal?.removeEventListener('abort', onAbort)
        resolve(true)
      })
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  close(): void {
    this.closed = true
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
  }
}

/**
 * Resolves when `signal` aborts (at once when it already has): an application that runs until
 * it is interrupted (park, endless_playback, echo, a bridge waiting for its end).
 */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
}

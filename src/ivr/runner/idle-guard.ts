/**
 * The guard against documents that never wait for the caller: at most MAX_IDLE_STEPS elements
 * and MAX_IDLE_LOADS fetches between two FreeSWITCH applications, so a GoTo or Redirect loop
 * can neither spin nor hammer a server. Any application FreeSWITCH runs (a prompt, an answer,
 * a bridge) resets both counts.
 */

export const MAX_IDLE_STEPS = 1000
export const MAX_IDLE_LOADS = 20

export class IdleGuard {
  private steps = 0
  private loads = 0

  /** An element is about to run: false once more than MAX_IDLE_STEPS ran idle. */
  step(): boolean {
    return ++this.steps <= MAX_IDLE_STEPS
  }

  /** A fetch is about to start: false once more than MAX_IDLE_LOADS were idle. */
  load(): boolean {
    return ++this.loads <= MAX_IDLE_LOADS
  }

  /** FreeSWITCH runs an application: the document is doing something for the caller. */
  reset(): void {
    this.steps = 0
    this.loads = 0
  }
}

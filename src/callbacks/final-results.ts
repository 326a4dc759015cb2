/**
 * Exactly one final callback per request: the request ids whose result was already handed
 * over, so that a second final result (an engine bug) is refused instead of sent. Bounded: the
 * oldest ids are forgotten first.
 */

/** How many request ids are remembered to refuse a second final result for one request. */
const REMEMBERED_REQUESTS = 100_000

export class FinalResults {
  /** Insertion order is age: the oldest is forgotten first. */
  private readonly seen = new Set<string>()

  constructor(private readonly capacity = REMEMBERED_REQUESTS) {}

  /** True the first time a (domain, request id) is seen; false for a second final result. */
  remember(domain: string, requestId: string): boolean {
    const key = `${domain}\n${requestId}`
    if (this.seen.has(key)) return false
    this.seen.add(key)
    if (this.seen.size > this.capacity) {
      const oldest = this.seen.values().next()
      if (oldest.done !== true) this.seen.delete(oldest.value)
    }
    return true
  }
}

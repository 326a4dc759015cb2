/**
 * Exactly one final callback per request: the request ids whose result was handed over lately,
 * so that a second final result (an engine bug, a replay race) is refused instead of sent.
 * Such a second result comes within moments of the first; remembered for 5 minutes (and at
 * most 100,000), the set stops growing after 5 minutes at any steady rate (RecentIds).
 */
import { RecentIds } from '../util/recent-ids.js'

const REMEMBERED_MS = 5 * 60 * 1000
const REMEMBERED_REQUESTS = 100_000

export class FinalResults {
  private readonly seen: RecentIds

  /** `now`: the wall clock (ms). */
  constructor(
    private readonly now: () => number,
    capacity = REMEMBERED_REQUESTS,
  ) {
    this.seen = new RecentIds(REMEMBERED_MS, capacity)
  }

  /** True the first time a (domain, request id) is seen; false for a second final result. */
  remember(domain: string, requestId: string): boolean {
    const key = `${domain}\n${requestId}`
    if (this.seen.has(key)) return false
    this.seen.add(key, this.now())
    return true
  }
}

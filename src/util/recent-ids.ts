/**
 * Ids seen lately: each forgotten once it is older than `ttlMs`, or earlier when there are more
 * than `capacity` (the oldest first). For the sets that only need to answer "was this id seen a
 * moment ago?" (a second final result for one request, a second `ended`): bounded by age, they
 * stop growing once the daemon has run for `ttlMs` at a steady rate, rather than after `capacity`
 * requests (at 30 requests a second, 100,000 took 55 minutes: docs/bench.md, the soak). The count
 * bounds the memory under a burst.
 *
 * Insertion order is age, so times are expected not to go back; one that does (a wall clock
 * stepped back) only keeps the ids after it a little longer.
 */
export class RecentIds {
  /** Id → when it was added (ms); insertion order is age. */
  private readonly seenAt = new Map<string, number>()

  constructor(
    private readonly ttlMs: number,
    private readonly capacity: number,
  ) {}

  has(id: string): boolean {
    return this.seenAt.has(id)
  }

  /** Adds `id` as seen at `now` (again: its age starts over), forgetting what is too old. */
  add(id: string, now: number): void {
    this.seenAt.delete(id)
    this.seenAt.set(id, now)
    for (const [oldest, at] of this.seenAt) {
      if (this.seenAt.size <= this.capacity && now - at < this.ttlMs) break
      this.seenAt.delete(oldest)
    }
  }

  forget(id: string): void {
    this.seenAt.delete(id)
  }

  get size(): number {
    return this.seenAt.size
  }
}

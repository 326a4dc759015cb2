/**
 * The simulator's histories (commands received, applications run) for tests and the sandbox's
 * inspection. A test reads them after a few seconds of traffic; the standalone simulator
 * (`cod simulator`, src/sim/run.ts) may run for weeks beside an application under development,
 * so a history keeps only its latest `capacity` entries, or it would grow with every call.
 * Trimming is amortised: the array may reach twice the capacity, then the older half goes.
 */

/** Entries kept per history by default: far more than any test produces, a few MB at most. */
const DEFAULT_HISTORY = 100_000

export class BoundedLog<T> {
  private items: T[] = []
  /** Entries trimmed so far (so a reader can tell the history is not complete). */
  dropped = 0

  constructor(private readonly capacity: number = DEFAULT_HISTORY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`history capacity must be a positive integer, not ${capacity}`)
  }

  push(item: T): void {
    this.items.push(item)
    if (this.items.length >= 2 * this.capacity) {
      const excess = this.items.length - this.capacity
      this.items.splice(0, excess)
      this.dropped += excess
    }
  }

  /** The latest entries (at most capacity × 2), oldest first. The array is the log's own: do not change it. */
  entries(): readonly T[] {
    return this.items
  }

  filter(keep: (item: T) => boolean): T[] {
    return this.items.filter(keep)
  }

  get length(): number {
    return this.items.length
  }
}

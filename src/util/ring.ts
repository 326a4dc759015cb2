/**
 * A bounded list that keeps the newest `capacity` items: adding to a full ring drops the oldest.
 * For histories a part keeps in memory (the finished calls, the channel samples of the live
 * calls page) whose size must not grow with the daemon's uptime.
 */
export class Ring<T> {
  private readonly items: T[] = []
  /** Where the oldest item is once the ring is full (the next one to be overwritten). */
  private head = 0

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`ring capacity must be a positive integer, not ${capacity}`)
  }

  get size(): number {
    return this.items.length
  }

  push(item: T): void {
    if (this.items.length < this.capacity) {
      this.items.push(item)
      return
    }
    this.items[this.head] = item
    this.head = (this.head + 1) % this.capacity
  }

  /** Oldest first. */
  toArray(): T[] {
    return [...this.items.slice(this.head), ...this.items.slice(0, this.head)]
  }
}

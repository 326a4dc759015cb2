/**
 * An index from a key to the records filed under it. Most keys hold one record (a request's
 * leg, a user's call), so a lone record is stored as itself and a Set is made only from the
 * second one on: a live call costs a map entry per index, not a Set.
 */

const EMPTY: ReadonlySet<never> = new Set()

export class MultiMap<K, V extends object> {
  private readonly entries = new Map<K, V | Set<V>>()

  add(key: K, value: V): void {
    const current = this.entries.get(key)
    if (current === undefined) this.entries.set(key, value)
    else if (current instanceof Set) current.add(value)
    else if (current !== value) this.entries.set(key, new Set([current, value]))
  }

  delete(key: K, value: V): void {
    const current = this.entries.get(key)
    if (current === value) this.entries.delete(key)
    else if (current instanceof Set) {
      current.delete(value)
      if (current.size === 0) this.entries.delete(key)
    }
  }

  /** The records under `key`, in the order they were filed. */
  get(key: K): Iterable<V> {
    const current = this.entries.get(key)
    return current === undefined ? EMPTY : current instanceof Set ? current : [current]
  }
}

/**
 * One string object per distinct value for the channel fields that repeat from call to call
 * (domain, role, operation, caller names and numbers, hangup causes, the `cod_*` variables that
 * name kinds). Every event FreeSWITCH sends is parsed into fresh strings: without this, each live
 * call kept its own copy of `example.test`, `originator`, `Outbound Call`... (the scale benchmark's
 * heap per live call, docs/bench.md). Bounded: when full it starts over, which only costs the
 * sharing of the values seen before.
 */
const MAX_ENTRIES = 4096
/** Longer values are request ids, UUIDs or free text: rarely shared, not worth keeping. */
const MAX_LENGTH = 64

export class Interner {
  private readonly pool = new Map<string, string>()

  /** The shared copy of `s` (or `s` itself when it is not worth sharing). */
  of<T extends string | undefined>(s: T): T {
    if (s === undefined || s.length > MAX_LENGTH) return s
    const known = this.pool.get(s)
    if (known !== undefined) return known as T
    if (this.pool.size >= MAX_ENTRIES) this.pool.clear()
    this.pool.set(s, s)
    return s
  }
}

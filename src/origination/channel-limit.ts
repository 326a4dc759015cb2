/**
 * Channel limit accounting (docs/design.md "Origination semantics", Channel limit): a domain's
 * channels in use are its live channels as FreeSWITCH reports them (the channel model: also calls
 * not made through the API) plus the legs reserved by requests in flight that FreeSWITCH has not
 * created yet. A request is admitted only if in-use + the legs it needs <= channel_limit.
 *
 * tryReserve() checks and reserves in one synchronous step; JavaScript runs it to the end
 * before any other request can look, so concurrent requests can never both take the last slot.
 * A reservation ends when its leg is created (it is then counted as live), or when the leg
 * fails or is never placed (release()).
 */

const norm = (domain: string): string => domain.toLowerCase()

export class ChannelLimiter {
  private readonly reserved = new Map<string, Set<string>>()
  private readonly domainOf = new Map<string, string>()

  /** @param live the domain's live channel count (ChannelModel.liveCount). */
  constructor(private readonly live: (domain: string) => number) {}

  inUse(domain: string): number {
    return this.live(norm(domain)) + this.reservedCount(domain)
  }

  reservedCount(domain: string): number {
    return this.reserved.get(norm(domain))?.size ?? 0
  }

  /** Reserves one slot per uuid if they all fit under `limit`; otherwise reserves nothing. */
  tryReserve(domain: string, limit: number, uuids: readonly string[]): boolean {
    const d = norm(domain)
    if (this.inUse(d) + uuids.length > limit) return false
    let set = this.reserved.get(d)
    if (set === undefined) {
      set = new Set()
      this.reserved.set(d, set)
    }
    for (const u of uuids) {
      set.add(u)
      this.domainOf.set(u, d)
    }
    return true
  }

  /** Ends the reservation of these legs (created, failed, or never placed). Unknown uuids are ignored. */
  release(...uuids: readonly string[]): void {
    for (const u of uuids) {
      const d = this.domainOf.get(u)
      if (d === undefined) continue
      this.domainOf.delete(u)
      const set = this.reserved.get(d)
      set?.delete(u)
      if (set?.size === 0) this.reserved.delete(d)
    }
  }
}

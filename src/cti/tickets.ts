/**
 * One-time tickets for browsers: a browser cannot send an Authorization header with a
 * WebSocket, and must never hold an API token. The app server asks `gen_ws_ticket` (with its
 * token) for a ticket bound to one domain and one exact ws_cti URI; the browser connects with
 * `&ticket=...`. A ticket is consumed by its first presentation, right or wrong, so a leaked
 * ticket cannot be probed or replayed, and it expires after `cti.ticket_ttl_ms`.
 */
import { randomBytes } from 'node:crypto'
import { err, ok, type Result } from '../util/result.js'

interface Ticket {
  readonly domain: string
  readonly uri: string
  readonly expiresAt: number
}

export type RedeemError = 'unknown' | 'expired' | 'wrong_uri'

export class TicketStore {
  private readonly tickets = new Map<string, Ticket>()

  constructor(private readonly now: () => number) {}

  get size(): number {
    return this.tickets.size
  }

  issue(domain: string, uri: string, ttlMs: number): string {
    this.sweepHead()
    // 24 random bytes: 192 bits, URL-safe without escaping.
    const ticket = randomBytes(24).toString('base64url')
    this.tickets.set(ticket, { domain, uri, expiresAt: this.now() + ttlMs })
    return ticket
  }

  /** Consumes the ticket; ok with its domain when it is live and was issued for `uri`. */
  redeem(ticket: string, uri: string): Result<string, RedeemError> {
    const t = this.tickets.get(ticket)
    if (t === undefined) return err('unknown')
    this.tickets.delete(ticket)
    if (this.now() >= t.expiresAt) return err('expired')
    if (t.uri !== uri) return err('wrong_uri')
    return ok(t.domain)
  }

  /**
   * Drops expired tickets from the oldest on, stopping at the first live one: amortised O(1)
   * per issue, since tickets are kept in issue order and share one TTL (a reload that changes
   * the TTL only delays some drops until the next full sweep).
   */
  private sweepHead(): void {
    const now = this.now()
    for (const [key, t] of this.tickets) {
      if (now < t.expiresAt) return
      this.tickets.delete(key)
    }
  }

  /** Drops every expired ticket, so that unredeemed ones cost memory for about one TTL only. */
  sweep(): void {
    const now = this.now()
    for (const [key, t] of this.tickets) {
      if (now >= t.expiresAt) this.tickets.delete(key)
    }
  }

  clear(): void {
    this.tickets.clear()
  }
}

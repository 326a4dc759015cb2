/**
 * Channel limit accounting (docs/design.md "Origination semantics", Channel limit; docs/engine.md
 * "Channel limit" says how every leg is counted): a domain's channels in use are its live
 * channels as FreeSWITCH reports them (the channel model: also calls not made through the API)
 * plus the channels that admitted requests may still create. A request is admitted only if
 * in-use + every channel it may create <= channel_limit.
 *
 * Two kinds of reservation:
 * - originator legs, one per pre-assigned UUID: ends when the leg is created (it is then live)
 *   or can no longer be (its originate ended, or it was never placed): release();
 * - the destination of a request (`DestinationHold`): the legs the daemon's dialplan bridges to
 *   once an originator leg answered, created later and under UUIDs FreeSWITCH chooses. The hold
 *   keeps `slots` channels for them: it counts `slots` minus the request's destination legs live
 *   now, so a leg that becomes live takes its slot over, and a slot comes back when a leg ends
 *   and another may follow (a group hunted member after member, an IVR transferring). The hold
 *   ends when no destination leg can come any more: the request was refused, no originator leg
 *   answered, or the answered leg hung up.
 *
 * The counts are kept up to date as channels change (channelChanged(), fed by the engine from
 * the channel model), so an admission costs the same with 10,000 calls up as with none.
 * tryReserve() checks and reserves in one synchronous step; JavaScript runs it to the end
 * before any other request can look, so concurrent requests can never both take the last slot.
 */
import { performance } from 'node:perf_hooks'

const norm = (domain: string): string => domain.toLowerCase()

/**
 * How long an answered leg the channel model does not know (yet) keeps its request's hold:
 * its CHANNEL_CREATE may still be on its way (an ESL re-read after a reconnection).
 */
const UNSEEN_WINNER_MS = 10_000

/** What the limiter reads from the channel model (src/channels). */
export interface LimitChannels {
  /** The domain's live (not hung up) channels. */
  liveCount(domain: string): number
  /** Whether this channel is live: true/false, or undefined when the model does not know it. */
  isLive(uuid: string): boolean | undefined
  /** The request's destination legs (cod_role=destination) that are live now: a new hold starts from them. */
  liveDestinationLegs(requestId: string): Iterable<string>
}

/** A channel as the limiter needs to see its changes (a ChannelRecord of src/channels fits). */
export interface LimitChannel {
  readonly uuid: string
  readonly requestId: string | undefined
  readonly role: string | undefined
  /** `hangup` once it no longer counts. */
  readonly state: string
}

/** A request's destination reservation. Only this module changes it. */
interface DestinationHold {
  readonly requestId: string
  readonly domain: string
  /** Channels kept for the destination legs: at most this many live at once. */
  readonly slots: number
  /** Its destination legs live now. */
  readonly legs: Set<string>
  /** The originator leg that answered, once known: the hold lasts while it lives. */
  winner: string | undefined
  /** performance.now() when the winner was bound. */
  boundAt: number
  /** The channel model has shown the winner live: once it forgets it, the leg is gone. */
  winnerSeen: boolean
}

/** What a request asks for at admission: its originator legs and, after an answer, its destination legs. */
export interface LegDemand {
  readonly uuids: readonly string[]
  /** Omitted: the request's destination holds nothing (or holds already: a hunt's later member). */
  readonly destination?: { readonly requestId: string; readonly slots: number }
}

/** Free slots of one hold: what it reserves beyond its live legs. */
const freeOf = (h: DestinationHold): number => Math.max(0, h.slots - h.legs.size)

export class ChannelLimiter {
  private readonly reserved = new Map<string, Set<string>>()
  private readonly domainOf = new Map<string, string>()
  private readonly holds = new Map<string, DestinationHold>()
  /** Σ freeOf(hold) per domain, kept as holds and their legs change. */
  private readonly holdFree = new Map<string, number>()
  /** Answered leg → the request whose hold it keeps. */
  private readonly winners = new Map<string, string>()

  private readonly channels: LimitChannels
  private readonly inFlight: (requestId: string) => boolean
  private readonly now: () => number

  /**
   * @param deps.inFlight whether the request is still being placed: a hold whose request is
   *   neither in flight nor answered can create nothing more (sweep(), a leak guard: the engine
   *   also drops holds explicitly).
   */
  constructor(deps: { readonly channels: LimitChannels; readonly inFlight: (requestId: string) => boolean; readonly now?: () => number }) {
    this.channels = deps.channels
    this.inFlight = deps.inFlight
    this.now = deps.now ?? (() => performance.now())
  }

  inUse(domain: string): number {
    const d = norm(domain)
    return this.channels.liveCount(d) + this.reservedCount(d)
  }

  /** Channels reserved and not live yet: originator legs plus the free slots of destination holds. */
  reservedCount(domain: string): number {
    const d = norm(domain)
    return (this.reserved.get(d)?.size ?? 0) + (this.holdFree.get(d) ?? 0)
  }

  /**
   * Reserves one slot per uuid, plus the destination's slots, if they all fit under `limit`;
   * otherwise reserves nothing.
   */
  tryReserve(domain: string, limit: number, demand: LegDemand): boolean {
    const d = norm(domain)
    const dest = demand.destination
    const wanted = demand.uuids.length + (dest?.slots ?? 0)
    if (this.inUse(d) + wanted > limit) return false
    if (demand.uuids.length > 0) {
      let set = this.reserved.get(d)
      if (set === undefined) {
        set = new Set()
        this.reserved.set(d, set)
      }
      for (const u of demand.uuids) {
        set.add(u)
        this.domainOf.set(u, d)
      }
    }
    if (dest !== undefined) {
      this.dropHold(dest.requestId)
      const h: DestinationHold = {
        requestId: dest.requestId,
        domain: d,
        slots: dest.slots,
        legs: new Set(this.channels.liveDestinationLegs(dest.requestId)),
        winner: undefined,
        boundAt: 0,
        winnerSeen: false,
      }
      this.holds.set(h.requestId, h)
      this.addFree(d, freeOf(h))
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

  /** The originator leg `uuid` answered: the request's destination hold lasts while it lives. */
  bindWinner(requestId: string, uuid: string): void {
    const h = this.holds.get(requestId)
    if (h === undefined) return
    if (h.winner !== undefined) this.winners.delete(h.winner)
    h.winner = uuid
    h.boundAt = this.now()
    const live = this.channels.isLive(uuid)
    if (live === false) return this.dropHold(requestId)
    h.winnerSeen = live === true
    this.winners.set(uuid, requestId)
  }

  /** No destination leg can come for this request any more (refused, or no originator leg answered). */
  dropHold(requestId: string): void {
    const h = this.holds.get(requestId)
    if (h === undefined) return
    this.holds.delete(requestId)
    if (h.winner !== undefined && this.winners.get(h.winner) === requestId) this.winners.delete(h.winner)
    this.addFree(h.domain, -freeOf(h))
  }

  /**
   * Grows the request's hold to `slots` channels if the growth fits under `limit` (an IVR's
   * Transfer that rings more legs than the one the hold was admitted with, ivr/transfer-gate.ts).
   * A hold already this large answers true; a request without a hold answers false. The grown
   * hold keeps its size until it ends: a later Transfer of the same call may ring as many again.
   */
  tryWiden(domain: string, limit: number, requestId: string, slots: number): boolean {
    const h = this.holds.get(requestId)
    if (h === undefined) return false
    if (slots <= h.slots) return true
    const grown: DestinationHold = { ...h, slots }
    const extra = freeOf(grown) - freeOf(h)
    if (this.inUse(domain) + extra > limit) return false
    this.holds.set(requestId, grown)
    this.addFree(h.domain, extra)
    return true
  }

  /** The slots held for the request's destination, or undefined when it holds none. */
  destinationSlots(requestId: string): number | undefined {
    return this.holds.get(requestId)?.slots
  }

  /**
   * A hold for a request the limiter never admitted (e.g. placed before a daemon restart), whose
   * answered leg `winner` asks the dialplan for its destination: taken only if it fits.
   */
  tryHoldAfterAnswer(domain: string, limit: number, requestId: string, winner: string, slots: number): boolean {
    if (!this.tryReserve(domain, limit, { uuids: [], destination: { requestId, slots } })) return false
    this.bindWinner(requestId, winner)
    return this.holds.has(requestId)
  }

  /** A channel changed (created, hung up, destroyed, re-read): its request's hold follows it. */
  channelChanged(c: LimitChannel): void {
    const live = c.state !== 'hangup'
    const answeredFor = this.winners.get(c.uuid)
    if (answeredFor !== undefined) {
      const h = this.holds.get(answeredFor)
      if (h !== undefined && live) h.winnerSeen = true
      // The answered leg is gone: no bridge can come from it any more.
      else if (!live) this.dropHold(answeredFor)
    }
    if (c.requestId === undefined || c.role !== 'destination') return
    const h = this.holds.get(c.requestId)
    if (h === undefined) return
    const before = freeOf(h)
    if (live) h.legs.add(c.uuid)
    else h.legs.delete(c.uuid)
    this.addFree(h.domain, freeOf(h) - before)
  }

  /**
   * Ends the holds whose end no channel change reported (a leak guard, run every few seconds):
   * a request no longer in flight and never answered; an answered leg never seen after
   * UNSEEN_WINNER_MS, or seen and then forgotten by the channel model.
   */
  sweep(): void {
    for (const h of [...this.holds.values()]) {
      if (h.winner === undefined) {
        if (!this.inFlight(h.requestId)) this.dropHold(h.requestId)
        continue
      }
      const live = this.channels.isLive(h.winner)
      if (live === true) h.winnerSeen = true
      else if (live === false || h.winnerSeen || this.now() - h.boundAt >= UNSEEN_WINNER_MS) this.dropHold(h.requestId)
    }
  }

  private addFree(domain: string, delta: number): void {
    if (delta === 0) return
    const n = (this.holdFree.get(domain) ?? 0) + delta
    if (n > 0) this.holdFree.set(domain, n)
    else this.holdFree.delete(domain)
  }
}

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

/** What the limiter reads from the channel model (src/channels): live counts and one request's legs. */
export interface LimitChannels {
  /** The domain's live (not hung up) channels. */
  liveCount(domain: string): number
  /** Whether this channel is live: true/false, or undefined when the model does not know it. */
  isLive(uuid: string): boolean | undefined
  /** The request's destination legs (cod_role=destination) that are live now. */
  liveDestinationLegs(requestId: string): number
}

/** A request's destination reservation. Only this module changes it. */
interface DestinationHold {
  readonly domain: string
  /** Channels kept for the destination legs: at most this many live at once. */
  slots: number
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

export class ChannelLimiter {
  private readonly reserved = new Map<string, Set<string>>()
  private readonly domainOf = new Map<string, string>()
  private readonly holds = new Map<string, DestinationHold>()

  private readonly channels: LimitChannels
  private readonly inFlight: (requestId: string) => boolean
  private readonly now: () => number

  /**
   * @param deps.inFlight whether the request is still being placed: a hold whose request is
   *   neither in flight nor answered can create nothing more (a leak guard: the engine also
   *   drops it explicitly).
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
    let n = this.reserved.get(d)?.size ?? 0
    for (const [requestId, h] of this.holds) {
      if (h.domain !== d) continue
      if (!this.holdIsActive(requestId, h)) {
        this.holds.delete(requestId)
        continue
      }
      n += Math.max(0, h.slots - this.channels.liveDestinationLegs(requestId))
    }
    return n
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
    let set = this.reserved.get(d)
    if (set === undefined) {
      set = new Set()
      this.reserved.set(d, set)
    }
    for (const u of demand.uuids) {
      set.add(u)
      this.domainOf.set(u, d)
    }
    if (dest !== undefined) this.holds.set(dest.requestId, { domain: d, slots: dest.slots, winner: undefined, boundAt: 0, winnerSeen: false })
    if (set.size === 0) this.reserved.delete(d)
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
    h.winner = uuid
    h.boundAt = this.now()
  }

  /** No destination leg can come for this request any more (refused, or no originator leg answered). */
  dropHold(requestId: string): void {
    this.holds.delete(requestId)
  }

  /** The slots held for the request's destination, or undefined when it holds none. */
  destinationSlots(requestId: string): number | undefined {
    const h = this.holds.get(requestId)
    if (h === undefined) return undefined
    if (this.holdIsActive(requestId, h)) return h.slots
    this.holds.delete(requestId)
    return undefined
  }

  /**
   * A hold for a request the limiter never admitted (e.g. placed before a daemon restart), whose
   * answered leg `winner` asks the dialplan for its destination: taken only if it fits.
   */
  tryHoldAfterAnswer(domain: string, limit: number, requestId: string, winner: string, slots: number): boolean {
    if (!this.tryReserve(domain, limit, { uuids: [], destination: { requestId, slots } })) return false
    this.bindWinner(requestId, winner)
    return true
  }

  private holdIsActive(requestId: string, h: DestinationHold): boolean {
    if (h.winner === undefined) return this.inFlight(requestId)
    const live = this.channels.isLive(h.winner)
    if (live === true) h.winnerSeen = true
    if (live !== undefined) return live
    return !h.winnerSeen && this.now() - h.boundAt < UNSEEN_WINNER_MS
  }
}

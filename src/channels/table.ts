/**
 * The table of live channels and its indexes: by UUID, by user (the users party to a channel)
 * and by request id, with the live count per domain that the channel limit reads. Every change
 * to an indexed field goes through a method here, so the indexes can never disagree with the
 * records. What the fields mean, and when they change, is decided by the event reducer and
 * the re-read (event-reducer.ts, reconcile.ts).
 *
 * No index by domain: a domain's channels are listed only when a full-events CTI connection
 * opens or a cluster node republishes its box (src/cti/hub.ts), and a walk over the table then
 * costs less than keeping every live channel in a set per domain (≈ 30 B of heap per live call,
 * the scale benchmark's figure, docs/bench.md; and a set insert and delete per call).
 */
import { performance } from 'node:perf_hooks'
import { MultiMap } from './multi-map.js'
import { withItem, withoutItem, type MutableChannel } from './record.js'
import type { ChannelRecord, ChannelState } from './types.js'

/** How long a destroyed channel's UUID is remembered: a late event or re-read must not revive it. */
const DESTROYED_MEMORY_MS = 60_000

const userKey = (domain: string, userId: string): string => `${domain}\0${userId}`

export class ChannelTable {
  private readonly channels = new Map<string, MutableChannel>()
  /** Channels of each domain that are not hung up: what the channel limit counts. */
  private readonly liveByDomain = new Map<string, number>()
  private readonly byUser = new MultiMap<string, MutableChannel>()
  private readonly byRequest = new MultiMap<string, MutableChannel>()
  /** One string per domain name, shared by all its channels. */
  private readonly domainNames = new Map<string, string>()
  /** UUID → performance.now() of its destruction, oldest first. */
  private readonly destroyed = new Map<string, number>()
  /** Counts the events applied: a record's seenSeq says how recently it was heard of. */
  private seq = 0

  get size(): number {
    return this.channels.size
  }

  /** The counter value of the last event applied. */
  get lastSeq(): number {
    return this.seq
  }

  nextSeq(): number {
    this.seq += 1
    return this.seq
  }

  get(uuid: string): MutableChannel | undefined {
    return this.channels.get(uuid)
  }

  all(): IterableIterator<MutableChannel> {
    return this.channels.values()
  }

  insert(ch: MutableChannel): void {
    this.channels.set(ch.uuid, ch)
  }

  /** Places a channel in its domain (once: a channel never changes domain). */
  setDomain(ch: MutableChannel, domain: string): void {
    if (ch.domain !== undefined) return
    let name = this.domainNames.get(domain)
    if (name === undefined) this.domainNames.set(domain, (name = domain))
    ch.domain = name
    if (ch.state !== 'hangup') this.liveByDomain.set(name, (this.liveByDomain.get(name) ?? 0) + 1)
    for (const userId of ch.parties) this.byUser.add(userKey(name, userId), ch)
  }

  setState(ch: MutableChannel, state: ChannelState, at: number): void {
    if (ch.state === state) return
    if (state === 'hangup') this.unlive(ch)
    ch.state = state
    ch.stateAt = at
  }

  /** Makes `userId` a party to the channel; true when it was not one already. */
  addParty(ch: MutableChannel, userId: string): boolean {
    const parties = withItem(ch.parties, userId)
    if (parties === ch.parties) return false
    ch.parties = parties
    if (ch.domain !== undefined) this.byUser.add(userKey(ch.domain, userId), ch)
    return true
  }

  /** The user whose terminal the channel is (a party to it from then on). */
  setUser(ch: MutableChannel, userId: string): void {
    ch.userId = userId
    this.addParty(ch, userId)
  }

  setRequest(ch: MutableChannel, requestId: string): void {
    if (ch.requestId === requestId) return
    if (ch.requestId !== undefined) this.byRequest.delete(ch.requestId, ch)
    ch.requestId = requestId
    this.byRequest.add(requestId, ch)
  }

  /** Records that two legs were connected (both directions). */
  link(a: MutableChannel, b: MutableChannel): void {
    a.peers = withItem(a.peers, b.uuid)
    b.peers = withItem(b.peers, a.uuid)
  }

  /** Forgets a channel (destroyed, or gone while we were not listening). */
  remove(ch: MutableChannel): void {
    if (this.channels.get(ch.uuid) !== ch) return
    this.channels.delete(ch.uuid)
    this.unlive(ch)
    if (ch.domain !== undefined) {
      for (const userId of ch.parties) this.byUser.delete(userKey(ch.domain, userId), ch)
    }
    if (ch.requestId !== undefined) this.byRequest.delete(ch.requestId, ch)
    for (const p of ch.peers) {
      const peer = this.channels.get(p)
      if (peer !== undefined) peer.peers = withoutItem(peer.peers, ch.uuid)
    }
    this.markDestroyed(ch.uuid)
  }

  markDestroyed(uuid: string): void {
    const now = performance.now()
    this.destroyed.delete(uuid) // re-inserted at the end, so that the oldest entries come first
    this.destroyed.set(uuid, now)
    for (const [u, at] of this.destroyed) {
      if (now - at < DESTROYED_MEMORY_MS) break
      this.destroyed.delete(u)
    }
  }

  wasDestroyed(uuid: string): boolean {
    return this.destroyed.has(uuid)
  }

  liveCount(domain: string): number {
    return this.liveByDomain.get(domain) ?? 0
  }

  /** Every channel of the domain, hung-up ones included until they are destroyed, oldest first. */
  *ofDomain(domain: string): Iterable<ChannelRecord> {
    for (const ch of this.channels.values()) if (ch.domain === domain) yield ch
  }

  /** The channels of the domain that the user is a party to. */
  ofUser(domain: string, userId: string): Iterable<ChannelRecord> {
    return this.byUser.get(userKey(domain, userId))
  }

  ofRequest(requestId: string): Iterable<ChannelRecord> {
    return this.byRequest.get(requestId)
  }

  private unlive(ch: MutableChannel): void {
    if (ch.state === 'hangup' || ch.domain === undefined) return
    const n = (this.liveByDomain.get(ch.domain) ?? 0) - 1
    if (n > 0) this.liveByDomain.set(ch.domain, n)
    else this.liveByDomain.delete(ch.domain)
  }
}

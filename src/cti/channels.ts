/**
 * The live channels of FreeSWITCH, built from its channel events and re-read after every
 * (re)connection. Header names are those of the real captures in
 * /work/shared/freeswitch/esl (Unique-ID, Call-Direction, Caller-Caller-ID-Name/Number,
 * Caller-Destination-Number, Other-Leg-Unique-ID, Bridge-A/B-Unique-ID, Hangup-Cause,
 * Event-Date-Timestamp in microseconds, variable_*).
 *
 * Each channel knows its domain (for isolation), the user whose terminal it is, and the set of
 * users that are a party to it: its own user plus the users of the legs it was connected to.
 * That set only grows, so a subscriber never loses sight of a channel before it ends.
 */
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import { decodeEndUser } from '../pbx/commands.js'
import type { FsEvent } from '../pbx/types.js'
import type { Directory, DomainDirectory } from '../directory/directory.js'
import { END_USER_FIELDS, type EndUser } from '../pbx/end-user.js'
import type { ChannelStateName, ChannelView, PeerLocation } from './protocol.js'

export interface Channel {
  readonly uuid: string
  /** Lower-case domain name; undefined until an event names a domain we know. */
  domain: string | undefined
  direction: 'inbound' | 'outbound' | undefined
  callingName: string | undefined
  callingNumber: string | undefined
  calledNumber: string | undefined
  offerAt: number
  answerAt: number | undefined
  hangupAt: number | undefined
  otherUuid: string | undefined
  userId: string | undefined
  groupId: string | undefined
  state: ChannelStateName
  stateAt: number
  operation: string | undefined
  requestId: string | undefined
  role: string | undefined
  destKind: string | undefined
  ownEndUser: EndUser | undefined
  /** end_user relayed from a leg this one was connected to (used when it has none of its own). */
  peerEndUser: EndUser | undefined
  autoAnswer: boolean
  /** Reached through a SIP gateway (`variable_sip_gateway_name`, set by mod_sofia sofia_outgoing_channel). */
  gateway: boolean
  hangupCause: string | undefined
  /** Users party to this channel: its own user and those of the legs it was connected to. */
  readonly parties: Set<string>
  /** Legs this one was connected to (both directions), for relaying end_user and parties. */
  readonly peers: Set<string>
  /** Last serialised view (owned by the publisher: dedup and snapshots without re-serialising). */
  json: string | undefined
}

export interface ChannelChange {
  readonly channel: Channel
  readonly removed: boolean
}

/** One row of `show channels as json` (capture 03: every value a string). */
export type ShowChannelsRow = Readonly<Record<string, unknown>>

const V = (name: string): string => `variable_${name}`

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === '' ? undefined : s)

/** Event-Date-Timestamp and Caller-Channel-*-Time are epoch microseconds; 0 means "not yet". */
function microsToMs(s: string | undefined): number | undefined {
  if (s === undefined || !/^[0-9]{1,20}$/.test(s)) return undefined
  const n = Number(s)
  return n > 0 ? Math.floor(n / 1000) : undefined
}

/** The domain part of `user@domain`, `domain` or `host:port`, lower-cased. */
function domainPart(s: string | undefined): string | undefined {
  if (s === undefined || s === '') return undefined
  const at = s.lastIndexOf('@')
  const host = at >= 0 ? s.slice(at + 1) : s
  const colon = host.indexOf(':')
  return (colon >= 0 ? host.slice(0, colon) : host).toLowerCase()
}

function userPart(s: string | undefined): string | undefined {
  if (s === undefined) return undefined
  const at = s.indexOf('@')
  return at > 0 ? s.slice(0, at) : undefined
}

/**
 * `cod_end_user` as pbx/commands.ts encodes it (percent-encoded JSON); empty fields are
 * dropped and a value that is not one gives undefined, so that a bad variable hides nothing else.
 */
export function endUserOf(raw: string | undefined): EndUser | undefined {
  if (raw === undefined || raw === '' || raw.length > 16384) return undefined
  const decoded = decodeEndUser(raw)
  if (!decoded.ok) return undefined
  const out: Record<string, string> = {}
  for (const field of END_USER_FIELDS) {
    const v = decoded.value[field]
    if (v !== undefined && v !== '') out[field] = v
  }
  return Object.keys(out).length === 0 ? undefined : (out as EndUser)
}

const sameEndUser = (a: EndUser | undefined, b: EndUser | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && END_USER_FIELDS.every((f) => a[f] === b[f]))

export function viewOf(ch: Channel): ChannelView {
  // A gateway leg is external; a leg with a user is that user's terminal; the API's
  // call_external originating leg goes to the PSTN even when no gateway variable is seen.
  const peerLocation: PeerLocation = ch.gateway
    ? 'external'
    : ch.userId !== undefined
      ? 'internal'
      : ch.role === 'originator' && ch.operation === 'call_external'
        ? 'external'
        : 'unknown'
  const tags: string[] = []
  if (ch.autoAnswer) tags.push('auto_answer')
  if (ch.role === 'originator' || ch.role === 'destination') tags.push(ch.role)
  return {
    uuid: ch.uuid,
    direction: ch.direction ?? null,
    peer_location: peerLocation,
    calling_name: ch.callingName ?? null,
    calling_number: ch.callingNumber ?? null,
    called_number: ch.calledNumber ?? null,
    offer_at: ch.offerAt,
    answer_at: ch.answerAt ?? null,
    hangup_at: ch.hangupAt ?? null,
    other_uuid: ch.otherUuid ?? null,
    user_id: ch.userId ?? null,
    group_id: ch.groupId ?? null,
    state: ch.state,
    state_at: ch.stateAt,
    operation: ch.operation ?? null,
    request_id: ch.requestId ?? null,
    end_user: ch.ownEndUser ?? ch.peerEndUser ?? null,
    tags,
    hangup_cause: ch.hangupCause ?? null,
  }
}

/** Whether a subscriber of `domain` (one user, or every channel when `userId` is undefined) may see `ch`. */
export const isVisible = (ch: Channel, domain: string, userId: string | undefined): boolean =>
  ch.domain === domain && (userId === undefined || ch.parties.has(userId))

/** States after which an answer or ring event must not move the channel back. */
const LATER_THAN_ANSWER: ReadonlySet<ChannelStateName> = new Set(['bridged', 'park', 'ivr', 'hangup'])

export class ChannelStore {
  private readonly channels = new Map<string, Channel>()
  private readonly byDomain = new Map<string, Set<Channel>>()
  /** uuids seen in events since the pending resync started (their events are fresher than its rows). */
  private touched: Set<string> | undefined
  private resyncToken = 0

  constructor(
    private readonly directory: () => Directory,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.channels.size
  }

  get(uuid: string): Channel | undefined {
    return this.channels.get(uuid)
  }

  /** Channels of one domain (snapshots); empty when there are none. */
  ofDomain(domain: string): Iterable<Channel> {
    return this.byDomain.get(domain) ?? []
  }

  /** Applies one FreeSWITCH event; returns the channels whose state may have changed. */
  apply(ev: FsEvent): ChannelChange[] {
    const name = ev['Event-Name']
    const uuid = ev['Unique-ID']
    if (name === undefined || !name.startsWith('CHANNEL_') || uuid === undefined || uuid === '') return []
    this.touched?.add(uuid)
    let ch = this.channels.get(uuid)
    const isNew = ch === undefined
    if (ch === undefined) {
      // A channel first seen at its end was never shown to anyone: nothing to add or remove.
      if (name === 'CHANNEL_DESTROY' || name === 'CHANNEL_HANGUP_COMPLETE') return []
      ch = this.create(uuid, this.eventTime(ev), ev['Caller-Channel-Created-Time'])
    }
    const changed = new Set<Channel>([ch])
    this.refresh(ch, ev, changed, isNew)
    const at = this.eventTime(ev)

    switch (name) {
      case 'CHANNEL_CREATE':
      case 'CHANNEL_PROGRESS':
      case 'CHANNEL_PROGRESS_MEDIA':
      case 'CHANNEL_ANSWER': {
        // While a leg is being originated by another (a dialplan bridge, capture 19:
        // CHANNEL_CREATE of B carries Other-Leg-Unique-ID=A), the other leg is its originator.
        const other = nonEmpty(ev['Other-Leg-Unique-ID'])
        if (other !== undefined && ch.otherUuid === undefined && ch.state !== 'hangup') {
          ch.otherUuid = other
          this.link(ch, other, true, changed)
        }
        if (name === 'CHANNEL_ANSWER') {
          ch.answerAt ??= microsToMs(ev['Caller-Channel-Answered-Time']) ?? at
          if (!LATER_THAN_ANSWER.has(ch.state)) this.setState(ch, this.answeredState(ch), at)
        } else if (name !== 'CHANNEL_CREATE' && ch.state === 'calling') {
          this.setState(ch, 'ringing', at)
        }
        break
      }
      case 'CHANNEL_BRIDGE': {
        // One CHANNEL_BRIDGE per bridge, on the A leg only (capture 18): update both legs.
        const a = nonEmpty(ev['Bridge-A-Unique-ID']) ?? uuid
        const b = nonEmpty(ev['Bridge-B-Unique-ID']) ?? nonEmpty(ev['Other-Leg-Unique-ID'])
        if (b === undefined) break
        for (const [self, peer] of [
          [a, b],
          [b, a],
        ] as const) {
          const leg = this.channels.get(self)
          if (leg === undefined || leg.state === 'hangup') continue
          leg.otherUuid = peer
          this.setState(leg, 'bridged', at)
          changed.add(leg)
          this.link(leg, peer, false, changed)
        }
        break
      }
      case 'CHANNEL_UNBRIDGE': {
        const a = nonEmpty(ev['Bridge-A-Unique-ID']) ?? uuid
        const b = nonEmpty(ev['Bridge-B-Unique-ID']) ?? nonEmpty(ev['Other-Leg-Unique-ID'])
        for (const id of [a, b]) {
          const leg = id === undefined ? undefined : this.channels.get(id)
          if (leg === undefined) continue
          leg.otherUuid = undefined
          if (leg.state === 'bridged') this.setState(leg, 'answered', at)
          changed.add(leg)
        }
        break
      }
      case 'CHANNEL_PARK':
        if (ch.state !== 'hangup') this.setState(ch, 'park', at)
        break
      case 'CHANNEL_HANGUP':
      case 'CHANNEL_HANGUP_COMPLETE':
        ch.hangupCause ??= nonEmpty(ev['Hangup-Cause']) ?? nonEmpty(ev[V('hangup_cause')])
        if (ch.state !== 'hangup') {
          ch.hangupAt = at
          this.setState(ch, 'hangup', at)
        }
        break
      case 'CHANNEL_DESTROY':
        ch.hangupCause ??= nonEmpty(ev['Hangup-Cause']) ?? nonEmpty(ev[V('hangup_cause')])
        if (ch.state !== 'hangup') {
          ch.hangupAt = at
          this.setState(ch, 'hangup', at)
        }
        this.delete(ch)
        return [...changed].map((c) => ({ channel: c, removed: c === ch }))
      default:
        break
    }
    return [...changed].map((c) => ({ channel: c, removed: false }))
  }

  /**
   * Starts a resynchronisation (after a (re)connection). Events that arrive before its rows
   * are applied win over those rows: they are newer than the snapshot FreeSWITCH took.
   */
  beginResync(): number {
    this.touched = new Set()
    return ++this.resyncToken
  }

  /**
   * Applies the rows of `show channels as json` (capture 03 format). Channels missing from
   * them ended while we were not listening: they are removed. Returns undefined when a newer
   * resync started meanwhile (its rows will be the ones applied).
   */
  finishResync(token: number, rows: readonly ShowChannelsRow[]): ChannelChange[] | undefined {
    if (token !== this.resyncToken || this.touched === undefined) return undefined
    const touched = this.touched
    this.touched = undefined
    const at = this.now()
    const changes: ChannelChange[] = []
    const live = new Set<string>()
    for (const row of rows) {
      const uuid = typeof row.uuid === 'string' ? row.uuid : undefined
      if (uuid === undefined || uuid === '') continue
      live.add(uuid)
      if (touched.has(uuid)) continue
      const str = (k: string): string | undefined => (typeof row[k] === 'string' ? nonEmpty(row[k]) : undefined)
      const callstate = str('callstate')
      const application = str('application')
      const rowState: ChannelStateName =
        callstate === 'HANGUP'
          ? 'hangup'
          : callstate === 'ACTIVE' || callstate === 'HELD'
            ? application === 'park'
              ? 'park'
              : 'answered'
            : callstate === 'RINGING' || callstate === 'EARLY'
              ? 'ringing'
              : 'calling'
      let ch = this.channels.get(uuid)
      if (ch === undefined) {
        const created = str('created_epoch')
        ch = this.create(uuid, created !== undefined && /^[0-9]+$/.test(created) ? Number(created) * 1000 : at, undefined)
        const direction = str('direction')
        ch.direction = direction === 'inbound' || direction === 'outbound' ? direction : undefined
        ch.callingName = str('cid_name')
        ch.callingNumber = str('cid_num')
        ch.calledNumber = str('dest')
        const presence = str('presence_id')
        const directory = this.directory()
        const domain = this.knownDomain(directory, [presence, str('context')])
        if (domain !== undefined) {
          this.setDomain(ch, domain.name.toLowerCase())
          const sipUser = userPart(presence)
          const user = sipUser === undefined ? undefined : domain.userBySipName(sipUser)
          if (user !== undefined) this.setUser(ch, user.id)
        }
        ch.state = rowState
        ch.stateAt = at
        changes.push({ channel: ch, removed: false })
      } else if ((ch.state === 'calling' || ch.state === 'ringing') && rowState !== ch.state && rowState !== 'calling') {
        // The one transition worth repairing from a row: answered (or rang) while we were away.
        // Later states (bridged, ivr) cannot be told apart in these rows, so ours stay.
        if (rowState !== 'ringing' && rowState !== 'hangup') ch.answerAt ??= at
        this.setState(ch, rowState, at)
        changes.push({ channel: ch, removed: false })
      }
    }
    for (const ch of [...this.channels.values()]) {
      if (live.has(ch.uuid) || touched.has(ch.uuid)) continue
      if (ch.state !== 'hangup') {
        ch.hangupAt = at
        this.setState(ch, 'hangup', at)
      }
      this.delete(ch)
      changes.push({ channel: ch, removed: true })
    }
    return changes
  }

  /** Hung-up channels whose CHANNEL_DESTROY never came (an event lost with a connection). */
  sweep(olderThanMs: number): ChannelChange[] {
    const limit = this.now() - olderThanMs
    const changes: ChannelChange[] = []
    for (const ch of [...this.channels.values()]) {
      if (ch.state === 'hangup' && ch.stateAt <= limit) {
        this.delete(ch)
        changes.push({ channel: ch, removed: true })
      }
    }
    return changes
  }

  private create(uuid: string, at: number, createdMicros: string | undefined): Channel {
    const ch: Channel = {
      uuid,
      domain: undefined,
      direction: undefined,
      callingName: undefined,
      callingNumber: undefined,
      calledNumber: undefined,
      offerAt: microsToMs(createdMicros) ?? at,
      answerAt: undefined,
      hangupAt: undefined,
      otherUuid: undefined,
      userId: undefined,
      groupId: undefined,
      state: 'calling',
      stateAt: at,
      operation: undefined,
      requestId: undefined,
      role: undefined,
      destKind: undefined,
      ownEndUser: undefined,
      peerEndUser: undefined,
      autoAnswer: false,
      gateway: false,
      hangupCause: undefined,
      parties: new Set(),
      peers: new Set(),
      json: undefined,
    }
    this.channels.set(uuid, ch)
    return ch
  }

  private delete(ch: Channel): void {
    this.channels.delete(ch.uuid)
    if (ch.domain !== undefined) this.byDomain.get(ch.domain)?.delete(ch)
    if (ch.domain !== undefined && this.byDomain.get(ch.domain)?.size === 0) this.byDomain.delete(ch.domain)
    for (const p of ch.peers) this.channels.get(p)?.peers.delete(ch.uuid)
  }

  private eventTime(ev: FsEvent): number {
    return microsToMs(ev['Event-Date-Timestamp']) ?? this.now()
  }

  private setState(ch: Channel, state: ChannelStateName, at: number): void {
    if (ch.state === state) return
    ch.state = state
    ch.stateAt = at
  }

  /** An answered leg whose destination is an IVR document runs it once answered. */
  private answeredState(ch: Channel): ChannelStateName {
    return ch.role === 'originator' && (ch.destKind === 'ivr' || ch.destKind === 'extension') ? 'ivr' : 'answered'
  }

  private setDomain(ch: Channel, domain: string): void {
    ch.domain = domain
    let set = this.byDomain.get(domain)
    if (set === undefined) this.byDomain.set(domain, (set = new Set()))
    set.add(ch)
  }

  private setUser(ch: Channel, userId: string): void {
    ch.userId = userId
    ch.parties.add(userId)
  }

  private knownDomain(directory: Directory, candidates: ReadonlyArray<string | undefined>): DomainDirectory | undefined {
    for (const c of candidates) {
      const d = domainPart(c)
      const domain = d === undefined ? undefined : directory.domain(d)
      if (domain !== undefined) return domain
    }
    return undefined
  }

  /**
   * Reads what identifies the channel from an event's headers. The SIP identity of a leg is
   * read from its first event only: after a dialplan bridge FreeSWITCH rewrites the A leg's
   * variable_dialed_user to the B leg's user (capture 19, CHANNEL_BRIDGE on A: dialed_user=1002).
   */
  private refresh(ch: Channel, ev: FsEvent, changed: Set<Channel>, first: boolean): void {
    const get = (k: string): string | undefined => nonEmpty(ev[k])
    const direction = get('Call-Direction')
    if (direction === 'inbound' || direction === 'outbound') ch.direction = direction
    ch.callingName ??= get('Caller-Caller-ID-Name')
    ch.callingNumber ??= get('Caller-Caller-ID-Number')
    ch.calledNumber ??= get('Caller-Destination-Number')
    if (get(V('sip_gateway_name')) !== undefined) ch.gateway = true
    ch.requestId = get(V(CHANNEL_VARS.requestId)) ?? ch.requestId
    ch.operation = get(V(CHANNEL_VARS.operation)) ?? ch.operation
    ch.role = get(V(CHANNEL_VARS.role)) ?? ch.role
    ch.groupId = get(V(CHANNEL_VARS.groupId)) ?? ch.groupId
    ch.destKind = get(V(CHANNEL_VARS.destKind)) ?? ch.destKind
    if (get(V(CHANNEL_VARS.autoAnswer)) === 'true') ch.autoAnswer = true

    const directory = this.directory()
    if (ch.domain === undefined) {
      const stamped = get(V(CHANNEL_VARS.domain))
      if (stamped !== undefined) this.setDomain(ch, stamped.toLowerCase())
      else {
        const known = this.knownDomain(directory, [
          get(V('domain_name')),
          get(V('dialed_domain')),
          get(V('sip_to_host')),
          get(V('presence_id')),
          get('Channel-Presence-ID'),
        ])
        if (known !== undefined) this.setDomain(ch, known.name.toLowerCase())
      }
    }

    let identityChanged = false
    const stampedUser = get(V(CHANNEL_VARS.userId))
    if (stampedUser !== undefined && stampedUser !== ch.userId) {
      this.setUser(ch, stampedUser)
      identityChanged = true
    } else if (ch.userId === undefined && first && ch.domain !== undefined) {
      const domain = directory.domain(ch.domain)
      const sipName =
        ch.direction === 'inbound'
          ? ch.gateway
            ? undefined
            : (get(V('user_name')) ?? get('Caller-Caller-ID-Number'))
          : (get(V('dialed_user')) ?? userPart(get(V('presence_id'))))
      const user = sipName === undefined ? undefined : domain?.userBySipName(sipName)
      if (user !== undefined) {
        this.setUser(ch, user.id)
        identityChanged = true
      }
    }

    const rawEndUser = get(V(CHANNEL_VARS.endUser))
    if (rawEndUser !== undefined) {
      const endUser = endUserOf(rawEndUser)
      if (endUser !== undefined && !sameEndUser(endUser, ch.ownEndUser)) {
        ch.ownEndUser = endUser
        identityChanged = true
      }
    }
    if (identityChanged) {
      for (const p of ch.peers) {
        const peer = this.channels.get(p)
        if (peer !== undefined && this.relay(ch, peer, false)) changed.add(peer)
      }
    }
  }

  /**
   * Connects two legs for relaying: each one's users become parties of the other, and a leg
   * without an end_user of its own shows its peer's. `origination` (the other leg originated
   * this one) also hands down the request and operation, since the leg exists because of it.
   */
  private link(ch: Channel, otherUuid: string, origination: boolean, changed: Set<Channel>): void {
    const other = this.channels.get(otherUuid)
    if (other === undefined) return
    ch.peers.add(other.uuid)
    other.peers.add(ch.uuid)
    this.relay(other, ch, origination)
    if (this.relay(ch, other, false)) changed.add(other)
  }

  /** Copies what `from` relays onto `to`; true when `to` changed. */
  private relay(from: Channel, to: Channel, origination: boolean): boolean {
    let changed = false
    for (const u of from.userId === undefined ? [] : [from.userId]) {
      if (!to.parties.has(u)) {
        to.parties.add(u)
        changed = true
      }
    }
    if (from.ownEndUser !== undefined && to.ownEndUser === undefined && !sameEndUser(to.peerEndUser, from.ownEndUser)) {
      to.peerEndUser = from.ownEndUser
      changed = true
    }
    if (origination && to.requestId === undefined && from.requestId !== undefined) {
      to.requestId = from.requestId
      to.operation ??= from.operation
      changed = true
    }
    return changed
  }
}

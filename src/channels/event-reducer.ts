/**
 * One FreeSWITCH channel event → the changes it makes to the table of live channels.
 *
 * - A channel is born with its first event (CHANNEL_CREATE, or any later one when the socket
 *   missed the creation: it is then reported `created` first) and forgotten at CHANNEL_DESTROY.
 *   It counts as live until CHANNEL_HANGUP: FreeSWITCH keeps a hung-up channel until
 *   CHANNEL_DESTROY, but it will not ring or talk again, and counting it would make a hunt
 *   briefly count its previous member's legs with the next member's.
 * - HANGUP and HANGUP_COMPLETE both end it; the end is reported once.
 * - Legs connected to each other (a leg originating another,
 *   test/fixtures/freeswitch/esl/19-originate-xml-default.txt: CHANNEL_CREATE of B carries
 *   Other-Leg-Unique-ID=A; a bridge) relay their users, end_user and request: each user becomes a
 *   party of the other leg, so that a user's CTI panel sees the far end of their call. A leg
 *   changed that way is reported `relayed`.
 * - One CHANNEL_BRIDGE/UNBRIDGE per bridge, on the A leg only
 *   (test/fixtures/freeswitch/esl/18-uuid-bridge.txt): both legs change.
 *
 * The changes are returned once the whole event is applied, the event's own channel first, so
 * that whoever reads them sees every leg in its final state.
 */
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import { varHeader } from '../pbx/event-headers.js'
import type { FsEvent } from '../pbx/types.js'
import { endUserOf, sameEndUser } from './end-user.js'
import { COD_VAR_HEADERS, domainOfEvent, microsToMs, nonEmpty, userPart } from './headers.js'
import { Interner } from './intern.js'
import { newChannel, type MutableChannel } from './record.js'
import type { ChannelTable } from './table.js'
import type { ChangeKind, ChannelChange, ChannelDirectory, ChannelState } from './types.js'

export interface ReducerContext {
  /** Read only when an event must be placed or identified (most events are about a placed channel). */
  readonly directory: (() => ChannelDirectory) | undefined
  /** Epoch ms, for events without Event-Date-Timestamp. */
  readonly now: () => number
}

const KIND_OF_EVENT: Readonly<Record<string, ChangeKind>> = {
  CHANNEL_CREATE: 'created',
  CHANNEL_PROGRESS: 'progress',
  CHANNEL_PROGRESS_MEDIA: 'progress',
  CHANNEL_ANSWER: 'answered',
  CHANNEL_BRIDGE: 'bridged',
  CHANNEL_UNBRIDGE: 'unbridged',
  CHANNEL_PARK: 'parked',
  CHANNEL_EXECUTE_COMPLETE: 'execute_complete',
  DTMF: 'dtmf',
  CHANNEL_HANGUP: 'hangup',
  CHANNEL_HANGUP_COMPLETE: 'hangup',
  CHANNEL_DESTROY: 'destroyed',
}

/** States after which an answer or ring event must not move the channel back. */
const LATER_THAN_ANSWER: ReadonlySet<ChannelState> = new Set(['bridged', 'park', 'ivr', 'hangup'])

const H = {
  requestId: varHeader(CHANNEL_VARS.requestId),
  operation: varHeader(CHANNEL_VARS.operation),
  role: varHeader(CHANNEL_VARS.role),
  userId: varHeader(CHANNEL_VARS.userId),
  endUser: varHeader(CHANNEL_VARS.endUser),
  sipGateway: varHeader('sip_gateway_name'),
  userName: varHeader('user_name'),
  dialedUser: varHeader('dialed_user'),
  presenceId: varHeader('presence_id'),
  hangupCause: varHeader('hangup_cause'),
} as const

/** Values that repeat across calls, shared (src/channels/intern.ts). */
const shared = new Interner()

/** The `cod_*` variables whose values are unique per call: kept as they come. */
const UNIQUE_VARS: ReadonlySet<string> = new Set([CHANNEL_VARS.requestId, CHANNEL_VARS.endUser, CHANNEL_VARS.destValue])

/** Channels other than the event's own that it changed, in the order they changed. */
type Others = Map<MutableChannel, ChangeKind>

/**
 * Reused by every event (applyEvent runs to its end before the next one, and empties it before
 * returning): most events change only their own channel, and a map per event was measurable
 * garbage at tens of thousands of live calls.
 */
const scratch: Others = new Map()

const mark = (others: Others, ch: MutableChannel, kind: ChangeKind): void => {
  if (!others.has(ch)) others.set(ch, kind)
}

export function applyEvent(table: ChannelTable, ev: FsEvent, ctx: ReducerContext): ChannelChange[] {
  const name = ev['Event-Name']
  if (name === undefined) return []
  const kind = KIND_OF_EVENT[name]
  const uuid = ev['Unique-ID']
  if (kind === undefined || uuid === undefined || uuid === '') return []
  const at = microsToMs(ev['Event-Date-Timestamp']) ?? ctx.now()
  let ch = table.get(uuid)
  const isNew = ch === undefined
  if (ch === undefined) {
    if (kind === 'destroyed') {
      // The end of a channel never seen: nothing to count or show, but nothing may revive it.
      table.markDestroyed(uuid)
      return []
    }
    // A late event of a channel already destroyed must not bring it back.
    if (table.wasDestroyed(uuid)) return []
    ch = newChannel(uuid, at, microsToMs(ev['Caller-Channel-Created-Time']) ?? at, 0)
    if (ev['Answer-State'] === 'answered') ch.answered = true
    table.insert(ch)
  }
  ch.seenSeq = table.nextSeq()
  const others = scratch
  others.clear()
  refresh(table, ch, ev, ctx, isNew, others)
  // An answer whose CHANNEL_ANSWER never came (sent while the link was down): every later event of
  // the channel says it in Answer-State (switch_channel_event_set_basic_data writes "answered"
  // once the channel is). Without this, a leg answered during a drop and bridged after the
  // reconnection's re-read began stayed ringing for the engine until its watchdog (the re-read
  // keeps what newer events said: reconcile.ts). Heard as an answer, before the event's own change.
  const lateAnswer = !isNew && !ch.answered && name !== 'CHANNEL_ANSWER' && ch.state !== 'hangup' && ev['Answer-State'] === 'answered'
  if (lateAnswer) markAnswered(table, ch, ev, at)

  let reportOwn = true
  switch (name) {
    case 'CHANNEL_CREATE':
    case 'CHANNEL_PROGRESS':
    case 'CHANNEL_PROGRESS_MEDIA':
    case 'CHANNEL_ANSWER': {
      // While a leg is being originated by another, the other leg is its originator.
      const other = nonEmpty(ev['Other-Leg-Unique-ID'])
      if (other !== undefined && ch.otherUuid === undefined && ch.state !== 'hangup') {
        ch.otherUuid = other
        link(table, ch, other, true, others)
      }
      if (name === 'CHANNEL_ANSWER') markAnswered(table, ch, ev, at)
      else if (name !== 'CHANNEL_CREATE' && ch.state === 'calling') table.setState(ch, 'ringing', at)
      break
    }
    case 'CHANNEL_BRIDGE': {
      const a = nonEmpty(ev['Bridge-A-Unique-ID']) ?? uuid
      const b = nonEmpty(ev['Bridge-B-Unique-ID']) ?? nonEmpty(ev['Other-Leg-Unique-ID'])
      if (b === undefined) break
      for (const [self, peer] of [
        [a, b],
        [b, a],
      ] as const) {
        const leg = table.get(self)
        if (leg === undefined || leg.state === 'hangup') continue
        leg.otherUuid = peer
        table.setState(leg, 'bridged', at)
        mark(others, leg, 'bridged')
        link(table, leg, peer, false, others)
      }
      break
    }
    case 'CHANNEL_UNBRIDGE': {
      const a = nonEmpty(ev['Bridge-A-Unique-ID']) ?? uuid
      const b = nonEmpty(ev['Bridge-B-Unique-ID']) ?? nonEmpty(ev['Other-Leg-Unique-ID'])
      for (const id of [a, b]) {
        const leg = id === undefined ? undefined : table.get(id)
        if (leg === undefined) continue
        leg.otherUuid = undefined
        if (leg.state === 'bridged') table.setState(leg, 'answered', at)
        mark(others, leg, 'unbridged')
      }
      break
    }
    case 'CHANNEL_PARK':
      if (ch.state !== 'hangup') table.setState(ch, 'park', at)
      break
    case 'CHANNEL_HANGUP':
    case 'CHANNEL_HANGUP_COMPLETE': {
      answeredAsTheSwitchSays(ch, ev)
      const causeKnown = ch.hangupCause !== undefined
      ch.hangupCause ??= shared.of(nonEmpty(ev['Hangup-Cause']) ?? nonEmpty(ev[H.hangupCause]))
      if (ch.state !== 'hangup') {
        ch.hangupAt = at
        table.setState(ch, 'hangup', at)
      } else if (causeKnown || ch.hangupCause === undefined) {
        // The second of HANGUP / HANGUP_COMPLETE, and it taught nothing new.
        reportOwn = false
      }
      break
    }
    case 'CHANNEL_DESTROY':
      answeredAsTheSwitchSays(ch, ev)
      ch.hangupCause ??= shared.of(nonEmpty(ev['Hangup-Cause']) ?? nonEmpty(ev[H.hangupCause]))
      if (ch.state !== 'hangup') {
        ch.hangupAt = at
        table.setState(ch, 'hangup', at)
      }
      table.remove(ch)
      break
    default:
      break
  }

  const changes: ChannelChange[] = []
  if (isNew && kind !== 'created') changes.push({ kind: 'created', channel: ch, event: ev })
  if (lateAnswer) changes.push({ kind: 'answered', channel: ch, event: ev })
  if (reportOwn) changes.push({ kind, channel: ch, event: ev })
  for (const [other, otherKind] of others) if (other !== ch) changes.push({ kind: otherKind, channel: other, event: ev })
  others.clear()
  return changes
}

/**
 * A channel re-read after a restart (reconcile.ts) was seen answered but not when; its hangup
 * events carry FreeSWITCH's own answer time (`Caller-Channel-Answered-Time`, 0 when it never
 * answered), which then counts: a status event's billsec is FreeSWITCH's.
 */
function answeredAsTheSwitchSays(ch: MutableChannel, ev: FsEvent): void {
  if (ch.answerAt !== undefined) return
  const answeredAt = microsToMs(ev['Caller-Channel-Answered-Time'])
  if (answeredAt !== undefined) {
    ch.answered = true
    ch.answerAt = answeredAt
  }
}

/** The channel answered: at its answer time if the event gives it, and in its answered state unless past it already. */
function markAnswered(table: ChannelTable, ch: MutableChannel, ev: FsEvent, at: number): void {
  ch.answered = true
  ch.answerAt ??= microsToMs(ev['Caller-Channel-Answered-Time']) ?? at
  if (!LATER_THAN_ANSWER.has(ch.state)) table.setState(ch, answeredState(ch), at)
}

/** An answered leg whose destination is an IVR document (or an extension bound to one) runs it. */
function answeredState(ch: MutableChannel): ChannelState {
  const destKind = ch.vars[CHANNEL_VARS.destKind]
  return ch.role === 'originator' && (destKind === 'ivr' || destKind === 'extension') ? 'ivr' : 'answered'
}

/**
 * Reads what identifies the channel from an event's headers. The SIP identity of a leg is
 * read from its first event only: after a dialplan bridge FreeSWITCH rewrites the A leg's
 * variable_dialed_user to the B leg's user
 * (test/fixtures/freeswitch/esl/19-originate-xml-default.txt, CHANNEL_BRIDGE on A:
 * dialed_user=1002).
 */
function refresh(
  table: ChannelTable,
  ch: MutableChannel,
  ev: FsEvent,
  ctx: ReducerContext,
  first: boolean,
  others: Others,
): void {
  const previousEndUser = ch.vars[CHANNEL_VARS.endUser]
  for (const [varName, header] of COD_VAR_HEADERS) {
    const v = ev[header]
    if (v !== undefined && ch.vars[varName] !== v) ch.vars[varName] = UNIQUE_VARS.has(varName) ? v : shared.of(v)
  }
  const direction = ev['Call-Direction']
  if (direction === 'inbound') ch.direction = 'inbound'
  else if (direction === 'outbound') ch.direction = 'outbound'
  ch.callingName ??= shared.of(nonEmpty(ev['Caller-Caller-ID-Name']))
  ch.callingNumber ??= shared.of(nonEmpty(ev['Caller-Caller-ID-Number']))
  ch.calledNumber ??= shared.of(nonEmpty(ev['Caller-Destination-Number']))
  if (!ch.gateway && nonEmpty(ev[H.sipGateway]) !== undefined) ch.gateway = true
  const requestId = nonEmpty(ev[H.requestId])
  if (requestId !== undefined) table.setRequest(ch, requestId)
  ch.operation = shared.of(nonEmpty(ev[H.operation])) ?? ch.operation
  ch.role = shared.of(nonEmpty(ev[H.role])) ?? ch.role

  if (ch.domain === undefined) {
    const other = nonEmpty(ev['Other-Leg-Unique-ID'])
    const domain = domainOfEvent(ev, ctx.directory?.(), other === undefined ? undefined : table.get(other)?.domain)
    if (domain !== undefined) table.setDomain(ch, domain)
  }

  let identityChanged = false
  const stampedUser = nonEmpty(ev[H.userId])
  if (stampedUser !== undefined && stampedUser !== ch.userId) {
    table.setUser(ch, stampedUser)
    identityChanged = true
  } else if (ch.userId === undefined && first && ch.domain !== undefined && ctx.directory !== undefined) {
    const sipName =
      ch.direction === 'inbound'
        ? ch.gateway
          ? undefined
          : (nonEmpty(ev[H.userName]) ?? nonEmpty(ev['Caller-Caller-ID-Number']))
        : (nonEmpty(ev[H.dialedUser]) ?? userPart(nonEmpty(ev[H.presenceId])))
    const user = sipName === undefined ? undefined : ctx.directory().domain(ch.domain)?.userBySipName(sipName)
    if (user !== undefined) {
      table.setUser(ch, user.id)
      identityChanged = true
    }
  }

  const rawEndUser = nonEmpty(ev[H.endUser])
  if (rawEndUser !== undefined && rawEndUser !== previousEndUser) {
    const endUser = endUserOf(rawEndUser)
    if (endUser !== undefined && !sameEndUser(endUser, ch.endUser)) {
      ch.endUser = endUser
      identityChanged = true
    }
  }
  if (identityChanged) {
    for (const p of ch.peers) {
      const peer = table.get(p)
      if (peer !== undefined && relay(table, ch, peer, false)) mark(others, peer, 'relayed')
    }
  }
}

/**
 * Connects two legs for relaying. `origination` (the other leg originated this one) also hands
 * down the request and operation, since the leg exists because of it.
 */
function link(table: ChannelTable, ch: MutableChannel, otherUuid: string, origination: boolean, others: Others): void {
  const other = table.get(otherUuid)
  if (other === undefined) return
  table.link(ch, other)
  relay(table, other, ch, origination)
  if (relay(table, ch, other, false)) mark(others, other, 'relayed')
}

/** Copies what `from` relays onto `to`; true when `to` changed. */
function relay(table: ChannelTable, from: MutableChannel, to: MutableChannel, origination: boolean): boolean {
  let changed = false
  if (from.userId !== undefined && table.addParty(to, from.userId)) changed = true
  if (from.endUser !== undefined && to.endUser === undefined && !sameEndUser(to.peerEndUser, from.endUser)) {
    to.peerEndUser = from.endUser
    changed = true
  }
  if (origination && to.requestId === undefined && from.requestId !== undefined) {
    table.setRequest(to, from.requestId)
    to.operation ??= from.operation
    changed = true
  }
  return changed
}

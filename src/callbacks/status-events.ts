/**
 * A call's status events (issue 29 item 1; docs/events.md): for a request with a
 * status_callback_url, one notice per event per leg, as the daemon's channel model sees the
 * request's legs (its originating legs and the destination legs its dialplan creates):
 *
 * - `initiated`: the leg exists (CHANNEL_CREATE);
 * - `ringing`: FreeSWITCH reports progress (CHANNEL_PROGRESS / PROGRESS_MEDIA), once;
 * - `answered`: the leg answered (also a terminal that then lost the race);
 * - `bridged`: the two parties are connected, once per request, on the originating leg, with the
 *   destination leg as `peer_uuid`;
 * - `completed`: the leg is gone (CHANNEL_DESTROY, which says who hung up): `duration_s` (offer to hangup) and `billsec` (answer to hangup)
 *   counted as FreeSWITCH counts its own duration and billsec (whole seconds, rounded down, from
 *   its event times), `hangup_cause`, `hangup_by`, and the request's `answered_uuid`.
 *
 * `sequence` counts a request's events from 1 without gaps, and the notices of one request are
 * delivered one at a time in that order (the dispatcher's order key). Signed with the domain's
 * callback_secret, durable and retried as every notice. The result callback is unchanged.
 *
 * What is known of a request lives here from its acceptance until its last leg completed, and in
 * the journal (journal/types.ts StatusFollowing): its subscription from the `accepted` record and
 * each event handed over from its notice record. A daemon restarted in the middle of a call takes
 * the request up from there (`resume`): once the channel model has re-read FreeSWITCH's channels,
 * each leg's events go on from where they stopped (what happened while the daemon was away is
 * told then, in a call's order), the sequence goes on without a gap or a repeat, and a leg that
 * ended while nobody listened gets its `completed` with `ended_unobserved: true` and null figures
 * (FreeSWITCH's CDR has them). When every leg has completed, `followed` lets the journal forget it.
 */
import type { ChannelChange, ChannelModel, ChannelRecord } from '../channels/index.js'
import type { NoticeFields, StatusFollowing } from '../journal/types.js'
import type { StatusEventName } from '../origination/plan.js'
import type { RequestAccepted, RequestOutcome } from '../origination/requests.js'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import type { Logger } from '../util/logger.js'

export interface StatusEventDeps {
  readonly onAccepted: (listener: (a: RequestAccepted) => void) => () => void
  readonly onOutcome: (listener: (o: RequestOutcome) => void) => () => void
  readonly channels: Pick<ChannelModel, 'onChange' | 'ofRequest' | 'get' | 'onResynced' | 'resync'>
  readonly notify: (
    domain: string,
    url: string,
    body: string,
    meta: { readonly requestId: string; readonly kind: NoticeFields['kind']; readonly orderKey?: string; readonly status?: NoticeFields['status'] },
  ) => void
  readonly logger: Logger
  /** What an earlier run left (the journal's replay), and whether each request's result was known then. */
  readonly resume?: { readonly following: readonly StatusFollowing[]; readonly settled: (requestId: string) => boolean }
  /** Every leg of the request has completed: the journal may forget its progress. */
  readonly followed?: (requestId: string) => void
  /** Wall clock (epoch ms) for the timestamp of a `completed` nobody observed. Default Date.now. */
  readonly now?: () => number
}

type LegRole = 'origin' | 'destination'

/** Who ended a leg's call, as far as FreeSWITCH tells (docs/events.md "hangup_by"). */
export type HangupBy = 'origin' | 'destination' | 'api' | 'system'

/** The events a leg tells itself (`bridged` is the request's, told once). */
type LegEvent = Exclude<StatusEventName, 'bridged'>

/** What one leg has told so far: each event at most once. */
type LegSeen = { readonly role: LegRole } & Record<LegEvent, boolean>

const LEG_EVENTS: ReadonlySet<string> = new Set<LegEvent>(['initiated', 'ringing', 'answered', 'completed'])
const STATUS_EVENTS: ReadonlySet<string> = new Set<StatusEventName>(['initiated', 'ringing', 'answered', 'bridged', 'completed'])

interface Followed {
  readonly requestId: string
  readonly domain: string
  readonly url: string
  readonly wanted: ReadonlySet<StatusEventName>
  /** The originating legs the reply listed. */
  readonly origin: ReadonlySet<string>
  readonly legs: Map<string, LegSeen>
  /** The last sequence number sent (only events the request asked for are numbered: no gaps). */
  sequence: number
  bridged: boolean
  /** The answered originating leg, once known (the result, or its answer event). */
  answeredUuid: string | undefined
  /** The request's result is known. */
  settled: boolean
  /** Its legs the daemon's call control hung up (their peers' hangup_by is `api` too). */
  readonly endedByApi: Set<string>
}

/** Causes no party chose: the switch or the daemon's own rules ended the leg. */
const SYSTEM_CAUSES = new Set(['NO_ANSWER', 'ALLOTTED_TIMEOUT', 'LOSE_RACE', 'ORIGINATOR_CANCEL', 'NORMAL_CIRCUIT_CONGESTION', 'RECOVERY_ON_TIMER_EXPIRE', 'MEDIA_TIMEOUT'])

/**
 * Who ended the leg: its own party when its phone or carrier hung up (`recv_bye`, `recv_cancel`,
 * `recv_refuse`: mod_sofia's sip_hangup_disposition), the other party when FreeSWITCH ended it
 * because its peer had (`send_bye` on a normal clearing with a peer), the daemon when its API
 * asked (`api`, told by the caller), and the switch otherwise (timeouts, a lost race).
 * @internal Exported for tests: test/callbacks checks the rules.
 */
export function hangupByOf(role: LegRole, cause: string | undefined, disposition: string | undefined, hadPeer: boolean): HangupBy {
  const other: LegRole = role === 'origin' ? 'destination' : 'origin'
  if (disposition !== undefined && disposition.startsWith('recv_')) return role
  if (cause !== undefined && SYSTEM_CAUSES.has(cause)) return 'system'
  // A destination leg exists only to be connected to the origin: FreeSWITCH's BYE to it follows the
  // origin's end even when the model never saw the pair bridged from this side (the real switch
  // reports the bridge on the A leg).
  if (disposition === 'send_bye' && (hadPeer || role === 'destination')) return other
  if (cause === 'USER_BUSY' || cause === 'CALL_REJECTED' || cause === 'NO_USER_RESPONSE') return role
  return 'system'
}

const wholeSeconds = (ms: number): number => Math.max(0, Math.floor(ms / 1000))

export function followStatusEvents(deps: StatusEventDeps): { close(): void } {
  const followed = new Map<string, Followed>()
  const now = deps.now ?? Date.now

  /** Numbers and hands over one event; `fields` after the common ones. */
  const post = (f: Followed, event: StatusEventName, uuid: string, role: LegRole, fields: Record<string, unknown>): void => {
    if (!f.wanted.has(event)) return
    f.sequence += 1
    const body = JSON.stringify({ event, request_id: f.requestId, uuid, leg: role, sequence: f.sequence, ...fields })
    deps.notify(f.domain, f.url, body, { requestId: f.requestId, kind: 'status', orderKey: `status:${f.requestId}`, status: { uuid, event, sequence: f.sequence } })
  }

  const send = (f: Followed, event: StatusEventName, ch: ChannelRecord, role: LegRole, fields: Record<string, unknown> = {}): void =>
    post(f, event, ch.uuid, role, {
      timestamp: event === 'completed' ? (ch.hangupAt ?? ch.stateAt) : ch.stateAt,
      party: { user_id: ch.userId ?? null, number: ch.gateway ? (ch.calledNumber ?? null) : null },
      end_user: ch.endUser ?? ch.peerEndUser ?? null,
      ...fields,
    })

  /** A leg that ended while the daemon was away: it is gone, and nothing else is known of its end. */
  const sendUnobserved = (f: Followed, uuid: string, seen: LegSeen): void => {
    seen.completed = true
    post(f, 'completed', uuid, seen.role, {
      timestamp: now(),
      party: { user_id: null, number: null },
      end_user: null,
      duration_s: null,
      billsec: null,
      hangup_cause: null,
      hangup_by: null,
      answered_uuid: f.answeredUuid ?? null,
      ended_unobserved: true,
    })
  }

  const roleOf = (f: Followed, ch: ChannelRecord): LegRole | undefined =>
    f.origin.has(ch.uuid) || ch.role === 'originator' ? 'origin' : ch.role === 'destination' ? 'destination' : undefined

  /** Brings the leg's events up to what the channel shows now (each once, in a call's order). */
  const catchUp = (f: Followed, ch: ChannelRecord, change: ChannelChange | undefined): void => {
    const role = roleOf(f, ch)
    if (role === undefined) return
    let seen = f.legs.get(ch.uuid)
    if (seen === undefined) {
      seen = { role, initiated: false, ringing: false, answered: false, completed: false }
      f.legs.set(ch.uuid, seen)
    }
    if (seen.completed) return
    if (!seen.initiated) {
      seen.initiated = true
      send(f, 'initiated', ch, role)
    }
    // An answer always follows a ring (a phone that answers at once still rang).
    const rang = change?.kind === 'progress' || ch.state === 'ringing' || ch.answered
    if (!seen.ringing && rang) {
      seen.ringing = true
      send(f, 'ringing', ch, role)
    }
    if (!seen.answered && ch.answered) {
      seen.answered = true
      if (role === 'origin' && f.answeredUuid === undefined && ch.hangupCause !== 'LOSE_RACE') f.answeredUuid = ch.uuid
      send(f, 'answered', ch, role)
    }
    if (role === 'origin' && !f.bridged && (ch.state === 'bridged' || change?.kind === 'bridged') && ch.otherUuid !== undefined) {
      f.bridged = true
      send(f, 'bridged', ch, role, { peer_uuid: ch.otherUuid })
    }
    // At CHANNEL_DESTROY: FreeSWITCH sets a SIP leg's sip_hangup_disposition after CHANNEL_HANGUP
    // (test/fixtures/freeswitch/esl/00-event-sequences.txt: on HANGUP_COMPLETE and DESTROY only).
    // A leg already gone when the request was accepted completes at once, without it.
    if (ch.state === 'hangup' && (change === undefined || change.kind === 'destroyed')) {
      seen.completed = true
      const cause = ch.hangupCause
      const end = ch.hangupAt ?? ch.stateAt
      send(f, 'completed', ch, role, {
        duration_s: wholeSeconds(end - ch.offerAt),
        billsec: ch.answerAt === undefined ? 0 : wholeSeconds(end - ch.answerAt),
        hangup_cause: cause ?? 'NORMAL_CLEARING',
        hangup_by: hangupBy(f, ch, role, change),
        answered_uuid: f.answeredUuid ?? null,
      })
      endIfOver(f)
    }
  }

  /**
   * `api` for a leg the daemon's call control hung up (cod_hangup_by=api, cti/esl.ts), and for a
   * leg of the same request that FreeSWITCH then sent a BYE (its partner ended by the API, seen
   * completed already or still in the model: the two legs' events come in either order); else as
   * its SIP disposition and cause say (hangupByOf).
   */
  const hangupBy = (f: Followed, ch: ChannelRecord, role: LegRole, change: ChannelChange | undefined): HangupBy => {
    const byApi = (c: Pick<ChannelRecord, 'vars'>): boolean => c.vars[CHANNEL_VARS.hangupBy] === 'api'
    if (byApi(ch) || change?.event?.[`variable_${CHANNEL_VARS.hangupBy}`] === 'api') {
      f.endedByApi.add(ch.uuid)
      return 'api'
    }
    const disposition = change?.event?.['variable_sip_hangup_disposition']
    if (disposition === 'send_bye') {
      if (f.endedByApi.size > 0) return 'api'
      for (const other of deps.channels.ofRequest(f.requestId)) if (other.uuid !== ch.uuid && byApi(other)) return 'api'
    }
    // A leg re-read after a restart has lost its peers; the request still knows it was bridged.
    return hangupByOf(role, ch.hangupCause, disposition, ch.peers.length > 0 || (f.bridged && f.answeredUuid === ch.uuid))
  }

  const endIfOver = (f: Followed): void => {
    if (!f.settled) return
    for (const seen of f.legs.values()) if (!seen.completed) return
    followed.delete(f.requestId)
    deps.followed?.(f.requestId)
  }

  /** A request an earlier run followed, as far as its journal records go. */
  const resumed = (p: StatusFollowing, settled: boolean): Followed => {
    const f: Followed = {
      requestId: p.requestId,
      domain: p.domain,
      url: p.status.url,
      wanted: new Set(p.status.events.filter((e): e is StatusEventName => STATUS_EVENTS.has(e))),
      origin: new Set(p.origin),
      legs: new Map(),
      sequence: p.sequence,
      bridged: false,
      answeredUuid: undefined,
      settled,
      endedByApi: new Set(),
    }
    for (const said of p.sent) {
      const [uuid = '', event = ''] = said.split(' ')
      // `bridged` is told on the answered originating leg.
      if (event === 'bridged') {
        f.bridged = true
        f.answeredUuid = uuid
        continue
      }
      if (!LEG_EVENTS.has(event)) continue
      let seen = f.legs.get(uuid)
      if (seen === undefined) {
        seen = { role: f.origin.has(uuid) ? 'origin' : 'destination', initiated: false, ringing: false, answered: false, completed: false }
        f.legs.set(uuid, seen)
      }
      seen[event as LegEvent] = true
    }
    return f
  }

  /** Once FreeSWITCH's channels are read again: each taken-up request's legs told up to now. */
  const takeUp = (requests: readonly Followed[]): void => {
    for (const f of requests) {
      if (followed.get(f.requestId) !== f) continue
      for (const ch of deps.channels.ofRequest(f.requestId)) catchUp(f, ch, undefined)
      for (const [uuid, seen] of f.legs) if (!seen.completed && deps.channels.get(uuid) === undefined) sendUnobserved(f, uuid, seen)
      endIfOver(f)
    }
  }

  const taken: Followed[] = []
  for (const p of deps.resume?.following ?? []) {
    const f = resumed(p, deps.resume?.settled(p.requestId) ?? true)
    followed.set(f.requestId, f)
    taken.push(f)
  }
  let offResynced: () => void = () => undefined
  if (taken.length > 0) {
    deps.logger.info({ requests: taken.length }, 'status events: taking up the calls an earlier run followed')
    let done = false
    const once = (): void => {
      if (done) return
      done = true
      offResynced()
      takeUp(taken)
    }
    // Only a re-read that was applied says so (resync() may resolve for one a newer re-read overtook).
    offResynced = deps.channels.onResynced(once)
    void deps.channels.resync()
  }

  const offAccepted = deps.onAccepted((a) => {
    const status = a.plan.status
    if (status === undefined) return
    const f: Followed = {
      requestId: a.plan.requestId,
      domain: a.plan.domain,
      url: status.url,
      wanted: new Set(status.events),
      origin: new Set(a.uuids),
      legs: new Map(),
      sequence: 0,
      bridged: false,
      answeredUuid: undefined,
      settled: false,
      endedByApi: new Set(),
    }
    followed.set(f.requestId, f)
    // Legs FreeSWITCH made before the API's acceptance was read.
    for (const ch of deps.channels.ofRequest(f.requestId)) catchUp(f, ch, undefined)
  })

  const offOutcome = deps.onOutcome((o) => {
    const f = followed.get(o.requestId)
    if (f === undefined) return
    f.settled = true
    if (o.result.result_code === 0) f.answeredUuid = o.result.uuid
    endIfOver(f)
  })

  const offChange = deps.channels.onChange((c) => {
    const requestId = c.channel.requestId
    if (requestId === undefined || c.kind === 'relayed' || c.kind === 'dtmf' || c.kind === 'execute_complete') return
    const f = followed.get(requestId)
    if (f !== undefined) catchUp(f, c.channel, c)
  })

  return {
    close() {
      offAccepted()
      offOutcome()
      offChange()
      offResynced()
      if (followed.size > 0) deps.logger.info({ requests: followed.size }, 'status events: calls still up at stop are taken up by the next start')
      followed.clear()
    },
  }
}

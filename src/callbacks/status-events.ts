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
 * What is known of a request lives here from its acceptance until its last leg completed. A
 * daemon restarted in the middle of a call does not go on with that call's events (docs/events.md
 * says so); the ones already handed over are kept and sent.
 */
import type { ChannelChange, ChannelModel, ChannelRecord } from '../channels/index.js'
import type { NoticeFields } from '../journal/types.js'
import type { StatusEventName } from '../origination/plan.js'
import type { RequestAccepted, RequestOutcome } from '../origination/requests.js'
import type { Logger } from '../util/logger.js'

export interface StatusEventDeps {
  readonly onAccepted: (listener: (a: RequestAccepted) => void) => () => void
  readonly onOutcome: (listener: (o: RequestOutcome) => void) => () => void
  readonly channels: Pick<ChannelModel, 'onChange' | 'ofRequest'>
  readonly notify: (
    domain: string,
    url: string,
    body: string,
    meta: { readonly requestId: string; readonly kind: NoticeFields['kind']; readonly orderKey?: string },
  ) => void
  readonly logger: Logger
}

type LegRole = 'origin' | 'destination'

/** Who ended a leg's call, as far as FreeSWITCH tells (docs/events.md "hangup_by"). */
export type HangupBy = 'origin' | 'destination' | 'api' | 'system'

/** What one leg has told so far: each event at most once. */
interface LegSeen {
  readonly role: LegRole
  initiated: boolean
  ringing: boolean
  answered: boolean
  completed: boolean
}

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

  const send = (f: Followed, event: StatusEventName, ch: ChannelRecord, role: LegRole, fields: Record<string, unknown> = {}): void => {
    if (!f.wanted.has(event)) return
    f.sequence += 1
    const body = JSON.stringify({
      event,
      request_id: f.requestId,
      uuid: ch.uuid,
      leg: role,
      sequence: f.sequence,
      timestamp: event === 'completed' ? (ch.hangupAt ?? ch.stateAt) : ch.stateAt,
      party: { user_id: ch.userId ?? null, number: ch.gateway ? (ch.calledNumber ?? null) : null },
      end_user: ch.endUser ?? ch.peerEndUser ?? null,
      ...fields,
    })
    deps.notify(f.domain, f.url, body, { requestId: f.requestId, kind: 'status', orderKey: `status:${f.requestId}` })
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
        hangup_by: hangupByOf(role, cause, change?.event?.['variable_sip_hangup_disposition'], ch.peers.length > 0),
        answered_uuid: f.answeredUuid ?? null,
      })
      endIfOver(f)
    }
  }

  const endIfOver = (f: Followed): void => {
    if (!f.settled) return
    for (const seen of f.legs.values()) if (!seen.completed) return
    followed.delete(f.requestId)
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
      if (followed.size > 0) deps.logger.info({ requests: followed.size }, 'status events: calls still up at stop are not followed to their end')
      followed.clear()
    },
  }
}

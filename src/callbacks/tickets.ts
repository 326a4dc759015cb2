/**
 * Ticketing integration per group (issue 28 item 5; docs/recording.md "Ticketing"): for every call
 * made for a group that has a `ticket_webhook`, three notices, each once and in this order (one
 * order key per request: the dispatcher holds each until the one before it is delivered):
 *
 * - `call.started`: the API accepted the request (its legs, the group, the end_user);
 * - `call.answered`: who answered and when (an originating leg's answer: the request's result);
 * - `call.ended`: the answered leg hung up (duration from its offer, billsec from its answer, the
 *   hangup cause, the recording id when the call was recorded); a request nobody answered ends
 *   at its result, with the cause.
 *
 * Signed with the group's webhook secret (the notice names its signer, `ticket:<group>`; the
 * daemon resolves it at each attempt), durable and retried as every notice (dispatcher.ts). What
 * is known of a request lives here from its acceptance to its end. After a daemon restart in the
 * middle of a call, the request's result comes from recovery (origination/recovery.ts) through the
 * same onOutcome: the call is taken up again from what its legs carry (cod_group_*,
 * cod_end_user, cod_recording_id on the channel model's records), so `call.answered` and
 * `call.ended` still come, once; `call.started` was handed over before the crash (durable).
 */
import type { ChannelModel, ChannelRecord } from '../channels/index.js'
import type { Group } from '../directory/directory.js'
import { groupOf } from '../origination/originate-spec.js'
import type { RequestAccepted, RequestOutcome } from '../origination/requests.js'
import type { EndUser } from '../pbx/end-user.js'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import type { Logger } from '../util/logger.js'
import type { NoticeFields } from '../journal/types.js'

export interface TicketDeps {
  readonly onAccepted: (listener: (a: RequestAccepted) => void) => () => void
  readonly onOutcome: (listener: (o: RequestOutcome) => void) => () => void
  readonly channels: Pick<ChannelModel, 'get' | 'onChange' | 'ofRequest'>
  /** The group's webhook URL now (a reload applies); undefined: the group has none (any more). */
  readonly webhookOf: (domain: string, groupName: string) => string | undefined
  readonly notify: (
    domain: string,
    url: string,
    body: string,
    meta: { readonly requestId: string; readonly kind: NoticeFields['kind']; readonly signer?: string; readonly orderKey?: string },
  ) => void
  readonly logger: Logger
  /** Wall clock (epoch ms) for the timestamps. Default Date.now. */
  readonly now?: () => number
}

/** The signer a ticket notice names (daemon.ts resolves it to the group's ticket_webhook.secret). */
const ticketSigner = (groupName: string): string => `ticket:${groupName}`

/** A request made for a group with a webhook, from its acceptance to its end. */
interface Followed {
  readonly requestId: string
  readonly domain: string
  readonly operation: string
  readonly group: Pick<Group, 'id' | 'name'>
  readonly endUser: EndUser | null
  readonly recordingId: string | undefined
  /** The answered leg, once the result said so: its hangup ends the call. */
  answered: string | undefined
}

const seconds = (ms: number): number => Math.max(0, Math.round(ms / 1000))

export function followTickets(deps: TicketDeps): { close(): void } {
  const now = deps.now ?? Date.now
  const followed = new Map<string, Followed>()
  /** Answered leg → its request. */
  const byLeg = new Map<string, string>()

  const send = (f: Followed, event: string, fields: Record<string, unknown>): void => {
    const url = deps.webhookOf(f.domain, f.group.name)
    if (url === undefined) return
    const body = JSON.stringify({
      event,
      request_id: f.requestId,
      domain: f.domain,
      operation: f.operation,
      group: { id: f.group.id, name: f.group.name },
      ...fields,
      end_user: f.endUser,
      timestamp: now(),
    })
    deps.notify(f.domain, url, body, { requestId: f.requestId, kind: 'ticket', signer: ticketSigner(f.group.name), orderKey: `ticket:${f.requestId}` })
  }

  const ended = (f: Followed, leg: ChannelRecord | undefined, cause: string): void => {
    followed.delete(f.requestId)
    if (f.answered !== undefined) byLeg.delete(f.answered)
    const end = leg?.hangupAt ?? now()
    send(f, 'call.ended', {
      answered_uuid: f.answered ?? null,
      duration_s: leg === undefined ? 0 : seconds(end - leg.offerAt),
      billsec: leg?.answerAt === undefined ? 0 : seconds(end - leg.answerAt),
      hangup_cause: cause,
      recording_id: f.answered !== undefined ? (f.recordingId ?? null) : null,
    })
  }

  const offAccepted = deps.onAccepted((a) => {
    const group = groupOf(a.plan)
    if (group === undefined || deps.webhookOf(a.plan.domain, group.name) === undefined) return
    const f: Followed = {
      requestId: a.plan.requestId,
      domain: a.plan.domain,
      operation: a.plan.operation,
      group: { id: group.id, name: group.name },
      endUser: a.plan.endUser ?? null,
      recordingId: a.plan.recording?.id,
      answered: undefined,
    }
    followed.set(f.requestId, f)
    send(f, 'call.started', { uuids: a.uuids })
  })

  /** A request an earlier run accepted (its result comes from recovery): taken up from its legs' variables. */
  const takeUp = (o: RequestOutcome): Followed | undefined => {
    for (const ch of deps.channels.ofRequest(o.requestId)) {
      const name = ch.vars[CHANNEL_VARS.groupName]
      if (ch.role !== 'originator' || name === undefined || deps.webhookOf(o.domain, name) === undefined) continue
      const f: Followed = {
        requestId: o.requestId,
        domain: o.domain,
        operation: o.operation,
        group: { id: ch.vars[CHANNEL_VARS.groupId] ?? '', name },
        endUser: ch.endUser ?? null,
        recordingId: ch.vars[CHANNEL_VARS.recordingId],
        answered: undefined,
      }
      followed.set(f.requestId, f)
      return f
    }
    return undefined
  }

  const offOutcome = deps.onOutcome((o) => {
    const f = followed.get(o.requestId) ?? takeUp(o)
    if (f === undefined) return
    if (o.result.result_code !== 0) return ended(f, undefined, o.result.error.cause)
    const uuid = o.result.uuid
    const leg = deps.channels.get(uuid)
    f.answered = uuid
    send(f, 'call.answered', {
      answered: { uuid, user_id: leg?.userId ?? null, number: leg?.gateway === true ? (leg.calledNumber ?? null) : null, at: leg?.answerAt ?? now() },
    })
    // Already over (its hangup came before the result was read), or not known at all: ends now.
    if (leg === undefined || leg.state === 'hangup') return ended(f, leg, leg?.hangupCause ?? 'NORMAL_CLEARING')
    byLeg.set(uuid, f.requestId)
  })

  const offChange = deps.channels.onChange((c) => {
    if (c.kind !== 'hangup' && c.kind !== 'destroyed') return
    const requestId = byLeg.get(c.channel.uuid)
    const f = requestId === undefined ? undefined : followed.get(requestId)
    if (f !== undefined) ended(f, c.channel, c.channel.hangupCause ?? 'NORMAL_CLEARING')
  })

  return {
    close() {
      offAccepted()
      offOutcome()
      offChange()
      if (followed.size > 0) deps.logger.info({ calls: followed.size }, 'ticketing: calls still up at stop are not followed to their end')
      followed.clear()
      byLeg.clear()
    },
  }
}

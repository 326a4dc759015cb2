/**
 * What CTI shows of a channel of the channel model (src/channels): the subscriber's view of it
 * (protocol.ts ChannelView), who may see it, and the cache of its last serialised view (a
 * change is serialised once, whatever the number of subscribers, and an unchanged view is sent
 * to no one). Derived from the model's records: CTI keeps no channel state of its own.
 */
import type { ChannelRecord } from '../channels/index.js'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import type { ChannelView, PeerLocation } from './protocol.js'

/** @internal Exported for tests: test/cti checks the view of a channel without a socket. */
export function viewOf(ch: ChannelRecord): ChannelView {
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
  if (ch.vars[CHANNEL_VARS.autoAnswer] === 'true') tags.push('auto_answer')
  if (ch.role === 'originator' || ch.role === 'destination') tags.push(ch.role)
  const groupId = ch.vars[CHANNEL_VARS.groupId]
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
    group_id: groupId === undefined || groupId === '' ? null : groupId,
    state: ch.state,
    state_at: ch.stateAt,
    operation: ch.operation ?? null,
    request_id: ch.requestId ?? null,
    end_user: ch.endUser ?? ch.peerEndUser ?? null,
    tags,
    hangup_cause: ch.hangupCause ?? null,
    recording: ch.vars[CHANNEL_VARS.recordingId] !== undefined,
  }
}

/** Whether a subscriber of `domain` (one user, or every channel when `userId` is undefined) may see `ch` (this box's or a peer's, peers.ts). */
export const isVisible = (ch: Pick<ChannelRecord, 'domain' | 'parties'>, domain: string, userId: string | undefined): boolean =>
  ch.domain === domain && (userId === undefined || ch.parties.includes(userId))

/** The last serialised view of each channel, dropped when the channel is destroyed. */
export class ViewCache {
  private readonly json = new Map<string, string>()

  /** The channel's serialised view, computed once until the channel changes. */
  get(ch: ChannelRecord): string {
    let json = this.json.get(ch.uuid)
    if (json === undefined) {
      json = JSON.stringify(viewOf(ch))
      this.json.set(ch.uuid, json)
    }
    return json
  }

  /** Serialises the channel's view again; `unchanged` when it is the one sent last. */
  refresh(ch: ChannelRecord): { readonly json: string; readonly unchanged: boolean } {
    const json = JSON.stringify(viewOf(ch))
    const unchanged = this.json.get(ch.uuid) === json
    this.json.set(ch.uuid, json)
    return { json, unchanged }
  }

  forget(uuid: string): void {
    this.json.delete(uuid)
  }
}

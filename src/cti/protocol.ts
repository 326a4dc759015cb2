/**
 * The CTI wire protocol (docs/cti.md): the JSON text frames the server sends and the
 * commands it accepts. Frames that go to many subscribers are built by splicing: the channel
 * payload is serialised once per event and each connection only adds its own prefix
 * (sequence number and event kind), so fan-out costs no serialisation per subscriber.
 */
import type { ApiErrorId } from '../api/errors.js'
import type { ChannelState } from '../channels/index.js'
import type { EndUser } from '../pbx/end-user.js'

/** What a channel is doing, with the time it started doing it (`state_at`): the channel model's states. */
export type ChannelStateName = ChannelState

/** Where the far end of a channel is: a SIP terminal of the domain, the PSTN (a gateway), or not known. */
export type PeerLocation = 'internal' | 'external' | 'unknown'

/** One channel as subscribers see it. Absent values are `null`, so every payload has the same keys. */
export interface ChannelView {
  readonly uuid: string
  readonly direction: 'inbound' | 'outbound' | null
  readonly peer_location: PeerLocation
  readonly calling_name: string | null
  readonly calling_number: string | null
  readonly called_number: string | null
  /** Epoch milliseconds. */
  readonly offer_at: number
  readonly answer_at: number | null
  readonly hangup_at: number | null
  /** The leg this one is bridged (or being connected) to. */
  readonly other_uuid: string | null
  readonly user_id: string | null
  readonly group_id: string | null
  readonly state: ChannelStateName
  readonly state_at: number
  readonly operation: string | null
  readonly request_id: string | null
  readonly end_user: EndUser | null
  readonly tags: readonly string[]
  readonly hangup_cause: string | null
  /** The call of this leg is recorded once connected (its request's recording: docs/recording.md). */
  readonly recording: boolean
}

export type InfoEventKind = 'added' | 'updated' | 'removed'

/**
 * Error ids of command results: the API's catalogue plus what only exists on a WebSocket;
 * `permission_denied` is the ticket policy's refusal (policy.ts), distinct from `channel_not_found`.
 */
export type CtiErrorId = ApiErrorId | 'channel_not_found' | 'invalid_message' | 'command_failed' | 'permission_denied'

export interface CtiError {
  readonly id: CtiErrorId
  readonly description: string
}

export type SystemEvent = 'connection_limit_reached' | 'connection_replaced'

/** Close codes (RFC 6455 section 7.4; 4000-4999 are the application's own). */
export const CLOSE = {
  shutdown: 1001,
  /** A third connection of the same (domain, user, app_name) without `forced=true`. */
  limitReached: 1008,
  /** The subscriber did not read fast enough; its unsent data passed `cti.max_buffered_bytes`. */
  slowConsumer: 1013,
  /** A newer connection with `forced=true` took this one's place: do not reconnect automatically. */
  replaced: 4001,
} as const

export interface ConnectionInfo {
  readonly domain: string
  readonly user_id: string | null
  readonly full_events: boolean
  readonly app_name: string
  /** read_only=true: every command is refused with permission_denied. */
  readonly read_only: boolean
  /** The domain's channel_limit, told only to full_events connections (policy.ts); null otherwise. */
  readonly channel_limit: number | null
}

export const systemFrame = (event: SystemEvent, description: string): string =>
  JSON.stringify({ type: 'system', event, description })

/** `channelsJson` are already-serialised channel payloads (cached per channel). */
export const initialInfoFrame = (connection: ConnectionInfo, channelsJson: readonly string[]): string =>
  `{"type":"initial_info","seq":0,"connection":${JSON.stringify(connection)},"channels":[${channelsJson.join(',')}]}`

/**
 * The per-connection head of an info_event; the shared tail is `eventTail(channelJson)`.
 * Together: `{"type":"info_event","seq":N,"event":"added","channel":{...}}`. ASCII only: the hub
 * copies it into the message one character per byte (hub.ts eventFrame).
 */
export const eventHead = (seq: number, kind: InfoEventKind): string =>
  `{"type":"info_event","seq":${seq},"event":"${kind}","channel":`

export const eventTail = (channelJson: string): string => `${channelJson}}`

export type CommandName = 'hangup' | 'park' | 'transfer'
export const COMMANDS: readonly CommandName[] = ['hangup', 'park', 'transfer']

/** The client's `id`, echoed in the result so it can match answers to requests. */
export type CommandId = string | number

export function resultFrame(id: CommandId | undefined, cmd: CommandName | undefined, error?: CtiError): string {
  return JSON.stringify({
    type: 'result',
    ...(id === undefined ? {} : { id }),
    ...(cmd === undefined ? {} : { cmd }),
    result_code: error === undefined ? 0 : 500,
    ...(error === undefined ? {} : { error: { id: error.id, description: error.description } }),
  })
}

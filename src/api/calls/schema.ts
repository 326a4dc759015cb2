/**
 * The rules of the live calls routes (issue 29; docs/api.md "Live calls"), the single source of
 * their description in the OpenAPI document (api/openapi/calls.ts): the list's query and the
 * bodies of the commands. The alphabets are pbx/commands.ts's own (the digits, the causes), so
 * what the API accepts is what the ESL writer accepts; the destination of a transfer is only
 * shaped here and resolved as the API resolves destinations (api/destination.ts).
 */
import { z } from 'zod'
import type { ChannelState } from '../../channels/index.js'
import { CLIENT_HANGUP_CAUSES, PATTERNS } from '../../pbx/commands.js'
import type { EndUser } from '../../pbx/end-user.js'

/** What the route hands to LiveCalls.command: one command, its values checked against these schemas. */
export type CallCommand =
  | { readonly kind: 'hangup'; readonly cause?: (typeof CLIENT_HANGUP_CAUSES)[number] }
  | { readonly kind: 'transfer'; readonly destination: string }
  | { readonly kind: 'dtmf'; readonly digits: string }
  | { readonly kind: 'hold' }
  | { readonly kind: 'unhold' }

export type CallCommandName = CallCommand['kind']

const REQUEST_ID_RULE = 'must be the request id (X-Request-Id) of a call: 1 to 64 of A-Z a-z 0-9 . _ -'
const USER_RULE = 'must be a user name of the domain'

/** `GET {prefix}/calls?request_id=&user=`: query values are strings; a repeated one is an array, refused. */
export const listQuerySchema = z
  .strictObject({
    request_id: z
      .string(REQUEST_ID_RULE)
      .regex(/^[A-Za-z0-9._-]{1,64}$/, REQUEST_ID_RULE)
      .optional()
      .describe('Only the legs of this request (the X-Request-Id of the call_* or initiate_call that placed them).'),
    user: z
      .string(USER_RULE)
      .regex(PATTERNS.userName, USER_RULE)
      .optional()
      .describe('Only the legs this user (by name) is a party to: its terminals and the legs connected to them.'),
  })
  .describe("The domain's live legs.")

/** A channel UUID in a path: anything else names no channel (the reply is channel_not_found, as for a missing one). */
export const isChannelUuid = (s: string): boolean => PATTERNS.uuid.test(s)

const CAUSE_RULE = `must be one of ${CLIENT_HANGUP_CAUSES.join(', ')}`
const DIGITS_RULE = 'must be 1 to 64 DTMF keys: 0-9 * # A B C D'

/** The body of each command; an empty body is `{}`. */
export const commandSchemas = {
  hangup: z
    .strictObject({
      cause: z.enum(CLIENT_HANGUP_CAUSES, CAUSE_RULE).optional().describe('The FreeSWITCH hangup cause; NORMAL_CLEARING when absent.'),
    })
    .describe('Hangs the leg up (uuid_kill).'),
  transfer: z
    .strictObject({
      destination: z
        .string('must be a user, group or extension name or number, a DID or a PSTN number')
        .min(1, 'must not be empty')
        .max(64, 'must be at most 64 characters')
        .describe('Where the leg goes: resolved in the domain as every destination of the API (a user, group, extension or PSTN number); routed by the domain\'s dialplan.'),
    })
    .describe("Sends the leg to another destination (uuid_transfer into the domain's dialplan); its former peer is hung up."),
  dtmf: z
    .strictObject({
      digits: z.string(DIGITS_RULE).regex(PATTERNS.dtmf, DIGITS_RULE).describe('The keys, in order.'),
    })
    .describe(
      "Plays DTMF into the call as if this leg's party pressed the keys (uuid_recv_dtmf): an IVR running on the leg reads them, and over a bridge the other party hears them.",
    ),
  hold: z.strictObject({}).describe('Puts the leg on hold (uuid_hold): its far end hears the hold music.'),
  unhold: z.strictObject({}).describe('Takes the leg off hold (uuid_hold off).'),
} as const satisfies Record<CallCommandName, z.ZodType>

const ACTION_RULE = 'must be start or stop'

/** The record command's action: start or stop recording the leg. */
export type RecordAction = 'start' | 'stop'

/** `POST {prefix}/calls/{uuid}/record` (its own route: a start answers with the recording). */
export const recordSchema = z
  .strictObject({
    action: z.enum(['start', 'stop'], ACTION_RULE).describe('start: record the leg from now on, a new recording; stop: end the recording of the leg.'),
  })
  .describe(
    "Starts or stops recording the leg (uuid_record), as the recording policy that applies to it allows (the group's for a leg made for a group, else its user's, else the domain's): start is refused where it is never, stop where it is always (recording_not_allowed). The recording is a stereo WAV in the recording store, with its record, its notice and the recordings routes as a recording made by the dialplan (docs/recording.md).",
  )

/**
 * The call as the API shows it: CTI's view of the channel (docs/cti.md "Channel"), the same
 * object (cti/live-calls.ts hands viewOf's value as this type, so the two cannot differ).
 */
export interface CallView {
  readonly uuid: string
  readonly direction: 'inbound' | 'outbound' | null
  readonly peer_location: 'internal' | 'external' | 'unknown'
  readonly calling_name: string | null
  readonly calling_number: string | null
  readonly called_number: string | null
  readonly offer_at: number
  readonly answer_at: number | null
  readonly hangup_at: number | null
  readonly other_uuid: string | null
  readonly user_id: string | null
  readonly group_id: string | null
  readonly state: ChannelState
  readonly state_at: number
  readonly operation: string | null
  readonly request_id: string | null
  readonly end_user: EndUser | null
  readonly tags: readonly string[]
  readonly hangup_cause: string | null
  /** The call of this leg is recorded once connected (docs/recording.md). */
  readonly recording: boolean
}

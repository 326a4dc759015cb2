/**
 * What a client may do to a live channel, and how it is done: the one policy of channel control,
 * shared by CTI's commands (control.ts, over the WebSocket) and the HTTP API's live calls
 * (live-calls.ts behind api/calls/), so the two cannot drift apart.
 *
 * - Domain ownership first: a channel of another domain, one the client's user is not a party
 *   to and one that does not exist all get the same `channel_not_found`, and nothing reaches
 *   FreeSWITCH (visibleChannel). The ticket rules of policy.ts come after, for CTI.
 * - Values a client gives are checked here (a cause from the known list, a transfer destination
 *   resolved as the API resolves destinations) and again, with their escaping, where the ESL
 *   text is written: pbx/commands.ts, the only writer of ESL text.
 * - FreeSWITCH's answer decides the result (runOnChannel): `+OK` is done; "no such channel"
 *   (in its three spellings) is `channel_not_found`, as the channel went away meanwhile.
 */
import { parseDestination } from '../api/destination.js'
import type { ApiError } from '../api/errors.js'
import type { ChannelModel, ChannelRecord } from '../channels/index.js'
import type { DomainDirectory } from '../directory/directory.js'
import { CLIENT_HANGUP_CAUSES, type CommandError } from '../pbx/commands.js'
import type { EslCommand, PbxClient } from '../pbx/types.js'
import { err, ok, type Result } from '../util/result.js'
import { mayTransferTo, type Credential } from './policy.js'
import type { CtiError } from './protocol.js'
import { isVisible } from './view.js'

/** Hangup causes a client may give (FreeSWITCH cause names); NORMAL_CLEARING by default. */
export const HANGUP_CAUSES = CLIENT_HANGUP_CAUSES
export type HangupCause = (typeof HANGUP_CAUSES)[number]

/** Who asks: the domain, and its user when the client sees only that user's calls. */
export interface ChannelOwner {
  readonly domain: string
  readonly userId: string | undefined
}

const cerr = (id: CtiError['id'], description: string): CtiError => ({ id, description })
const fromApi = (e: ApiError): CtiError => ({ id: e.id, description: e.description })

/** The one answer for a channel the client may not see, whether or not it exists. */
export const notFound = (uuid: string): CtiError =>
  cerr('channel_not_found', `no channel ${uuid.length <= 64 ? uuid : `${uuid.slice(0, 64)}...`} that this connection may see`)

/** pbx/commands.ts refused to write a value: the client gave it. */
export const refusedValue = (e: CommandError): CtiError => cerr('invalid_parameter', `${e.field}: ${e.reason}`)

/** The channel of this box's model named by `uuid`, if the owner may see it; else channel_not_found. */
export function visibleChannel(channels: ChannelModel, uuid: string, owner: ChannelOwner): Result<ChannelRecord, CtiError> {
  const ch = channels.get(uuid)
  if (ch === undefined || !isVisible(ch, owner.domain, owner.userId)) return err(notFound(uuid))
  return ok(ch)
}

/** The cause of a hangup: one of HANGUP_CAUSES, NORMAL_CLEARING when absent. */
export function hangupCause(value: unknown): Result<HangupCause, CtiError> {
  const cause = value ?? 'NORMAL_CLEARING'
  const c = HANGUP_CAUSES.find((x) => x === cause)
  return c === undefined ? err(cerr('invalid_parameter', `cause: must be one of ${HANGUP_CAUSES.join(', ')}`)) : ok(c)
}

/**
 * The extension a transfer sends the channel to, in the domain's dialplan context: the
 * destination resolved as the API resolves destinations (a user, group, extension or PSTN
 * number; no IVR document, no end_user prefix), then allowed for this credential (policy.ts).
 */
export function transferExtension(destination: unknown, credential: Credential, domain: DomainDirectory): Result<string, CtiError> {
  if (destination === undefined) return err(cerr('missing_parameter', 'destination is required'))
  if (typeof destination === 'string' && destination.startsWith('{')) {
    return err(cerr('invalid_parameter', 'destination: an end_user prefix cannot be given to a transfer'))
  }
  const dest = parseDestination(destination, domain, { param: 'destination', objectForm: false, xmlUrl: false, pstn: true })
  if (!dest.ok) return err(fromApi(dest.error))
  if (typeof destination !== 'string') return err(cerr('invalid_parameter', 'destination: must be a string'))
  const allowed = mayTransferTo(dest.value, credential, domain)
  if (!allowed.ok) return allowed
  // The domain's dialplan context routes by destination number (xmlcurl), like a phone dialing it.
  return ok(destination)
}

/**
 * The ESL replies meaning "that channel is gone": uuid_kill and uuid_transfer on an unknown uuid
 * (22-misc-replies), uuid_recv_dtmf's "Cannot locate session" (mod_commands.c).
 */
const NO_SUCH_CHANNEL = /^-ERR (No such channel|Invalid uuid|Cannot locate session)/i

/** Runs the commands on the channel in order, stopping at the first that FreeSWITCH refuses. */
export async function runOnChannel(pbx: PbxClient, uuid: string, commands: readonly EslCommand[]): Promise<Result<void, CtiError>> {
  if (!pbx.isConnected()) return err(cerr('pbx_unavailable', 'FreeSWITCH is not connected'))
  for (const command of commands) {
    const r = await pbx.bgapi(command)
    let reply: string
    if (r.ok) reply = r.value
    else if (r.error.kind === 'failed') reply = `-ERR ${r.error.reply}`
    else return err(cerr('pbx_unavailable', r.error.kind === 'timeout' ? 'FreeSWITCH did not answer in time' : 'FreeSWITCH is not connected'))
    const text = reply.trim()
    if (text.startsWith('+OK')) continue
    if (NO_SUCH_CHANNEL.test(text)) return err(notFound(uuid))
    return err(cerr('command_failed', `FreeSWITCH answered: ${text.slice(0, 200)}`))
  }
  return ok(undefined)
}

/**
 * A user's registered terminals: `sofia_contact` over every profile (`*`, then
 * `/<user>@<domain>`). One leg is rung per terminal; contacts outside the
 * safe alphabet are never dialled.
 */
import * as commands from '../pbx/commands.js'
import { parseSofiaContacts } from '../pbx/replies.js'
import type { PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { pbxRefusal, refusal, type OriginationRefusal } from './refusal.js'

/** At most this many terminals of one user are rung. */
const MAX_CONTACTS = 64

/** The user's contacts (none when not registered), or why they could not be read. */
export type ContactLookup = (user: string, domain: string) => Promise<Result<string[], OriginationRefusal>>

export function createContactLookup(pbx: PbxClient, commandTimeoutMs: number, log: Logger): ContactLookup {
  return async (user, domain) => {
    const cmd = commands.sofiaContact(user, domain, '*')
    if (!cmd.ok) return err(refusal('internal', `cannot look up the terminals of ${user}: ${cmd.error.reason}`))
    const r = await pbx.api(cmd.value, commandTimeoutMs)
    if (!r.ok) return err(pbxRefusal(r.error, 'sofia_contact'))
    const parsed = parseSofiaContacts(r.value)
    if (parsed.kind === 'not_registered') return ok([])
    if (parsed.refused.length > 0) log.warn({ user, domain, refused: parsed.refused }, 'contacts outside the safe alphabet are not dialled')
    return ok([...new Set(parsed.contacts)].slice(0, MAX_CONTACTS))
  }
}

/**
 * How many channels a request's destination may have live at once, counted at admission so that
 * the channel limit holds for them too (channel-limit.ts DestinationHold; docs/engine.md
 * "Channel limit"). The daemon's dialplan connects the answered originator leg to the
 * destination (xmlcurl/routes.ts routeActions), and that bridge creates:
 *
 * - a user: one leg per registered terminal, rung together (`user/` and the directory's
 *   dial-string `${sofia_contact(*\/user@domain)}`, xmlcurl/directory-section.ts): the
 *   terminals registered now, at least one (a terminal may register before the answer);
 * - a group: its members one after the other, each with all its terminals (routes.ts
 *   huntActions): the most terminals any member has now, at least one;
 * - a PSTN number: one leg through the gateway;
 * - an extension or an IVR: no leg while the IVR runs, one when it transfers (a Transfer to a
 *   PSTN number or a one-terminal user; a larger Transfer widens the hold first, or is refused
 *   when that does not fit: ivr/transfer-gate.ts, the engine's mayTransfer).
 *
 * Terminals that register between admission and the bridge are the one thing counted late:
 * the dialplan re-checks the hold when it is served (xmlcurl/bridge-gate.ts).
 */
import type { DomainDirectory } from '../directory/directory.js'
import { ok, type Result } from '../util/result.js'
import type { ContactLookup } from './contacts.js'
import type { Destination } from './plan.js'
import type { OriginationRefusal } from './refusal.js'

/** A user's live legs when the destination rings them: its terminals now, at least one. */
async function terminalsOf(lookup: ContactLookup, userName: string, domain: string): Promise<Result<number, OriginationRefusal>> {
  const r = await lookup(userName, domain)
  return r.ok ? ok(Math.max(1, r.value.length)) : r
}

/** The destination's channels, or why they could not be counted (its contacts could not be read). */
export type DestinationSlots = Promise<Result<number, OriginationRefusal>>

export async function destinationSlots(
  destination: Destination,
  dom: DomainDirectory,
  lookup: ContactLookup,
): DestinationSlots {
  switch (destination.kind) {
    case 'pstn':
    case 'extension':
    case 'ivr':
      return ok(1)
    case 'user':
      return terminalsOf(lookup, destination.user.name, dom.name)
    case 'group': {
      const counts = await Promise.all(dom.members(destination.group).map((m) => terminalsOf(lookup, m.name, dom.name)))
      let most = 1
      for (const c of counts) {
        if (!c.ok) return c
        most = Math.max(most, c.value)
      }
      return ok(most)
    }
  }
}

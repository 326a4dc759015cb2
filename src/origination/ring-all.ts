/**
 * call_group with strategy ring_all (issue 31, docs/engine.md "Ringing all"): every registered
 * terminal of every member rings at once, in ONE originate (FreeSWITCH's `,` dial string, as
 * call_user's terminals), so FreeSWITCH itself connects the first to answer and hangs the others
 * up LOSE_RACE (test/fixtures/freeswitch/esl/17-two-legs-race.txt). That makes it call_user's
 * placement with more legs: single-call.ts `ringOnce` reserves every leg and the destination's
 * slots before anything rings, rings them for answer_timeout (member_answer_timeout has no turn
 * to bound) and settles the request with the job's winner.
 *
 * What is the group's own: whose terminals they are. Members are looked up together; a member
 * without a registered terminal is skipped, none at all is `no_member_available`. Each leg
 * carries its member's user id (`cod_user_id`) and, like every leg of a call_group, the group
 * (originate-spec.ts). No per-domain queue as hunts have: the request is one originate, over as
 * soon as FreeSWITCH accepted it, exactly as a call_user is.
 */
import { randomUUID } from 'node:crypto'
import type { DomainDirectory, User } from '../directory/directory.js'
import type { ContactLookup } from './contacts.js'
import type { DestinationSlots } from './destination-legs.js'
import type { LegPlan } from './originate-spec.js'
import { refusal } from './refusal.js'
import type { OriginationRequest } from './request.js'
import { ringOnce } from './single-call.js'

/**
 * Rings every registered terminal of the members at once for the request; answers its reply.
 * The legs are in the group's member order, each member's terminals in sofia_contact's order: the
 * reply's UUIDs are in that order.
 */
export async function ringAll(
  req: OriginationRequest,
  dom: DomainDirectory,
  members: readonly User[],
  lookupContacts: ContactLookup,
  /** The destination's legs to reserve with the members' (destination-legs.ts). */
  destinationSlots: DestinationSlots,
): Promise<void> {
  const looked = await Promise.all(members.map((m) => lookupContacts(m.name, dom.name)))
  const legs: LegPlan[] = []
  for (const [i, member] of members.entries()) {
    const r = looked[i]
    if (r === undefined) continue
    // A lookup FreeSWITCH could not answer says nothing about who is registered: refused, as a hunt is.
    if (!r.ok) return req.withdraw(r.error)
    for (const contact of r.value) legs.push({ uuid: randomUUID(), endpoint: { kind: 'contact', contact }, userId: member.id })
  }
  if (legs.length === 0) {
    const group = req.plan.originator.kind === 'group' ? req.plan.originator.group.name : ''
    return req.withdraw(refusal('no_member_available', `no member of group ${group} has a registered SIP terminal`))
  }
  return ringOnce(req, legs, destinationSlots)
}

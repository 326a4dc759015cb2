/**
 * Requests placed as ONE originate whose outcome is the request's result:
 * - call_user: one leg per registered terminal of the user, all in one originate (`,`), so
 *   FreeSWITCH rings them together and hangs up the losers (LOSE_RACE,
 *   test/fixtures/freeswitch/esl/17-two-legs-race.txt);
 * - call_external / initiate_call with a PSTN originator: one leg through the domain's gateway.
 *
 * Each function drives its request (request.ts) to its reply; the request reports its result.
 */
import { randomUUID } from 'node:crypto'
import type { DomainDirectory, User } from '../directory/directory.js'
import type { ContactLookup } from './contacts.js'
import type { DestinationSlots } from './destination-legs.js'
import type { LegPlan } from './originate-spec.js'
import { refusal } from './refusal.js'
import type { OriginationRequest } from './request.js'

/**
 * Rings `legs` for the request in one originate; answers the request's reply (accepted or
 * withdrawn). Also a ring-all group's (ring-all.ts): every member's terminals are its legs.
 */
export async function ringOnce(req: OriginationRequest, legs: readonly LegPlan[], destinationSlots: DestinationSlots): Promise<void> {
  const uuids = legs.map((l) => l.uuid)
  const slots = await destinationSlots
  if (!slots.ok) return req.withdraw(slots.error)
  const reserved = await req.reserve(uuids, slots.value)
  if (!reserved.ok) return req.withdraw(reserved.error)
  const ringing = await req.ring(legs, req.plan.answerTimeoutSec)
  if (!ringing.ok) return req.withdraw(ringing.error)
  req.accept(uuids)
  void ringing.value.then((outcome) => req.settle(outcome))
}

export async function callUser(
  req: OriginationRequest,
  dom: DomainDirectory,
  user: User,
  autoAnswer: boolean,
  lookupContacts: ContactLookup,
  /** The destination's legs to reserve with the request's own (destination-legs.ts). */
  destinationSlots: DestinationSlots,
): Promise<void> {
  const contacts = await lookupContacts(user.name, dom.name)
  if (!contacts.ok) return req.withdraw(contacts.error)
  if (contacts.value.length === 0) return req.withdraw(refusal('user_not_registered', `user ${user.name} has no registered SIP terminal`))
  const legs = contacts.value.map<LegPlan>((contact) => ({
    uuid: randomUUID(),
    endpoint: { kind: 'contact', contact },
    userId: user.id,
    autoAnswer,
  }))
  return ringOnce(req, legs, destinationSlots)
}

export const callPstn = (req: OriginationRequest, dom: DomainDirectory, number: string, destinationSlots: DestinationSlots): Promise<void> =>
  ringOnce(req, [{ uuid: randomUUID(), endpoint: { kind: 'gateway', gateway: dom.config.gateway, number } }], destinationSlots)

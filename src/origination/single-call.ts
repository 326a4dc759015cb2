/**
 * Requests placed as ONE originate whose outcome is the request's result:
 * - call_user: one leg per registered terminal of the user, all in one originate (`,`), so
 *   FreeSWITCH rings them together and hangs up the losers (LOSE_RACE,
 *   test/fixtures/freeswitch/esl/17-two-legs-race.txt);
 * - call_external / initiate_call with a PSTN originator: one leg through the domain's gateway.
 */
import { randomUUID } from 'node:crypto'
import type { DomainDirectory, User } from '../directory/directory.js'
import { err, ok, type Result } from '../util/result.js'
import { reserveLegs, reserveShared, type SharedLimit } from './admission.js'
import type { Attempts } from './attempt.js'
import type { ChannelLimiter } from './channel-limit.js'
import type { ContactLookup } from './contacts.js'
import type { DestinationSlots } from './destination-legs.js'
import type { LegPlan } from './originate-spec.js'
import type { OriginationAccepted, OriginationPlan } from './plan.js'
import { refusal, STOPPING, type OriginationRefusal } from './refusal.js'
import type { Requests } from './requests.js'

export interface SingleCallDeps {
  readonly limiter: ChannelLimiter
  readonly requests: Requests
  readonly attempts: Attempts
  readonly lookupContacts: ContactLookup
  /** The limit shared with other nodes, in a cluster (docs/cluster.md). */
  readonly shared?: SharedLimit
}

type Placed = Promise<Result<OriginationAccepted, OriginationRefusal>>

export interface SingleCalls {
  /** `destinationSlots`: the destination's legs to reserve with the request's own (destination-legs.ts). */
  callUser(plan: OriginationPlan, dom: DomainDirectory, user: User, autoAnswer: boolean, destinationSlots: DestinationSlots): Placed
  callPstn(plan: OriginationPlan, dom: DomainDirectory, number: string, destinationSlots: DestinationSlots): Placed
}

export function createSingleCalls(deps: SingleCallDeps): SingleCalls {
  const { requests, attempts } = deps

  const single = async (plan: OriginationPlan, dom: DomainDirectory, legs: readonly LegPlan[], destinationSlots: DestinationSlots): Placed => {
    const uuids = legs.map((l) => l.uuid)
    const slots = await destinationSlots
    if (!slots.ok) return err(slots.error)
    // No await between the check and the reservation (channel-limit.ts).
    const demand = { uuids, destination: { requestId: plan.requestId, slots: slots.value } }
    const reserved = reserveLegs(deps.limiter, plan.domain, dom.config.channel_limit, demand)
    if (!reserved.ok) return err(reserved.error)
    const req = requests.open(plan, dom)
    // In a cluster, the other nodes' channels count too; opened first so the hold is not swept
    // meanwhile. A single node goes on without waiting (no await at all).
    if (deps.shared !== undefined) {
      const shared = await reserveShared(deps.shared, deps.limiter, plan.domain, dom.config.channel_limit, demand)
      if (!shared.ok || req.stopped) {
        requests.forget(plan.requestId)
        if (shared.ok) deps.limiter.release(...uuids)
        return err(shared.ok ? STOPPING : shared.error)
      }
    }
    const started = await attempts.start(req, legs, plan.answerTimeoutSec)
    if (!started.ok) {
      requests.forget(plan.requestId)
      return err(started.error)
    }
    // The engine closed while FreeSWITCH was accepting it; its legs are being cancelled.
    if (req.settled) return err(STOPPING)
    req.accepted = true
    void started.value.then((o) => requests.settle(req, o))
    return ok({ uuids })
  }

  return {
    async callUser(plan, dom, user, autoAnswer, destinationSlots) {
      const contacts = await deps.lookupContacts(user.name, dom.name)
      if (!contacts.ok) return err(contacts.error)
      if (contacts.value.length === 0) {
        return err(refusal('user_not_registered', `user ${user.name} has no registered SIP terminal`))
      }
      const legs = contacts.value.map<LegPlan>((contact) => ({
        uuid: randomUUID(),
        endpoint: { kind: 'contact', contact },
        userId: user.id,
        autoAnswer,
      }))
      return single(plan, dom, legs, destinationSlots)
    },
    callPstn: (plan, dom, number, destinationSlots) =>
      single(plan, dom, [{ uuid: randomUUID(), endpoint: { kind: 'gateway', gateway: dom.config.gateway, number } }], destinationSlots),
  }
}

/**
 * call_group: the hunt (hunt.ts decides the order and the timeouts; this places it). Every
 * member's terminals are looked up first, so that the reply lists every leg the hunt may
 * create, in order. Hunts wait in a per-domain queue (p-queue, `huntConcurrency` at once); the
 * reply is given once the first member's originate was accepted, however long the wait.
 */
import { randomUUID } from 'node:crypto'
import PQueue from 'p-queue'
import type { DomainDirectory, User } from '../directory/directory.js'
import type { Clock } from '../util/clock.js'
import type { Logger } from '../util/logger.js'
import type { ContactLookup } from './contacts.js'
import type { DestinationSlots } from './destination-legs.js'
import { runHunt, type HuntMember } from './hunt.js'
import { groupOf } from './originate-spec.js'
import { refusal } from './refusal.js'
import type { OriginationRequest } from './request.js'

export interface GroupCallDeps {
  readonly lookupContacts: ContactLookup
  readonly logger: Logger
  readonly clock: Clock
  /** Hunts running at once per domain. */
  readonly huntConcurrency: number
  /** Real seconds per FreeSWITCH second (the hunt's answer_timeout budget). */
  readonly timeScale: number
}

export interface GroupCalls {
  /** Hunts the group's members for the request; answers the request's reply (accepted or withdrawn). */
  call(
    req: OriginationRequest,
    dom: DomainDirectory,
    members: readonly User[],
    memberAnswerTimeoutSec: number,
    /** The destination's legs to reserve with the first member's (destination-legs.ts). */
    destinationSlots: DestinationSlots,
  ): Promise<void>
  /** Resolves once no hunt runs or waits. */
  idle(): Promise<void>
}

export function createGroupCalls(deps: GroupCallDeps): GroupCalls {
  const { clock, logger: log } = deps
  const queues = new Map<string, PQueue>()

  const queueOf = (domain: string): PQueue => {
    let q = queues.get(domain)
    if (q === undefined) {
      q = new PQueue({ concurrency: Math.max(1, deps.huntConcurrency) })
      queues.set(domain, q)
    }
    return q
  }

  const call: GroupCalls['call'] = async (req, dom, members, memberAnswerTimeoutSec, destinationSlots) => {
    const { plan } = req
    // Every member's terminals first: the reply lists every leg the hunt may create, in order.
    const looked = await Promise.all(members.map((m) => deps.lookupContacts(m.name, dom.name)))
    const failed = looked.find((r) => !r.ok)
    if (failed !== undefined && !failed.ok) return req.withdraw(failed.error)
    const hunt: HuntMember[] = []
    members.forEach((m, i) => {
      const r = looked[i]
      const contacts = r !== undefined && r.ok ? r.value : []
      if (contacts.length > 0) hunt.push({ userId: m.id, userName: m.name, contacts, uuids: contacts.map(() => randomUUID()) })
    })
    const first = hunt[0]
    if (first === undefined) {
      return req.withdraw(refusal('no_member_available', `no member of group ${groupOf(plan)?.name ?? ''} has a registered SIP terminal`))
    }
    const slots = await destinationSlots
    if (!slots.ok) return req.withdraw(slots.error)
    // In a cluster, the other nodes' channels count too (a later member is counted by this node only: docs/cluster.md).
    const reserved = await req.reserve(first.uuids, slots.value)
    if (!reserved.ok) return req.withdraw(reserved.error)
    let started = clock.now()
    const task = async (): Promise<void> => {
      if (req.stopping || req.phase !== 'placing') {
        req.releaseLegs(first.uuids)
        return
      }
      // answer_timeout counts from the first ring, not from the wait in the queue.
      started = clock.now()
      const ended = await runHunt(
        hunt,
        { answerTimeoutSec: plan.answerTimeoutSec, memberAnswerTimeoutSec },
        {
          lookup: async (m) => {
            const r = await deps.lookupContacts(m.userName, dom.name)
            return r.ok ? r.value : undefined
          },
          // The destination is held since admission: a later member reserves only its own legs.
          reserve: (uuids) => req.reserveMore(uuids),
          release: (uuids) => req.releaseLegs(uuids),
          start: (m, legs, timeoutSec) =>
            req.ring(
              legs.map((l) => ({ uuid: l.uuid, endpoint: { kind: 'contact', contact: l.contact }, userId: m.userId })),
              timeoutSec,
            ),
          elapsedSec: () => (clock.now() - started) / 1000 / deps.timeScale,
          stopped: () => req.stopping,
        },
        (r) => (r.ok ? req.accept(hunt.flatMap((m) => m.uuids)) : req.withdraw(r.error)),
      )
      if (ended.reported) req.settle(ended.outcome)
    }
    queueOf(req.domain)
      .add(task)
      .catch((e: unknown) => {
        log.error({ err: e, requestId: plan.requestId }, 'hunt failed')
        req.withdraw(refusal('internal', 'the hunt failed'))
        req.settle({ answered: false, cause: 'UNKNOWN' })
      })
  }

  return {
    call,
    async idle() {
      await Promise.all([...queues.values()].map((q) => q.onIdle()))
    },
  }
}

/**
 * call_group: the hunt (hunt.ts decides the order and the timeouts; this places it). Every
 * member's terminals are looked up first, so that the reply lists every leg the hunt may
 * create, in order. Hunts wait in a per-domain queue (p-queue, `huntConcurrency` at once); the
 * reply is given once the first member's originate was accepted, however long the wait.
 */
import { performance } from 'node:perf_hooks'
import { randomUUID } from 'node:crypto'
import PQueue from 'p-queue'
import type { Runtime } from '../runtime/store.js'
import type { DomainDirectory, User } from '../directory/directory.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { reserveLegs, reserveShared, type SharedLimit } from './admission.js'
import type { Attempts } from './attempt.js'
import type { ChannelLimiter } from './channel-limit.js'
import type { ContactLookup } from './contacts.js'
import type { DestinationSlots } from './destination-legs.js'
import { runHunt, type HuntMember } from './hunt.js'
import { groupOf } from './originate-spec.js'
import type { OriginationAccepted, OriginationPlan } from './plan.js'
import { refusal, STOPPING, type OriginationRefusal } from './refusal.js'
import type { Requests } from './requests.js'

export interface GroupCallDeps {
  readonly limiter: ChannelLimiter
  readonly requests: Requests
  readonly attempts: Attempts
  readonly lookupContacts: ContactLookup
  readonly runtime: () => Runtime
  readonly logger: Logger
  /** Hunts running at once per domain. */
  readonly huntConcurrency: number
  /** Real seconds per FreeSWITCH second (the hunt's answer_timeout budget). */
  readonly timeScale: number
  /** True once the engine is closing. */
  readonly isClosed: () => boolean
  /** The limit shared with other nodes, in a cluster (docs/cluster.md). */
  readonly shared?: SharedLimit
}

export interface GroupCalls {
  call(
    plan: OriginationPlan,
    dom: DomainDirectory,
    members: readonly User[],
    memberAnswerTimeoutSec: number,
    /** The destination's legs to reserve with the first member's (destination-legs.ts). */
    destinationSlots: DestinationSlots,
  ): Promise<Result<OriginationAccepted, OriginationRefusal>>
  /** Refuses the hunts admitted but still waiting in their queue (the engine is closing). */
  refuseWaiting(): void
  /** Resolves once no hunt runs or waits. */
  idle(): Promise<void>
}

type Acceptance = Result<void, OriginationRefusal>

export function createGroupCalls(deps: GroupCallDeps): GroupCalls {
  const { limiter, requests, logger: log } = deps
  const queues = new Map<string, PQueue>()
  /** Hunts admitted but waiting in their queue: refused if the engine closes first. */
  const waitingHunts = new Set<(r: Acceptance) => void>()

  const queueOf = (domain: string): PQueue => {
    let q = queues.get(domain)
    if (q === undefined) {
      q = new PQueue({ concurrency: Math.max(1, deps.huntConcurrency) })
      queues.set(domain, q)
    }
    return q
  }

  const call: GroupCalls['call'] = async (plan, dom, members, memberAnswerTimeoutSec, destinationSlots) => {
    // Every member's terminals first: the reply lists every leg the hunt may create, in order.
    const looked = await Promise.all(members.map((m) => deps.lookupContacts(m.name, dom.name)))
    const failed = looked.find((r) => !r.ok)
    if (failed !== undefined && !failed.ok) return err(failed.error)
    const hunt: HuntMember[] = []
    members.forEach((m, i) => {
      const r = looked[i]
      const contacts = r !== undefined && r.ok ? r.value : []
      if (contacts.length > 0) hunt.push({ userId: m.id, userName: m.name, contacts, uuids: contacts.map(() => randomUUID()) })
    })
    const first = hunt[0]
    if (first === undefined) {
      return err(refusal('no_member_available', `no member of group ${groupOf(plan)?.name ?? ''} has a registered SIP terminal`))
    }
    const slots = await destinationSlots
    if (!slots.ok) return err(slots.error)
    // No await between the check and the reservation (channel-limit.ts).
    const demand = { uuids: first.uuids, destination: { requestId: plan.requestId, slots: slots.value } }
    const reserved = reserveLegs(limiter, plan.domain, dom.config.channel_limit, demand)
    if (!reserved.ok) return err(reserved.error)
    const req = requests.open(plan, dom)
    // In a cluster, the other nodes' channels count too (a later member is counted by this node only: docs/cluster.md).
    if (deps.shared !== undefined) {
      const shared = await reserveShared(deps.shared, limiter, plan.domain, dom.config.channel_limit, demand)
      if (!shared.ok || req.stopped) {
        requests.forget(plan.requestId)
        if (shared.ok) limiter.release(...first.uuids)
        return err(shared.ok ? STOPPING : shared.error)
      }
    }
    let started = performance.now()
    let accept!: (r: Acceptance) => void
    const accepted = new Promise<Acceptance>((r) => (accept = r))
    let answered = false
    const acceptOnce = (r: Acceptance) => {
      if (answered) return
      answered = true
      req.accepted = r.ok
      waitingHunts.delete(acceptOnce)
      accept(r)
    }
    waitingHunts.add(acceptOnce)
    const task = () => {
      if (deps.isClosed()) {
        limiter.release(...first.uuids)
        acceptOnce(err(STOPPING))
        return Promise.resolve()
      }
      // answer_timeout counts from the first ring, not from the wait in the queue.
      started = performance.now()
      return runHunt(
        hunt,
        { answerTimeoutSec: plan.answerTimeoutSec, memberAnswerTimeoutSec },
        {
          lookup: async (m) => {
            const r = await deps.lookupContacts(m.userName, dom.name)
            return r.ok ? r.value : undefined
          },
          // The destination is held since admission: a later member reserves only its own legs.
          reserve: (uuids) => limiter.tryReserve(plan.domain, deps.runtime().directory.domain(plan.domain)?.config.channel_limit ?? 0, { uuids }),
          release: (uuids) => limiter.release(...uuids),
          start: (m, legs, timeoutSec) =>
            deps.attempts.start(
              req,
              legs.map((l) => ({ uuid: l.uuid, endpoint: { kind: 'contact', contact: l.contact }, userId: m.userId })),
              timeoutSec,
            ),
          elapsedSec: () => (performance.now() - started) / 1000 / deps.timeScale,
          stopped: () => deps.isClosed() || req.stopped,
        },
        acceptOnce,
      ).then((r) => {
        if (r.reported) requests.settle(req, r.outcome)
        else requests.forget(plan.requestId)
      })
    }
    queueOf(req.domain)
      .add(task)
      .catch((e: unknown) => {
        log.error({ err: e, requestId: plan.requestId }, 'hunt failed')
        acceptOnce(err(refusal('internal', 'the hunt failed')))
        requests.settle(req, { answered: false, cause: 'UNKNOWN' })
      })
    const acc = await accepted
    if (!acc.ok) {
      requests.forget(plan.requestId)
      return err(acc.error)
    }
    return ok({ uuids: hunt.flatMap((m) => m.uuids) })
  }

  return {
    call,
    refuseWaiting() {
      for (const acceptWaiting of [...waitingHunts]) acceptWaiting(err(STOPPING))
    },
    async idle() {
      await Promise.all([...queues.values()].map((q) => q.onIdle()))
    },
  }
}

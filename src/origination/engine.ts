/**
 * The origination engine: turns an OriginationPlan into FreeSWITCH originates and reports
 * exactly one result per accepted request (docs/engine.md has the whole story). This file
 * wires the parts and holds the two ends of the engine's life (a request's admission, close):
 *
 * - admission.ts: may the request be placed at all; its legs' channel slots are reserved.
 * - single-call.ts (call_user, PSTN originators) and group-call.ts (call_group, with hunt.ts)
 *   place it: one originate, or a hunt of one originate per member.
 * - attempt.ts: one originate, from its placement to its outcome (leg-outcome.ts decides it,
 *   leg-watch.ts follows its legs on the daemon's channel model, src/channels).
 * - requests.ts: the requests in flight and their one result each (listeners, callback).
 *
 * UUIDs are generated before the originate, one per leg; the reply lists them (docs/design.md
 * "Origination semantics"). The reply is given once FreeSWITCH accepted the bgapi. The
 * answered leg runs `cod_route XML <domain>`: the daemon's dialplan (xml_curl) connects it to
 * the destination described by the cod_dest_* variables (originate-spec.ts).
 */
import type { ChannelModel } from '../channels/index.js'
import type { DomainDirectory } from '../directory/directory.js'
import type { Runtime } from '../runtime/store.js'
import type { PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { err, type Result } from '../util/result.js'
import { admit, type SharedLimit } from './admission.js'
import { createAttempts } from './attempt.js'
import { createLegCanceller } from './cancel.js'
import { ChannelLimiter } from './channel-limit.js'
import { createContactLookup } from './contacts.js'
import { destinationSlots, type DestinationSlots } from './destination-legs.js'
import { createGroupCalls } from './group-call.js'
import type { CallbackSink } from './outcome.js'
import type { OriginateIntents } from './intents.js'
import type { Destination, OriginationAccepted, OriginationEngine, OriginationPlan } from './plan.js'
import type { OriginationRefusal } from './refusal.js'
import { createLegRecords } from './leg-records.js'
import { createRecovery, type RecoverableRequest, type RecoverySummary, type UnsettledIntents } from './recovery.js'
import { createRequests, type RequestOutcome } from './requests.js'
import { createSingleCalls } from './single-call.js'

/** How often the channel limit ends destination holds no channel change ended (channel-limit.ts sweep). */
const LIMIT_SWEEP_MS = 5000

export interface EngineDeps {
  readonly pbx: PbxClient
  /** The live channels (created once by the daemon): the channel limit counts them, attempts follow their legs on them. */
  readonly channels: ChannelModel
  readonly runtime: () => Runtime
  readonly callbacks: CallbackSink
  readonly logger: Logger
  /**
   * SIP profile of the daemon's users (config freeswitch.sip_profile). Contacts are looked up in
   * every profile (`*`), as docs/design.md "Lessons from FreeSWITCH" says, so it is only logged;
   * gateway legs do not need it.
   */
  readonly sipProfile: string
  /** Hunts running at once per domain (p-queue concurrency). */
  readonly huntConcurrency: number
  /** In a cluster: the channel limit across nodes, asked after this node's own (src/cluster/, docs/cluster.md). */
  readonly sharedLimit?: SharedLimit
  /** The journal's write-ahead record (intents.ts); without it nothing is written before an originate. */
  readonly intents?: OriginateIntents
  /** Time allowed for one ESL command (sofia_contact, the originate's acceptance). Default 5000 ms. */
  readonly commandTimeoutMs?: number
  /** How long after an originate's own timeout the watchdog steps in. Default 15000 ms. */
  readonly graceMs?: number
  /**
   * Real seconds per FreeSWITCH second (default 1). Only the simulator, which runs its clock
   * faster, needs another value: the hunt's answer_timeout budget and the watchdogs use it.
   */
  readonly timeScale?: number
}

export interface Engine extends OriginationEngine {
  /** Channels in use for the limit: live channels plus reservations. */
  inUse(domain: string): number
  /**
   * The dialplan asks before it bridges a request's answered leg to its destination
   * (xmlcurl/bridge-gate.ts BridgeGate): true while the request holds channels for it; for a
   * request this engine did not admit (placed before a restart), a one-leg hold if it fits.
   */
  mayBridge(domain: string, requestId: string, callerUuid: string | undefined): boolean
  /**
   * An IVR's Transfer asks before it bridges (ivr/transfer-gate.ts TransferGate): the request's
   * destination hold grows to what the target rings, if that fits under the limit.
   */
  mayTransfer(domain: string, requestId: string, callerUuid: string, target: Destination): Promise<boolean>
  /** Results of accepted requests, once each (CTI may listen). */
  onOutcome(listener: (o: RequestOutcome) => void): () => void
  /**
   * At start: the requests an earlier run accepted without a result get one, adopted while their
   * legs live (recovery.ts). Resolves once each is reported or adopted.
   */
  recover(open: readonly RecoverableRequest[], intents?: UnsettledIntents): Promise<RecoverySummary>
  close(): Promise<void>
}

export function createEngine(deps: EngineDeps): Engine {
  const { pbx, channels, runtime, logger: log } = deps
  const commandTimeoutMs = deps.commandTimeoutMs ?? 5000
  const graceMs = deps.graceMs ?? 15000
  const timeScale = deps.timeScale ?? 1
  let closed = false

  const requests = createRequests({ callbacks: deps.callbacks, logger: log })
  // The channel limit counts the domain's live channels and the legs requests may still create;
  // attempts follow their legs on the same channels (leg-watch.ts).
  const limiter = new ChannelLimiter({
    channels: {
      liveCount: (d) => channels.liveCount(d),
      isLive: (uuid) => {
        const c = channels.get(uuid)
        return c === undefined ? undefined : c.state !== 'hangup'
      },
      liveDestinationLegs: (requestId) => {
        const legs: string[] = []
        for (const c of channels.ofRequest(requestId)) if (c.role === 'destination' && c.state !== 'hangup') legs.push(c.uuid)
        return legs
      },
    },
    inFlight: (id) => requests.has(id),
  })
  const unfollowLimit = channels.onChange((c) => limiter.channelChanged(c.channel))
  const limitSweep = setInterval(() => limiter.sweep(), LIMIT_SWEEP_MS).unref()
  // The destination's hold lasts while the answered leg lives; unanswered, nothing more comes.
  requests.onOutcome((o) => (o.result.result_code === 0 ? limiter.bindWinner(o.requestId, o.result.uuid) : limiter.dropHold(o.requestId)))
  const cancel = createLegCanceller(pbx, commandTimeoutMs, log)
  // FreeSWITCH records each leg's fate in mod_hash, read back when the daemon was away (recovery.ts).
  const records = createLegRecords({
    pbx,
    channels,
    commandTimeoutMs,
    inFlight: (id) => requests.has(id) || recovery.has(id),
  })
  const recovery = createRecovery({ pbx, channels, records, requests, cancel, logger: log.child({ part: 'recovery' }), graceMs })
  // Requests whose intent is written and whose reply is not decided yet: a refusal unwrites it.
  const intended = new Set<string>()
  const intents =
    deps.intents === undefined
      ? undefined
      : {
          intended: (plan: OriginationPlan, uuids: readonly string[]) => {
            intended.add(plan.requestId)
            return deps.intents?.intended(plan, uuids) ?? Promise.resolve()
          },
        }
  const attempts = createAttempts({ pbx, channels, limiter, cancel, runtime, logger: log, commandTimeoutMs, graceMs, timeScale, records, ...(intents !== undefined ? { intents } : {}) })
  const lookupContacts = createContactLookup(pbx, commandTimeoutMs, log)
  const shared = deps.sharedLimit !== undefined ? { shared: deps.sharedLimit } : {}
  const singles = createSingleCalls({ limiter, requests, attempts, lookupContacts, ...shared })
  const groups = createGroupCalls({
    limiter,
    requests,
    attempts,
    lookupContacts,
    runtime,
    logger: log,
    huntConcurrency: deps.huntConcurrency,
    timeScale,
    isClosed: () => closed,
    ...shared,
  })

  const originate = async (plan: OriginationPlan): Promise<Result<OriginationAccepted, OriginationRefusal>> => {
    const admitted = admit(plan, {
      closed,
      connected: pbx.isConnected(),
      inFlight: (id) => requests.has(id),
      directory: () => runtime().directory,
    })
    if (!admitted.ok) return err(admitted.error)
    const dom = admitted.value
    // Looked up while the originating legs are: each placement awaits it just before it reserves.
    const slots = destinationSlots(plan.destination, dom, lookupContacts)
    const placed = await place(plan, dom, slots)
    const hadIntent = intended.delete(plan.requestId)
    if (!placed.ok) {
      limiter.dropHold(plan.requestId)
      // Refused means FreeSWITCH never saw the originate (attempt.ts): the intent placed nothing.
      if (hadIntent) deps.intents?.unplaced(plan)
    }
    return placed
  }

  const place = (plan: OriginationPlan, dom: DomainDirectory, destSlots: DestinationSlots): Promise<Result<OriginationAccepted, OriginationRefusal>> => {
    const o = plan.originator
    switch (o.kind) {
      case 'user':
        return singles.callUser(plan, dom, o.user, o.autoAnswer, destSlots)
      case 'pstn':
        return singles.callPstn(plan, dom, o.number, destSlots)
      case 'group':
        return groups.call(plan, dom, o.members, o.memberAnswerTimeoutSec, destSlots)
    }
  }

  log.debug({ sipProfile: deps.sipProfile, huntConcurrency: deps.huntConcurrency }, 'origination engine ready')
  // Channels live before we started count once the channel model has re-read them (it does at every connection).

  return {
    originate,
    inUse: (domain) => limiter.inUse(domain),
    mayBridge(domain, requestId, callerUuid) {
      if (limiter.destinationSlots(requestId) !== undefined) return true
      const limit = runtime().directory.domain(domain)?.config.channel_limit
      if (callerUuid === undefined || limit === undefined) return false
      const held = limiter.tryHoldAfterAnswer(domain, limit, requestId, callerUuid, 1)
      if (!held) log.warn({ requestId, domain, limit }, 'bridge refused: the destination leg would exceed the channel limit')
      return held
    },
    async mayTransfer(domain, requestId, callerUuid, target) {
      const dom = runtime().directory.domain(domain)
      if (dom === undefined) return false
      const slots = await destinationSlots(target, dom, lookupContacts)
      if (!slots.ok) {
        log.warn({ requestId, domain, reason: slots.error.description }, 'IVR transfer refused: its legs could not be counted for the channel limit')
        return false
      }
      // Re-read after the lookup: a reload may have changed the limit meanwhile.
      const limit = runtime().directory.domain(domain)?.config.channel_limit
      if (limit === undefined) return false
      const held =
        limiter.destinationSlots(requestId) === undefined
          ? limiter.tryHoldAfterAnswer(domain, limit, requestId, callerUuid, slots.value)
          : limiter.tryWiden(domain, limit, requestId, slots.value)
      if (!held) log.warn({ requestId, domain, limit, legs: slots.value }, 'IVR transfer refused: its legs would exceed the channel limit')
      return held
    },
    onOutcome: (listener) => requests.onOutcome(listener),
    recover: (open, intents) => (closed ? Promise.resolve({ fromRecords: 0, adopted: 0, unknown: 0 }) : recovery.recover(open, intents)),
    async close() {
      if (closed) return
      closed = true
      unfollowLimit()
      clearInterval(limitSweep)
      groups.refuseWaiting()
      // Calls still ringing are cancelled, and reported so: every accepted request gets its result.
      for (const req of requests.inFlight()) {
        req.stopped = true
        // Ending the attempt cancels the legs we know; hupall also those FreeSWITCH is creating right now.
        if (req.attempt !== undefined) attempts.cancel(req.attempt)
        cancel.hangupRequest(req.plan.requestId)
      }
      await Promise.race([groups.idle(), new Promise((r) => setTimeout(r, 2000).unref())])
      for (const req of requests.inFlight()) requests.settle(req, { answered: false, cause: 'ORIGINATOR_CANCEL' })
      recovery.stop()
      recovery.close()
      records.close()
      attempts.close()
      requests.close()
    },
  }
}

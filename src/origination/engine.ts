/**
 * The origination engine: turns an OriginationPlan into FreeSWITCH originates and reports
 * exactly one result per accepted request (docs/engine.md has the whole story). This file
 * wires the parts and holds the two ends of the engine's life (a request's admission, close):
 *
 * - admission.ts: may the request be placed at all.
 * - request.ts: one request's life, the one place it is written (phase, channel reservations,
 *   originates, journal record, reply, result); the engine makes one per admitted request.
 * - single-call.ts (call_user, PSTN originators) and group-call.ts (call_group, with hunt.ts)
 *   drive a request: one originate, or a hunt of one originate per member.
 * - attempt.ts: one originate, from its placement to its outcome (leg-outcome.ts decides it,
 *   leg-watch.ts follows its legs on the daemon's channel model, src/channels).
 * - requests.ts: the requests in flight and the one door their results leave by (listeners, callback).
 *
 * UUIDs are generated before the originate, one per leg; the reply lists them (docs/design.md
 * "Origination semantics"). The reply is given once FreeSWITCH accepted the bgapi. The
 * answered leg runs `cod_route XML <domain>`: the daemon's dialplan (xml_curl) connects it to
 * the destination described by the cod_dest_* variables (originate-spec.ts).
 */
import type { ChannelModel } from '../channels/index.js'
import type { Runtime } from '../runtime/store.js'
import type { PbxClient } from '../pbx/types.js'
import { delay, systemClock, type Clock } from '../util/clock.js'
import type { Logger } from '../util/logger.js'
import { err, type Result } from '../util/result.js'
import { admit, type SharedLimit } from './admission.js'
import { createAttempts } from './attempt.js'
import { createLegCanceller } from './cancel.js'
import { ChannelLimiter } from './channel-limit.js'
import { ChannelWaits, type WaitFigures } from './channel-wait.js'
import { createContactLookup } from './contacts.js'
import { destinationSlots } from './destination-legs.js'
import { createGroupCalls } from './group-call.js'
import type { CallbackSink } from './outcome.js'
import type { OriginateIntents } from './intents.js'
import type { Destination, OriginateOptions, OriginationAccepted, OriginationEngine, OriginationPlan } from './plan.js'
import type { OriginationRefusal } from './refusal.js'
import { createLegRecords } from './leg-records.js'
import { createPace, paceBelow, VANILLA_SESSIONS_PER_SECOND } from './pace.js'
import { watchSessionRate } from '../pbx/session-rate.js'
import { createRecovery, type RecoverableRequest, type RecoverySummary, type UnsettledIntents } from './recovery.js'
import { OriginationRequest, type RequestServices } from './request.js'
import { createRequests, type RequestAccepted, type RequestOutcome } from './requests.js'
import { ringAll } from './ring-all.js'
import { callPstn, callUser } from './single-call.js'

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
  /** Where every timer and duration of the engine comes from. Default: the system clock. */
  readonly clock?: Clock
}

export interface Engine extends OriginationEngine {
  /** Channels in use for the limit: live channels plus reservations. */
  inUse(domain: string): number
  /** Requests of the domain waiting for a free channel now (their wait_ms: channel-wait.ts). */
  waiting(domain: string): number
  /** The waits' figures for the metrics. */
  waitFigures(): WaitFigures
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
  /** Requests the API was told are placed, once each, as they are (ticketing, recording). */
  onAccepted(listener: (a: RequestAccepted) => void): () => void
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
  const clock = deps.clock ?? systemClock
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
    now: () => clock.now(),
  })
  const waits = new ChannelWaits(clock)
  const unfollowLimit = channels.onChange((c) => {
    limiter.channelChanged(c.channel)
    // A channel that ended may be what the domain's oldest waiter waits for.
    if (c.channel.domain !== undefined && c.channel.state === 'hangup') waits.poke(c.channel.domain)
  })
  const stopLimitSweep = clock.every(LIMIT_SWEEP_MS, () => limiter.sweep())
  const cancel = createLegCanceller(pbx, commandTimeoutMs, log)
  // FreeSWITCH records each leg's fate in mod_hash, read back when the daemon was away (recovery.ts).
  const records = createLegRecords({
    pbx,
    channels,
    commandTimeoutMs,
    clock,
    inFlight: (id) => requests.has(id) || recovery.has(id),
  })
  const recovery = createRecovery({ pbx, channels, records, requests, cancel, clock, logger: log.child({ part: 'recovery' }), graceMs })
  // Originate legs per second: as configured, else below FreeSWITCH's own rate read at each connection (pace.ts).
  const sessionRate = watchSessionRate(pbx, commandTimeoutMs, log)
  const pace = createPace({
    clock,
    timeScale,
    limit: () => runtime().config.daemon.freeswitch.max_originates_per_second ?? paceBelow(sessionRate.current() ?? VANILLA_SESSIONS_PER_SECOND),
  })
  const attempts = createAttempts({ pbx, channels, cancel, runtime, clock, logger: log, commandTimeoutMs, graceMs, timeScale, records, pace })
  const lookupContacts = createContactLookup(pbx, commandTimeoutMs, log)
  const services: RequestServices = {
    limiter,
    waits,
    clock,
    attempts,
    cancel,
    ledger: requests,
    runtime,
    ...(deps.sharedLimit !== undefined ? { shared: deps.sharedLimit } : {}),
    ...(deps.intents !== undefined ? { intents: deps.intents } : {}),
  }
  const groups = createGroupCalls({ lookupContacts, logger: log, clock, huntConcurrency: deps.huntConcurrency, timeScale })

  const originate = (plan: OriginationPlan, opts: OriginateOptions = {}): Promise<Result<OriginationAccepted, OriginationRefusal>> => {
    const admitted = admit(plan, {
      closed,
      connected: pbx.isConnected(),
      inFlight: (id) => requests.has(id),
      directory: () => runtime().directory,
    })
    if (!admitted.ok) return Promise.resolve(err(admitted.error))
    const dom = admitted.value
    const req = new OriginationRequest(plan, dom, services, opts.clientGone)
    requests.add(req)
    // Looked up while the originating legs are: each placement awaits it just before it reserves.
    const slots = destinationSlots(plan.destination, dom, lookupContacts)
    const o = plan.originator
    const placing =
      o.kind === 'user'
        ? callUser(req, dom, o.user, o.autoAnswer, lookupContacts, slots)
        : o.kind === 'pstn'
          ? callPstn(req, dom, o.number, slots)
          : o.strategy === 'ring_all'
            ? ringAll(req, dom, o.members, lookupContacts, slots)
            : groups.call(req, dom, o.members, o.memberAnswerTimeoutSec, slots)
    placing.catch((e: unknown) => {
      log.error({ err: e, requestId: plan.requestId }, 'placing the request failed')
      req.withdraw({ reason: 'internal', description: 'placing the request failed' })
    })
    return req.reply
  }

  log.debug({ sipProfile: deps.sipProfile, huntConcurrency: deps.huntConcurrency }, 'origination engine ready')
  // Channels live before we started count once the channel model has re-read them (it does at every connection).

  return {
    originate,
    inUse: (domain) => limiter.inUse(domain),
    waiting: (domain) => waits.waiting(domain),
    waitFigures: () => ({ ...waits.figures(), pacedNow: pace.waiting() }),
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
    onAccepted: (listener) => requests.onAccepted(listener),
    onOutcome: (listener) => requests.onOutcome(listener),
    recover: (open, intents) => (closed ? Promise.resolve({ fromRecords: 0, adopted: 0, unknown: 0 }) : recovery.recover(open, intents)),
    async close() {
      if (closed) return
      closed = true
      unfollowLimit()
      stopLimitSweep()
      // Calls still ringing are cancelled, and reported so: every accepted request gets its result;
      // requests that rang nothing yet (a hunt waiting in its queue) are refused.
      for (const req of requests.inFlight()) req.stop()
      waits.close()
      await Promise.race([groups.idle(), delay(clock, 2000)])
      for (const req of requests.inFlight()) req.settle({ answered: false, cause: 'ORIGINATOR_CANCEL' })
      recovery.stop()
      recovery.close()
      records.close()
      sessionRate.stop()
      attempts.close()
      requests.close()
    },
  }
}

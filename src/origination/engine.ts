/**
 * The origination engine: turns an OriginationPlan into FreeSWITCH originates and reports
 * exactly one result per accepted request (docs/engine.md has the whole story).
 *
 * - UUIDs are generated before the originate, one per leg, each leg carrying its own
 *   `[origination_uuid=...]`; the reply lists them (DESIGN.md "Origination semantics").
 * - call_user: `sofia_contact` (every profile, `*` then `/<user>@<domain>`) gives the user's terminals; one leg per
 *   terminal, all in ONE originate (`,`), so FreeSWITCH rings them together and hangs up the
 *   losers (LOSE_RACE, capture 17). call_external / initiate_call PSTN: one gateway leg.
 *   call_group: hunt.ts, one member's terminals per originate, in a per-domain queue.
 * - The answered leg runs `cod_route XML <domain>`: the daemon's dialplan (xml_curl) connects
 *   it to the destination described by the cod_dest_* variables.
 * - The reply is given once FreeSWITCH accepted the bgapi (command/reply `+OK Job-UUID`); the
 *   outcome comes from the BACKGROUND_JOB: `+OK <uuid>` names the winner (a losing leg may
 *   answer too, capture 17), `-ERR <CAUSE>` the failure (outcome.ts maps causes to ids).
 * - When the job's result is lost (ESL drop, or esl-lite re-sending the originate after a
 *   reconnect, which FreeSWITCH refuses with DESTINATION_OUT_OF_ORDER, capture 23), the outcome
 *   is read from the legs' channel events and a re-read of the live channels instead.
 * - A watchdog per originate ends any attempt FreeSWITCH never reported on, so every accepted
 *   request gets its one result.
 */
import { performance } from 'node:perf_hooks'
import { randomUUID } from 'node:crypto'
import PQueue from 'p-queue'
import type { ApiError } from '../api/errors.js'
import { apiError } from '../api/errors.js'
import type { Runtime } from '../runtime/store.js'
import type { DomainDirectory, User } from '../directory/directory.js'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import * as commands from '../pbx/commands.js'
import { parseJobBody, parseSofiaContacts } from '../pbx/replies.js'
import { submitJob } from '../pbx/submit.js'
import type { PbxClient, PbxError } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { ChannelLimiter } from './channel-limit.js'
import { runHunt, type HuntMember } from './hunt.js'
import { isCancelCause, resultOf, type AttemptOutcome, type CallbackSink, type CallResult } from './outcome.js'
import type { OriginationAccepted, OriginationEngine, OriginationPlan } from './plan.js'
import { createTracker, type CallTracker, type ChannelChange } from './tracker.js'
import { buildOriginate, groupOf, type LegPlan } from './originate-spec.js'

export interface EngineDeps {
  readonly pbx: PbxClient
  readonly runtime: () => Runtime
  readonly callbacks: CallbackSink
  readonly logger: Logger
  /**
   * SIP profile of the daemon's users (config freeswitch.sip_profile). Contacts are looked up in
   * every profile (`*`), as DESIGN.md says, so it is only logged; gateway legs do not need it.
   */
  readonly sipProfile: string
  /** Hunts running at once per domain (p-queue concurrency). */
  readonly huntConcurrency: number
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

/** A request's final result, as delivered to its callback (also when it has no callback_url). */
export interface RequestOutcome {
  readonly requestId: string
  readonly domain: string
  readonly operation: OriginationPlan['operation']
  readonly result: CallResult
}

export interface Engine extends OriginationEngine {
  readonly tracker: CallTracker
  /** Channels in use for the limit: live channels plus reservations. */
  inUse(domain: string): number
  /** Results of accepted requests, once each (CTI may listen). */
  onOutcome(listener: (o: RequestOutcome) => void): () => void
  close(): Promise<void>
}

interface LegState {
  created: boolean
  live: boolean
  answered: boolean
  cause: string | undefined
}

interface RequestState {
  readonly plan: OriginationPlan
  /** The domain as configured (channel variables, dialplan context). */
  readonly domainName: string
  /** Lower case: the key of counts and queues. */
  readonly domain: string
  /** The API was told the request is placed: only then is a result reported. */
  accepted: boolean
  settled: boolean
  stopped: boolean
  attempt: Attempt | undefined
}

interface Attempt {
  readonly req: RequestState
  readonly uuids: readonly string[]
  readonly legs: Map<string, LegState>
  /** 'job': waiting for BACKGROUND_JOB; 'channels': the job result is lost, channel state decides. */
  mode: 'job' | 'channels'
  lostAt: number
  /** A resynchronisation that began after the loss has completed. */
  synced: boolean
  fallbackCause: string | undefined
  done: boolean
  resolve: (o: AttemptOutcome) => void
  timer: NodeJS.Timeout | undefined
  hardDeadline: number
}

const pbxApiError = (e: PbxError, what: string): ApiError =>
  e.kind === 'failed'
    ? apiError('internal_error', `FreeSWITCH refused ${what}: ${e.reply}`)
    : apiError('pbx_unavailable', `FreeSWITCH did not answer ${what} (${e.kind})`)

/** How long a settled leg's uuid is remembered, to cancel it should FreeSWITCH still create it. */
const RETIRED_TTL_MS = 10 * 60 * 1000

export function createEngine(deps: EngineDeps): Engine {
  const { pbx, logger: log } = deps
  const commandTimeoutMs = deps.commandTimeoutMs ?? 5000
  const graceMs = deps.graceMs ?? 15000
  const timeScale = deps.timeScale ?? 1
  const fsMs = (sec: number) => sec * 1000 * timeScale

  const tracker = createTracker({ pbx, logger: log.child({ module: 'tracker' }), commandTimeoutMs })
  const limiter = new ChannelLimiter((d) => tracker.liveChannelCount(d))
  const requests = new Map<string, RequestState>()
  const attemptOf = new Map<string, Attempt>()
  const retired = new Map<string, { winner: boolean; at: number }>()
  const queues = new Map<string, PQueue>()
  const outcomeListeners = new Set<(o: RequestOutcome) => void>()
  /** Hunts admitted but waiting in their queue: resolved with an error if the engine closes first. */
  const waitingHunts = new Set<(r: Result<void, ApiError>) => void>()
  let closed = false

  // ---- helpers -------------------------------------------------------------------------

  const kill = (uuid: string, cause = 'ORIGINATOR_CANCEL') => {
    const cmd = commands.uuidKill(uuid, cause)
    if (!cmd.ok || !pbx.isConnected()) return
    void pbx.bgapi(cmd.value, commandTimeoutMs).then((r) => {
      if (!r.ok) log.warn({ uuid, error: r.error }, 'uuid_kill failed')
    })
  }

  const retire = (uuid: string, winner: boolean) => {
    const now = performance.now()
    retired.delete(uuid) // re-inserted at the end, so that the oldest entries come first
    retired.set(uuid, { winner, at: now })
    for (const [u, r] of retired) {
      if (now - r.at < RETIRED_TTL_MS) break
      retired.delete(u)
    }
  }

  const lookupContacts = async (user: string, domain: string): Promise<Result<string[], ApiError>> => {
    const cmd = commands.sofiaContact(user, domain, '*')
    if (!cmd.ok) return err(apiError('internal_error', `cannot look up the terminals of ${user}: ${cmd.error.reason}`))
    const r = await pbx.bgapi(cmd.value, commandTimeoutMs)
    if (!r.ok) return err(pbxApiError(r.error, 'sofia_contact'))
    const parsed = parseSofiaContacts(r.value)
    if (parsed.kind === 'not_registered') return ok([])
    if (parsed.refused.length > 0) log.warn({ user, domain, refused: parsed.refused }, 'contacts outside the safe alphabet are not dialled')
    return ok([...new Set(parsed.contacts)].slice(0, 64))
  }

  // ---- attempts: one originate each ----------------------------------------------------

  const pickCause = (a: Attempt): string => {
    const causes = [...a.legs.values()].map((l) => l.cause).filter((c): c is string => c !== undefined)
    return causes.find((c) => !isCancelCause(c)) ?? a.fallbackCause ?? causes[0] ?? 'UNKNOWN'
  }

  const finish = (a: Attempt, outcome: AttemptOutcome) => {
    if (a.done) return
    a.done = true
    clearTimeout(a.timer)
    for (const u of a.uuids) {
      attemptOf.delete(u)
      limiter.release(u)
      const winner = outcome.answered && outcome.uuid === u
      retire(u, winner)
      if (winner) continue
      const ch = tracker.get(u)
      // The losers of a fork are hung up by FreeSWITCH (LOSE_RACE); make sure of it.
      if (ch !== undefined && ch.state !== 'hangup') kill(u)
    }
    log.debug({ requestId: a.req.plan.requestId, outcome }, 'originate ended')
    a.resolve(outcome)
  }

  /** Decides from channel state alone (the job result is lost). */
  const evaluate = (a: Attempt) => {
    if (a.done || a.mode !== 'channels' || !a.synced) return
    const legs = [...a.legs.entries()]
    const liveAnswered = legs.filter(([, l]) => l.live && l.answered)
    const liveRinging = legs.filter(([, l]) => l.live && !l.answered)
    const only = liveAnswered[0]
    // FreeSWITCH hangs up the other legs as soon as one answers: wait until it has.
    if (liveAnswered.length === 1 && liveRinging.length === 0 && only !== undefined) {
      finish(a, { answered: true, uuid: only[0] })
      return
    }
    if (liveAnswered.length > 0 || liveRinging.length > 0) return
    const ended = legs.find(([, l]) => l.answered && !isCancelCause(l.cause ?? ''))
    if (ended !== undefined) finish(a, { answered: true, uuid: ended[0] })
    else finish(a, { answered: false, cause: pickCause(a) })
  }

  const lose = (a: Attempt, fallbackCause: string | undefined) => {
    if (a.done) return
    log.warn({ requestId: a.req.plan.requestId, fallbackCause }, 'originate result lost: reading the outcome from channel state')
    a.mode = 'channels'
    a.lostAt = performance.now()
    a.synced = false
    a.fallbackCause = fallbackCause
    // Connected: re-read now. Otherwise the reconnection triggers the re-read (tracker).
    if (pbx.isConnected()) void tracker.resync()
  }

  const onJob = (a: Attempt, r: Result<string, PbxError>) => {
    if (a.done) return
    if (!r.ok) {
      lose(a, undefined)
      return
    }
    const body = parseJobBody(r.value)
    if (body.ok) {
      const named = body.text.split(/\s+/)[0] ?? ''
      const uuid = a.legs.has(named) ? named : ([...a.legs.entries()].find(([, l]) => l.answered)?.[0] ?? named)
      finish(a, { answered: true, uuid })
      return
    }
    // A re-sent originate (after a reconnect) is refused because its legs exist already.
    if (body.reason === 'DESTINATION_OUT_OF_ORDER') {
      lose(a, body.reason)
      return
    }
    finish(a, { answered: false, cause: body.reason.split(/\s+/)[0] ?? 'UNKNOWN' })
  }

  const watchdog = (a: Attempt) => {
    if (a.done) return
    if (performance.now() > a.hardDeadline) {
      log.error({ requestId: a.req.plan.requestId }, 'FreeSWITCH never reported on this originate: ending it')
      for (const u of a.uuids) if (a.legs.get(u)?.live === true) kill(u)
      finish(a, { answered: false, cause: pickCause(a) })
      return
    }
    a.timer = setTimeout(() => watchdog(a), graceMs)
    if (!pbx.isConnected()) return
    if (a.mode === 'job') lose(a, undefined)
    else void tracker.resync()
    // Legs still ringing this long after their originate_timeout: FreeSWITCH should have ended them.
    for (const [u, l] of a.legs) if (l.live && !l.answered) kill(u)
  }

  const onChannel = (ch: ChannelChange) => {
    const uuid = ch.channel.uuid
    const a = attemptOf.get(uuid)
    if (a === undefined) {
      const r = retired.get(uuid)
      // A leg of an attempt already over (e.g. an originate esl-lite sent after we gave up on it).
      if (r !== undefined && !r.winner && ch.channel.state !== 'hangup' && (ch.kind === 'created' || ch.kind === 'answered')) {
        kill(uuid)
      }
      return
    }
    const leg = a.legs.get(uuid)
    if (leg === undefined) return
    switch (ch.kind) {
      case 'created':
        leg.created = true
        leg.live = ch.channel.state !== 'hangup'
        leg.answered ||= ch.channel.answered
        limiter.release(uuid)
        break
      case 'answered':
        leg.created = true
        leg.live = ch.channel.state !== 'hangup'
        leg.answered = true
        break
      case 'hangup':
      case 'destroyed':
        leg.live = false
        leg.cause = ch.channel.hangupCause ?? leg.cause
        limiter.release(uuid)
        break
      default:
        return
    }
    evaluate(a)
  }

  const unsubChannel = tracker.onChange(onChannel)
  const unsubResync = tracker.onResynced((startedAt) => {
    for (const a of new Set(attemptOf.values())) {
      if (a.mode === 'channels' && a.lostAt <= startedAt) {
        a.synced = true
        evaluate(a)
      }
    }
  })

  /**
   * Places one originate (the legs are reserved already). Resolves once FreeSWITCH accepted it,
   * with the promise of its outcome.
   */
  const startAttempt = async (
    req: RequestState,
    legs: readonly LegPlan[],
    timeoutSec: number,
  ): Promise<Result<Promise<AttemptOutcome>, ApiError>> => {
    const uuids = legs.map((l) => l.uuid)
    const cmd = buildOriginate(req.plan, req.domainName, deps.runtime().directory.domain(req.plan.domain), legs, timeoutSec)
    if (!cmd.ok) {
      limiter.release(...uuids)
      log.error({ requestId: req.plan.requestId, problem: cmd.error }, 'originate refused by the command builder')
      return err(apiError('internal_error', `cannot build the originate: ${cmd.error.field} ${cmd.error.reason}`))
    }
    let resolve!: (o: AttemptOutcome) => void
    const outcome = new Promise<AttemptOutcome>((r) => (resolve = r))
    const a: Attempt = {
      req,
      uuids,
      legs: new Map(uuids.map((u) => [u, { created: false, live: false, answered: false, cause: undefined }])),
      mode: 'job',
      lostAt: 0,
      synced: false,
      fallbackCause: undefined,
      done: false,
      resolve,
      timer: undefined,
      hardDeadline: performance.now() + fsMs(timeoutSec) + 5 * graceMs,
    }
    for (const u of uuids) attemptOf.set(u, a)
    req.attempt = a
    const sub = await submitJob(pbx, cmd.value, {
      acceptTimeoutMs: commandTimeoutMs,
      resultTimeoutMs: fsMs(timeoutSec) + graceMs,
    })
    if (!sub.ok) {
      a.done = true
      for (const u of uuids) {
        attemptOf.delete(u)
        limiter.release(u)
        // esl-lite may still send it later: whatever it creates is cancelled (onChannel).
        retire(u, false)
      }
      log.warn({ requestId: req.plan.requestId, error: sub.error }, 'originate not accepted')
      return err(pbxApiError(sub.error, 'the originate'))
    }
    // Already ended (the engine closed while FreeSWITCH was accepting it): nothing to watch.
    if (a.done) return ok(outcome)
    a.timer = setTimeout(() => watchdog(a), fsMs(timeoutSec) + graceMs)
    void sub.value.result.then((r) => onJob(a, r))
    return ok(outcome)
  }

  // ---- requests ---------------------------------------------------------------------------

  const settle = (req: RequestState, outcome: AttemptOutcome) => {
    if (req.settled) return
    req.settled = true
    requests.delete(req.plan.requestId)
    // The API answered this request with an error (e.g. the daemon stopped first): no result.
    if (!req.accepted) return
    const result = resultOf(outcome)
    const o: RequestOutcome = { requestId: req.plan.requestId, domain: req.plan.domain, operation: req.plan.operation, result }
    log.info({ requestId: o.requestId, domain: o.domain, result }, 'origination result')
    for (const l of [...outcomeListeners]) {
      try {
        l(o)
      } catch (e) {
        log.error({ err: e }, 'outcome listener failed')
      }
    }
    if (req.plan.callbackUrl !== undefined) {
      deps.callbacks.deliver(req.plan.domain, req.plan.callbackUrl, result, { requestId: req.plan.requestId })
    }
  }

  const newRequest = (plan: OriginationPlan, dom: DomainDirectory): RequestState => {
    const req: RequestState = {
      plan,
      domainName: dom.name,
      domain: dom.name.toLowerCase(),
      accepted: false,
      settled: false,
      stopped: false,
      attempt: undefined,
    }
    requests.set(plan.requestId, req)
    return req
  }

  const queueOf = (domain: string): PQueue => {
    let q = queues.get(domain)
    if (q === undefined) {
      q = new PQueue({ concurrency: Math.max(1, deps.huntConcurrency) })
      queues.set(domain, q)
    }
    return q
  }

  const limitReached = (domain: string, limit: number, needed: number): ApiError =>
    apiError(
      'channel_limit_reached',
      `domain ${domain} would exceed its channel_limit of ${limit} (${limiter.inUse(domain)} in use, ${needed} needed)`,
    )

  /** One originate whose outcome is the request's result (call_user, call_external, initiate_call). */
  const single = async (
    plan: OriginationPlan,
    dom: DomainDirectory,
    legs: readonly LegPlan[],
  ): Promise<Result<OriginationAccepted, ApiError>> => {
    const uuids = legs.map((l) => l.uuid)
    if (!limiter.tryReserve(plan.domain, dom.config.channel_limit, uuids)) {
      return err(limitReached(plan.domain, dom.config.channel_limit, uuids.length))
    }
    const req = newRequest(plan, dom)
    const started = await startAttempt(req, legs, plan.answerTimeoutSec)
    if (!started.ok) {
      requests.delete(plan.requestId)
      return started
    }
    if (req.settled) {
      // The engine closed while FreeSWITCH was accepting it; its legs are being cancelled.
      return err(apiError('pbx_unavailable', 'the daemon is stopping'))
    }
    req.accepted = true
    void started.value.then((o) => settle(req, o))
    return ok({ uuids })
  }

  const callUser = async (plan: OriginationPlan, dom: DomainDirectory, user: User, autoAnswer: boolean) => {
    const contacts = await lookupContacts(user.name, dom.name)
    if (!contacts.ok) return contacts
    if (contacts.value.length === 0) {
      return err(apiError('user_not_registered', `user ${user.name} has no registered SIP terminal`))
    }
    const legs = contacts.value.map<LegPlan>((contact) => ({
      uuid: randomUUID(),
      endpoint: { kind: 'contact', contact },
      userId: user.id,
      autoAnswer,
    }))
    return single(plan, dom, legs)
  }

  const callPstn = (plan: OriginationPlan, dom: DomainDirectory, number: string) =>
    single(plan, dom, [{ uuid: randomUUID(), endpoint: { kind: 'gateway', gateway: dom.config.gateway, number } }])

  const callGroup = async (
    plan: OriginationPlan,
    dom: DomainDirectory,
    members: readonly User[],
    memberAnswerTimeoutSec: number,
  ): Promise<Result<OriginationAccepted, ApiError>> => {
    // Every member's terminals first: the reply lists every leg the hunt may create, in order.
    const looked = await Promise.all(members.map((m) => lookupContacts(m.name, dom.name)))
    const failed = looked.find((r) => !r.ok)
    if (failed !== undefined && !failed.ok) return failed
    const hunt: HuntMember[] = []
    members.forEach((m, i) => {
      const r = looked[i]
      const contacts = r !== undefined && r.ok ? r.value : []
      if (contacts.length > 0) hunt.push({ userId: m.id, userName: m.name, contacts, uuids: contacts.map(() => randomUUID()) })
    })
    const first = hunt[0]
    if (first === undefined) {
      return err(apiError('no_member_available', `no member of group ${groupOf(plan)?.name ?? ''} has a registered SIP terminal`))
    }
    if (!limiter.tryReserve(plan.domain, dom.config.channel_limit, first.uuids)) {
      return err(limitReached(plan.domain, dom.config.channel_limit, first.uuids.length))
    }
    const req = newRequest(plan, dom)
    let started = performance.now()
    let accept!: (r: Result<void, ApiError>) => void
    const accepted = new Promise<Result<void, ApiError>>((r) => (accept = r))
    let answered = false
    const acceptOnce = (r: Result<void, ApiError>) => {
      if (answered) return
      answered = true
      req.accepted = r.ok
      waitingHunts.delete(acceptOnce)
      accept(r)
    }
    waitingHunts.add(acceptOnce)
    const task = () => {
      if (closed) {
        limiter.release(...first.uuids)
        acceptOnce(err(apiError('pbx_unavailable', 'the daemon is stopping')))
        return Promise.resolve()
      }
      // answer_timeout counts from the first ring, not from the wait in the queue.
      started = performance.now()
      return runHunt(
        hunt,
        { answerTimeoutSec: plan.answerTimeoutSec, memberAnswerTimeoutSec },
        {
          lookup: async (m) => {
            const r = await lookupContacts(m.userName, dom.name)
            return r.ok ? r.value : undefined
          },
          reserve: (uuids) => limiter.tryReserve(plan.domain, deps.runtime().directory.domain(plan.domain)?.config.channel_limit ?? 0, uuids),
          release: (uuids) => limiter.release(...uuids),
          start: (m, legs, timeoutSec) =>
            startAttempt(
              req,
              legs.map((l) => ({ uuid: l.uuid, endpoint: { kind: 'contact', contact: l.contact }, userId: m.userId })),
              timeoutSec,
            ),
          elapsedSec: () => (performance.now() - started) / 1000 / timeScale,
          stopped: () => closed || req.stopped,
        },
        acceptOnce,
      ).then((r) => {
        if (r.reported) settle(req, r.outcome)
        else requests.delete(plan.requestId)
      })
    }
    queueOf(req.domain)
      .add(task)
      .catch((e: unknown) => {
        log.error({ err: e, requestId: plan.requestId }, 'hunt failed')
        acceptOnce(err(apiError('internal_error', 'the hunt failed')))
        settle(req, { answered: false, cause: 'UNKNOWN' })
      })
    const acc = await accepted
    if (!acc.ok) {
      requests.delete(plan.requestId)
      return acc
    }
    return ok({ uuids: hunt.flatMap((m) => m.uuids) })
  }

  // ---- the engine ---------------------------------------------------------------------------

  const originate = async (plan: OriginationPlan): Promise<Result<OriginationAccepted, ApiError>> => {
    if (closed) return err(apiError('pbx_unavailable', 'the daemon is stopping'))
    if (!pbx.isConnected()) return err(apiError('pbx_unavailable', 'FreeSWITCH is not connected'))
    if (requests.has(plan.requestId)) return err(apiError('internal_error', `request id ${plan.requestId} is already in use`))
    const dom = deps.runtime().directory.domain(plan.domain)
    if (dom === undefined) return err(apiError('internal_error', `unknown domain ${plan.domain}`))
    const o = plan.originator
    switch (o.kind) {
      case 'user':
        return callUser(plan, dom, o.user, o.autoAnswer)
      case 'pstn':
        return callPstn(plan, dom, o.number)
      case 'group':
        return callGroup(plan, dom, o.members, o.memberAnswerTimeoutSec)
    }
  }

  log.debug({ sipProfile: deps.sipProfile, huntConcurrency: deps.huntConcurrency }, 'origination engine ready')
  // Channels live before we started (or before a reconnection) count from the first sync on.
  if (pbx.isConnected()) void tracker.resync()

  return {
    originate,
    tracker,
    inUse: (domain) => limiter.inUse(domain),
    onOutcome(listener) {
      outcomeListeners.add(listener)
      return () => outcomeListeners.delete(listener)
    },
    async close() {
      if (closed) return
      closed = true
      for (const acceptWaiting of [...waitingHunts]) acceptWaiting(err(apiError('pbx_unavailable', 'the daemon is stopping')))
      // Calls still ringing are cancelled, and reported so: every accepted request gets its result.
      for (const req of [...requests.values()]) {
        req.stopped = true
        const a = req.attempt
        // finish() cancels the legs we know; hupall also those FreeSWITCH is creating right now.
        if (a !== undefined && !a.done) finish(a, { answered: false, cause: 'ORIGINATOR_CANCEL' })
        const hup = commands.hupall('ORIGINATOR_CANCEL', CHANNEL_VARS.requestId, req.plan.requestId)
        if (hup.ok && pbx.isConnected()) void pbx.bgapi(hup.value, commandTimeoutMs)
      }
      await Promise.race([
        Promise.all([...queues.values()].map((q) => q.onIdle())),
        new Promise((r) => setTimeout(r, 2000).unref()),
      ])
      for (const req of [...requests.values()]) settle(req, { answered: false, cause: 'ORIGINATOR_CANCEL' })
      unsubChannel()
      unsubResync()
      tracker.close()
      outcomeListeners.clear()
    },
  }
}

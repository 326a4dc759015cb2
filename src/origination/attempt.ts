/**
 * One originate (an "attempt"): all its legs rung together, each with its pre-assigned
 * `[origination_uuid=...]`; it ends with exactly one AttemptOutcome.
 *
 * - Placed with bgapi: start() resolves once FreeSWITCH accepted it (command/reply
 *   `+OK Job-UUID`), or once it was written and its acceptance never came (the link died or
 *   froze: it may run, so it is placed, never refused), with the promise of its outcome. A
 *   refusal means FreeSWITCH never saw the originate (docs/design.md "An error reply means no
 *   call"; src/pbx/outgoing.ts).
 * - The outcome comes from the BACKGROUND_JOB (leg-outcome.ts). When the job's result is lost
 *   (ESL drop, or an originate written twice, which FreeSWITCH refuses
 *   with DESTINATION_OUT_OF_ORDER, test/fixtures/freeswitch/esl/23-duplicate-origination-uuid.txt),
 *   it is read from the legs' channel events and a re-read of the live channels instead
 *   (leg-watch.ts); legs that ended while the link was down, from their own records in
 *   FreeSWITCH (leg-records.ts).
 * - A watchdog per originate ends any attempt FreeSWITCH never reported on.
 * - Before it is written it waits for its turn under the box's pace (pace.ts: FreeSWITCH's
 *   session rate, each leg one session); refused when its turn does not come in time.
 * - Once over, its legs' channel reservations are released and its losers hung up.
 */
import type { ChannelModel } from '../channels/index.js'
import type { Runtime } from '../runtime/store.js'
import { submitJob } from '../pbx/submit.js'
import type { PbxClient, PbxError } from '../pbx/types.js'
import type { Clock } from '../util/clock.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import type { LegCanceller } from './cancel.js'
import { applyLegEvent, failedOrUnknown, newLegState, outcomeFromChannels, verdictOfJob, type LegEvent, type LegState } from './leg-outcome.js'
import { applyRecord, type LegRecords } from './leg-records.js'
import { createLegWatch } from './leg-watch.js'
import { buildOriginate, type LegPlan } from './originate-spec.js'
import type { AttemptOutcome } from './outcome.js'
import { DEFAULT_PACE_WAIT_MS, type Pace, type PaceTurn } from './pace.js'
import type { OriginationPlan } from './plan.js'
import { pbxRefusal, refusal, STOPPING, type OriginationRefusal } from './refusal.js'

/** How the outcome is being read: from the BACKGROUND_JOB, or (its result lost) from channel state. */
type Watching =
  | { readonly mode: 'job' }
  | {
      readonly mode: 'channels'
      /** When the job result was given up (Clock.now()): only a re-read begun after it counts. */
      readonly lostAt: number
      /** A re-read of the live channels that began after the loss has completed. */
      synced: boolean
      /** The job's own cause, when it said something (DESTINATION_OUT_OF_ORDER). */
      readonly fallbackCause: string | undefined
    }

/** An originate in flight. Only this module changes it. */
export interface Attempt {
  readonly owner: AttemptOwner
  readonly uuids: readonly string[]
  readonly legs: Map<string, LegState>
  watching: Watching
  done: boolean
  readonly resolve: (o: AttemptOutcome) => void
  /** Cancels the watchdog's next turn. */
  stopWatchdog: (() => void) | undefined
  /** After this (Clock.now()), the watchdog ends the attempt whatever is known. */
  readonly hardDeadline: number
}

/** The end of an originate FreeSWITCH accepted: how it ended, once. */
export type AttemptEnd = Promise<AttemptOutcome>

/**
 * The request an attempt is made for (request.ts OriginationRequest): it owns the legs'
 * reservations and keeps its current attempt, so that closing can end it.
 */
export interface AttemptOwner {
  readonly plan: OriginationPlan
  /** The domain as configured (channel variables, dialplan context). */
  readonly domainName: string
  /** The engine is closing: nothing more may be written for it (checked after a wait for the pace). */
  readonly stopping: boolean
  /** Signalled when the request is abandoned (its client went away before the reply, or the engine stops): a wait for the pace ends. */
  readonly abandoned: AbortSignal
  /** These legs count no more as reserved (created, ended, or never placed). */
  releaseLegs(uuids: readonly string[]): void
  /** This originate is ringing for it from now on. */
  attemptBegan(a: Attempt): void
}

export interface AttemptDeps {
  readonly pbx: PbxClient
  readonly channels: ChannelModel
  readonly cancel: LegCanceller
  readonly runtime: () => Runtime
  readonly logger: Logger
  readonly commandTimeoutMs: number
  /** How long after an originate's own timeout the watchdog steps in. */
  readonly graceMs: number
  /** Real seconds per FreeSWITCH second. */
  readonly timeScale: number
  readonly clock: Clock
  /** The legs' own records in FreeSWITCH, for legs that ended while the link was down. */
  readonly records?: Pick<LegRecords, 'read'>
  /** The box's pace of originate legs (pace.ts), closed with the attempts; without it originates are written at once. */
  readonly pace?: Pace
}

export interface Attempts {
  /**
   * Places one originate (its legs are reserved already). Resolves once FreeSWITCH accepted
   * it, with its end; refused, its reservations are released.
   */
  start(owner: AttemptOwner, legs: readonly LegPlan[], timeoutSec: number): Promise<Result<AttemptEnd, OriginationRefusal>>
  /** Ends the attempt as cancelled (the engine is closing); nothing if it is over already. */
  cancel(a: Attempt): void
  close(): void
}

export function createAttempts(deps: AttemptDeps): Attempts {
  const { pbx, cancel, clock, logger: log, graceMs } = deps
  const fsMs = (sec: number) => sec * 1000 * deps.timeScale

  const fallbackOf = (a: Attempt) => (a.watching.mode === 'channels' ? a.watching.fallbackCause : undefined)

  const finish = (a: Attempt, outcome: AttemptOutcome) => {
    if (a.done) return
    a.done = true
    a.stopWatchdog?.()
    for (const u of a.uuids) {
      a.owner.releaseLegs([u])
      const winner = outcome.answered && outcome.uuid === u
      watch.retire(u, winner)
      // The losers of a fork are hung up by FreeSWITCH (LOSE_RACE); make sure of it.
      if (!winner && watch.isLive(u)) cancel.kill(u)
    }
    log.debug({ requestId: a.owner.plan.requestId, outcome }, 'originate ended')
    a.resolve(outcome)
  }

  /** Decides from channel state alone, once the job result is lost and the channels re-read. */
  const evaluate = (a: Attempt) => {
    if (a.done || a.watching.mode !== 'channels' || !a.watching.synced) return
    const outcome = outcomeFromChannels(a.legs, a.watching.fallbackCause)
    if (outcome === undefined) return
    // Legs that ended while the link was down ended unheard: their own records tell how (leg-records.ts).
    const unheard = outcome.answered ? [] : [...a.legs].filter(([, l]) => !l.live && l.cause === undefined).map(([u]) => u)
    const records = deps.records
    if (unheard.length === 0 || records === undefined || readingRecords.has(a)) return finish(a, outcome)
    readingRecords.add(a)
    void records.read(a.owner.domainName, a.owner.plan.requestId, unheard).then((read) => {
      if (a.done) return
      for (const u of unheard) {
        const leg = a.legs.get(u)
        if (leg !== undefined) applyRecord(leg, read.get(u))
      }
      finish(a, outcomeFromChannels(a.legs, fallbackOf(a)) ?? outcome)
    })
  }
  /** Attempts whose unheard legs' records are being read (once per attempt). */
  const readingRecords = new WeakSet<Attempt>()

  const lose = (a: Attempt, fallbackCause: string | undefined) => {
    if (a.done) return
    log.warn({ requestId: a.owner.plan.requestId, fallbackCause }, 'originate result lost: reading the outcome from channel state')
    a.watching = { mode: 'channels', lostAt: clock.now(), synced: false, fallbackCause }
    // Connected: re-read now. Otherwise the reconnection triggers the re-read (the channel model).
    if (pbx.isConnected()) watch.resync()
  }

  const onJob = (a: Attempt, r: Result<string, PbxError>) => {
    if (a.done) return
    const verdict = r.ok ? verdictOfJob(a.legs, r.value) : ({ kind: 'lost', fallbackCause: undefined } as const)
    if (verdict.kind === 'lost') lose(a, verdict.fallbackCause)
    else finish(a, verdict.outcome)
  }

  const watchdog = (a: Attempt) => {
    if (a.done) return
    if (clock.now() > a.hardDeadline) {
      log.error({ requestId: a.owner.plan.requestId }, 'FreeSWITCH never reported on this originate: ending it')
      for (const u of a.uuids) if (a.legs.get(u)?.live === true) cancel.kill(u)
      finish(a, failedOrUnknown(a.legs, fallbackOf(a)))
      return
    }
    a.stopWatchdog = clock.after(graceMs, () => watchdog(a))
    if (!pbx.isConnected()) return
    if (a.watching.mode === 'job') lose(a, undefined)
    else watch.resync()
    // Legs still ringing this long after their originate_timeout: FreeSWITCH should have ended them.
    for (const [u, l] of a.legs) if (l.live && !l.answered) cancel.kill(u)
  }

  const watch = createLegWatch<Attempt>(deps.channels, clock, {
    onLeg(a, uuid, e: LegEvent) {
      const leg = a.legs.get(uuid)
      if (leg === undefined) return
      applyLegEvent(leg, e)
      // Created: it counts as a live channel now. Ended: it counts no more.
      if (e.kind !== 'answered') a.owner.releaseLegs([uuid])
      evaluate(a)
    },
    onResynced(a, startedAt) {
      if (a.watching.mode === 'channels' && a.watching.lostAt <= startedAt) {
        a.watching.synced = true
        evaluate(a)
      }
    },
    cancel: (uuid) => cancel.kill(uuid),
  })

  /**
   * The originate's turn under the pace: bounded by its request's wait_ms, and never shorter than
   * DEFAULT_PACE_WAIT_MS (a request that may not wait for a channel still waits its turn rather
   * than be refused by FreeSWITCH after the API said 200). Past it: `channel_limit_reached`, the
   * refusal a client already retries later (docs/engine.md "Pacing"); nothing was written.
   */
  const takeTurn = async (owner: AttemptOwner, sessions: number): Promise<Result<Extract<PaceTurn, { end: 'go' }> | undefined, OriginationRefusal>> => {
    const { pace } = deps
    if (pace === undefined) return ok(undefined)
    const maxWaitMs = Math.max(owner.plan.waitMs ?? 0, DEFAULT_PACE_WAIT_MS)
    const turn = await pace.take(sessions, maxWaitMs, owner.abandoned)
    if (turn.end === 'go' && owner.stopping) turn.unused()
    // A client that went away while its originate waited for a turn: nothing is placed (as a wait for a channel).
    if (turn.end === 'closed' || turn.end === 'abandoned' || owner.stopping) return err(STOPPING)
    if (turn.end === 'timeout') {
      log.warn({ requestId: owner.plan.requestId, legs: sessions, pace: pace.limit(), waitedMs: maxWaitMs }, 'originate refused: its turn under the session rate did not come in time')
      return err(
        refusal(
          'channel_limit_reached',
          `FreeSWITCH's session rate is used: ${pace.limit()} originate legs per second, and this originate's ${sessions} leg(s) found no turn within ${maxWaitMs} ms`,
        ),
      )
    }
    return ok(turn)
  }

  const start: Attempts['start'] = async (owner, legs, timeoutSec) => {
    const { plan } = owner
    const uuids = legs.map((l) => l.uuid)
    const cmd = buildOriginate(plan, owner.domainName, deps.runtime().directory.domain(plan.domain), legs, timeoutSec)
    if (!cmd.ok) {
      owner.releaseLegs(uuids)
      log.error({ requestId: plan.requestId, problem: cmd.error }, 'originate refused by the command builder')
      return err(refusal('internal', `cannot build the originate: ${cmd.error.field} ${cmd.error.reason}`))
    }
    const paced = await takeTurn(owner, uuids.length)
    if (!paced.ok) {
      owner.releaseLegs(uuids)
      return err(paced.error)
    }
    let resolve!: (o: AttemptOutcome) => void
    const outcome = new Promise<AttemptOutcome>((r) => (resolve = r))
    const a: Attempt = {
      owner,
      uuids,
      legs: new Map(uuids.map((u) => [u, newLegState()])),
      watching: { mode: 'job' },
      done: false,
      resolve,
      stopWatchdog: undefined,
      hardDeadline: clock.now() + fsMs(timeoutSec) + 5 * graceMs,
    }
    for (const u of uuids) watch.watch(u, a)
    owner.attemptBegan(a)
    const sub = await submitJob(pbx, cmd.value, {
      acceptTimeoutMs: deps.commandTimeoutMs,
      resultTimeoutMs: fsMs(timeoutSec) + graceMs,
    })
    // Its legs' start counts from when FreeSWITCH has the originate; refused, it never had it.
    if (sub.ok) paced.value?.written()
    else paced.value?.unused()
    if (!sub.ok) {
      a.done = true
      owner.releaseLegs(uuids)
      for (const u of uuids) {
        // Refused means never written (src/pbx/outgoing.ts); should a leg appear all the same, it is cancelled (leg-watch.ts).
        watch.retire(u, false)
      }
      log.warn({ requestId: plan.requestId, error: sub.error }, 'originate not accepted')
      return err(pbxRefusal(sub.error, 'the originate'))
    }
    // Already ended (the engine closed while FreeSWITCH was accepting it): nothing to watch.
    if (a.done) return ok(outcome)
    a.stopWatchdog = clock.after(fsMs(timeoutSec) + graceMs, () => watchdog(a))
    void sub.value.result.then((r) => onJob(a, r))
    return ok(outcome)
  }

  return {
    start,
    cancel: (a) => finish(a, { answered: false, cause: 'ORIGINATOR_CANCEL' }),
    close: () => {
      deps.pace?.close()
      watch.close()
    },
  }
}

/**
 * Recovery at start (docs/design.md "Recovery"): the requests an earlier run of the daemon
 * accepted (the journal's open requests: a 200 was sent, no result recorded) get their one result
 * now, the true one whenever FreeSWITCH can still tell it, never a guess:
 *
 * - legs of the request still live (the channel model has re-read FreeSWITCH's channels, with
 *   their cod_request_id): the request is ADOPTED: its legs are followed on the channel model
 *   like any attempt's (leg-watch.ts), the channel limit counts them (they are live channels),
 *   an answered leg's dialplan bridges it (Engine.mayBridge holds one leg for a request it did
 *   not admit), and the result comes from what the legs do (leg-outcome.ts);
 * - no leg live: the legs' own records (leg-records.ts: FreeSWITCH wrote the answer and the
 *   hangup cause into mod_hash from the legs' hooks) tell how it ended;
 * - nothing tells: `outcome_unknown` (outcome.ts OUTCOME_UNKNOWN).
 *
 * Intents (journal/types.ts OriginateIntent): a request whose first originate was written but whose
 * reply was never decided (the daemon died in between). Its legs decide: any of them live, or
 * known from its record to have been created, and the request was placed: it becomes accepted
 * (settle(), durable first: the journal's `accepted`, the Idempotency-Key's 200) and is recovered
 * as above. None: it placed nothing (a leg that rang and ended unanswered before its hangup hook
 * was set leaves no record, and is taken for one never placed: no 200 was sent for it either).
 *
 * A hunt (call_group) interrupted by the restart is not continued: the member ringing is
 * adopted, members not yet rung are not placed; the result is what the legs that existed did.
 * Results already recorded in the journal are not this module's: the callback dispatcher
 * re-delivers them itself (same delivery id, same bytes).
 */
import type { ChannelModel } from '../channels/index.js'
import type { PbxClient } from '../pbx/types.js'
import type { Clock } from '../util/clock.js'
import type { Logger } from '../util/logger.js'
import type { LegCanceller } from './cancel.js'
import { applyLegEvent, newLegState, outcomeFromChannels, type LegState } from './leg-outcome.js'
import { applyRecord, type LegRecords } from './leg-records.js'
import { createLegWatch } from './leg-watch.js'
import { isCancelCause, OUTCOME_UNKNOWN, type AttemptOutcome } from './outcome.js'
import type { Operation } from './plan.js'
import type { RecoverableRequest } from './recoverable-request.js'
import type { Requests } from './requests.js'

export type { RecoverableRequest }

/** Intents without a decided reply, and how the daemon records the decision (journal, Idempotency-Key). */
export interface UnsettledIntents {
  readonly intents: readonly RecoverableRequest[]
  /** Resolves once the decision is durable: placed (now an accepted request) or not. */
  settle(r: RecoverableRequest, placed: boolean): Promise<void>
}

/** How the requests of a recovery ended up (logged; tests read it). */
export interface RecoverySummary {
  /** Reported at once from what the legs' records say. */
  readonly fromRecords: number
  /** Legs still live: followed until their outcome is known. */
  readonly adopted: number
  /** Nothing could tell: reported `outcome_unknown`. */
  readonly unknown: number
  /** Intents found placed (then counted above too), and intents that placed nothing. */
  readonly intentsPlaced?: number
  readonly intentsUnplaced?: number
}

export interface Recovery {
  /** Gives every request its result (adopted ones later, when their legs decide); intents first decide whether they were placed. */
  recover(open: readonly RecoverableRequest[], intents?: UnsettledIntents): Promise<RecoverySummary>
  /** An adopted request whose result is not reported yet. */
  has(requestId: string): boolean
  /** The daemon stops: adopted legs still ringing are cancelled and reported so (as the engine does with its own). */
  stop(): void
  close(): void
}

export interface RecoveryDeps {
  readonly pbx: PbxClient
  readonly channels: ChannelModel
  readonly records: LegRecords
  readonly requests: Pick<Requests, 'reportRecovered'>
  readonly cancel: LegCanceller
  readonly logger: Logger
  readonly clock: Clock
  /** After an adopted request's deadline, how long before its ringing legs are ended. */
  readonly graceMs: number
}

/**
 * Logged when a start finds work left by an earlier run (tests look for it).
 * @internal Exported for tests: test/recovery looks for this log line.
 */
export const RECOVERY_STARTS = 'recovery: requests accepted by an earlier run without a result, or originates without a reply'

const OPERATIONS: readonly Operation[] = ['call_user', 'call_group', 'call_external', 'initiate_call']
const isOperation = (op: string): op is Operation => (OPERATIONS as readonly string[]).includes(op)

interface Adopted {
  readonly req: RecoverableRequest
  readonly operation: Operation
  readonly legs: Map<string, LegState>
  done: boolean
  /** Cancels the watchdog's next turn. */
  stopWatchdog: (() => void) | undefined
  /** The watchdog has ended the ringing legs once; the next time it decides whatever is known. */
  killed: boolean
}

/**
 * The outcome of legs none of which is live: an answered leg (not one answered only to lose a
 * race) wins; else a failure with a leg's cause; unknown when no leg was ever seen.
 */
function outcomeOfEndedLegs(legs: ReadonlyMap<string, LegState>): AttemptOutcome {
  const answered = [...legs.entries()].filter(([, l]) => l.answered)
  const winner = answered.find(([, l]) => !isCancelCause(l.cause ?? '')) ?? answered[0]
  if (winner !== undefined) return { answered: true, uuid: winner[0] }
  return outcomeFromChannels(legs, undefined) ?? OUTCOME_UNKNOWN
}

export function createRecovery(deps: RecoveryDeps): Recovery {
  const { pbx, channels, records, requests, cancel, clock, logger: log, graceMs } = deps
  const adopted = new Map<string, Adopted>()
  let closed = false

  const report = (r: RecoverableRequest, operation: Operation, outcome: AttemptOutcome): void => {
    requests.reportRecovered({ requestId: r.requestId, domain: r.domain, operation, callbackUrl: r.callbackUrl }, outcome)
    records.forget(r.domain, r.requestId, r.uuids)
  }

  const finish = (a: Adopted, outcome: AttemptOutcome): void => {
    if (a.done) return
    a.done = true
    a.stopWatchdog?.()
    adopted.delete(a.req.requestId)
    for (const u of a.req.uuids) {
      const winner = outcome.answered && outcome.uuid === u
      watch.retire(u, winner)
    }
    log.info({ requestId: a.req.requestId, outcome }, 'adopted request ended')
    report(a.req, a.operation, outcome)
  }

  /** Decides once no leg rings any more; legs that ended unseen are read from their records first. */
  const evaluate = (a: Adopted): void => {
    if (a.done) return
    const known = outcomeFromChannels(a.legs, undefined)
    if (known === undefined) return
    if (known.answered) return finish(a, known)
    const unexplained = [...a.legs.entries()].filter(([, l]) => !l.live && l.cause === undefined).map(([u]) => u)
    if (unexplained.length === 0) return finish(a, outcomeOfEndedLegs(a.legs))
    void records.read(a.req.domain, a.req.requestId, unexplained).then((read) => {
      if (a.done) return
      for (const u of unexplained) {
        const leg = a.legs.get(u)
        if (leg !== undefined) applyRecord(leg, read.get(u))
      }
      finish(a, outcomeOfEndedLegs(a.legs))
    })
  }

  const watchdog = (a: Adopted): void => {
    if (a.done) return
    const ringing = [...a.legs.entries()].filter(([, l]) => l.live && !l.answered)
    if (ringing.length === 0) return
    if (a.killed) {
      log.error({ requestId: a.req.requestId }, 'adopted legs still ringing after their deadline and a hangup: ending the request')
      for (const [, l] of ringing) l.live = false
      evaluate(a)
      return
    }
    // FreeSWITCH's originate ends them at originate_timeout; this is only in case it did not.
    a.killed = true
    for (const [u] of ringing) cancel.kill(u, 'NO_ANSWER')
    a.stopWatchdog = clock.after(graceMs, () => watchdog(a))
  }

  const watch = createLegWatch<Adopted>(channels, clock, {
    onLeg(a, uuid, e) {
      const leg = a.legs.get(uuid)
      if (leg === undefined) return
      applyLegEvent(leg, e)
      evaluate(a)
    },
    onResynced: (a) => evaluate(a),
    cancel: (uuid) => cancel.kill(uuid),
  })

  /** The channel model has re-read FreeSWITCH's live channels (after this call began). */
  const channelsRead = async (): Promise<void> => {
    const since = clock.now()
    for (;;) {
      if (closed) return
      if (pbx.isConnected()) {
        const r = await channels.resync()
        if (r.ok) return
      }
      // Not connected (or the read failed): the next successful re-read will do.
      const readAgain = await new Promise<boolean>((resolve) => {
        const off = channels.onResynced((startedAt) => {
          if (startedAt < since) return
          off()
          stopWaiting()
          resolve(true)
        })
        const stopWaiting = clock.after(1000, () => {
          off()
          resolve(false)
        })
      })
      if (readAgain) return
    }
  }

  /** What the channel model and the legs' records tell of the request's legs now. */
  const readLegs = async (r: RecoverableRequest): Promise<Map<string, LegState>> => {
    const legs = new Map<string, LegState>()
    for (const u of r.uuids) {
      const leg = newLegState()
      const ch = channels.get(u)
      if (ch !== undefined) {
        leg.created = true
        leg.live = ch.state !== 'hangup'
        leg.answered = ch.answered
        leg.cause = ch.hangupCause
      }
      legs.set(u, leg)
    }
    const notLive = [...legs.entries()].filter(([, l]) => !l.live).map(([u]) => u)
    let read = await records.read(r.domain, r.requestId, notLive)
    // A record FreeSWITCH could not be asked for is not a missing one: ask again once the link is back.
    for (let tries = 0; tries < 5 && !closed && [...read.values()].some((x) => x.kind === 'unread'); tries++) {
      await channelsRead()
      read = await records.read(r.domain, r.requestId, notLive)
    }
    for (const u of notLive) {
      const leg = legs.get(u)
      if (leg !== undefined) applyRecord(leg, read.get(u))
    }
    return legs
  }

  const recoverOne = async (r: RecoverableRequest, known?: Map<string, LegState>): Promise<'records' | 'adopted' | 'unknown'> => {
    // The API journals only its own operation names; a checksummed record cannot say otherwise.
    // Should it, the result is still delivered (never silence), under the name of the commonest.
    const op: Operation = isOperation(r.operation) ? r.operation : 'call_user'
    if (op !== r.operation) log.error({ requestId: r.requestId, operation: r.operation }, 'journaled request names no known operation')
    const legs = known ?? (await readLegs(r))
    const live = [...legs.values()].some((l) => l.live)
    if (!live) {
      const outcome = outcomeOfEndedLegs(legs)
      report(r, op, outcome)
      return outcome.answered === false && outcome.unknown === true ? 'unknown' : 'records'
    }
    const a: Adopted = { req: r, operation: op, legs, done: false, stopWatchdog: undefined, killed: false }
    adopted.set(r.requestId, a)
    for (const u of r.uuids) watch.watch(u, a)
    const wait = Math.max(0, r.answerDeadlineAt - Date.now()) + graceMs
    a.stopWatchdog = clock.after(wait, () => watchdog(a))
    log.info({ requestId: r.requestId, live: [...legs].filter(([, l]) => l.live).map(([u]) => u) }, 'request adopted: its legs are still live')
    evaluate(a)
    return 'adopted'
  }

  return {
    async recover(open, intents) {
      const summary = { fromRecords: 0, adopted: 0, unknown: 0, intentsPlaced: 0, intentsUnplaced: 0 }
      const pending = intents?.intents ?? []
      if (open.length === 0 && pending.length === 0) return summary
      log.info({ requests: open.length, intents: pending.length }, RECOVERY_STARTS)
      await channelsRead()
      const count = (how: 'records' | 'adopted' | 'unknown') => {
        if (how === 'records') summary.fromRecords++
        else if (how === 'adopted') summary.adopted++
        else summary.unknown++
      }
      for (const r of pending) {
        if (closed || intents === undefined) break
        const legs = await readLegs(r)
        const placed = [...legs.values()].some((l) => l.live || l.created)
        // Durable before anything is reported: the result then belongs to an accepted request.
        await intents.settle(r, placed)
        if (!placed) {
          summary.intentsUnplaced++
          continue
        }
        summary.intentsPlaced++
        log.warn({ requestId: r.requestId }, 'an originate without a reply was placed: the request is accepted now')
        count(await recoverOne(r, legs))
      }
      for (const r of open) {
        if (closed) break
        count(await recoverOne(r))
      }
      log.info(summary, 'recovery done')
      return summary
    },
    has: (requestId) => adopted.has(requestId),
    stop() {
      for (const a of [...adopted.values()]) {
        cancel.hangupRequest(a.req.requestId)
        finish(a, { answered: false, cause: 'ORIGINATOR_CANCEL' })
      }
    },
    close() {
      closed = true
      for (const a of adopted.values()) a.stopWatchdog?.()
      watch.close()
    },
  }
}

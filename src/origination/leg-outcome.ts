/**
 * How one originate ended, decided from what is known of its legs (pure: no I/O, no timers).
 *
 * - The BACKGROUND_JOB decides first: `+OK <uuid>` names the winner (a losing leg may answer
 *   too, test/fixtures/freeswitch/esl/17-two-legs-race.txt), `-ERR <CAUSE>` the failure. `-ERR
 *   DESTINATION_OUT_OF_ORDER` is what FreeSWITCH says to an originate written a second time
 *   (esl-lite's client re-sends after a reconnect; the daemon's session never does,
 *   docs/esl-lite.md), whose legs exist already
 *   (test/fixtures/freeswitch/esl/23-duplicate-origination-uuid.txt): the result is then lost, not
 *   a failure.
 * - When the job's result is lost, the legs' channel state decides (outcomeFromChannels).
 * - Cancelled legs (LOSE_RACE, ORIGINATOR_CANCEL) never give the cause of a failure when
 *   another leg has a real one.
 */
import { parseJobBody } from '../pbx/replies.js'
import { isCancelCause, OUTCOME_UNKNOWN, type AttemptOutcome } from './outcome.js'

/** What the engine knows of one leg of an originate, from its channel events. */
export interface LegState {
  /** FreeSWITCH created the channel. */
  created: boolean
  /** The channel exists and has not hung up. */
  live: boolean
  answered: boolean
  /** The hangup cause, once it hung up. */
  cause: string | undefined
}

export const newLegState = (): LegState => ({ created: false, live: false, answered: false, cause: undefined })

/** A change of one leg's channel, as the leg watch reports it (leg-watch.ts). */
export type LegEvent =
  | { readonly kind: 'created'; readonly live: boolean; readonly answered: boolean }
  | { readonly kind: 'answered'; readonly live: boolean }
  | { readonly kind: 'ended'; readonly cause: string | undefined }

export function applyLegEvent(leg: LegState, e: LegEvent): void {
  switch (e.kind) {
    case 'created':
      leg.created = true
      leg.live = e.live
      leg.answered ||= e.answered
      return
    case 'answered':
      leg.created = true
      leg.live = e.live
      leg.answered = true
      return
    case 'ended':
      leg.live = false
      leg.cause = e.cause ?? leg.cause
      return
  }
}

/** The cause of a failed originate: a leg's real cause, else the job's, else a cancel cause. */
function pickCause(legs: ReadonlyMap<string, LegState>, fallbackCause: string | undefined): string {
  const causes = [...legs.values()].map((l) => l.cause).filter((c): c is string => c !== undefined)
  return causes.find((c) => !isCancelCause(c)) ?? fallbackCause ?? causes[0] ?? 'UNKNOWN'
}

/** What the BACKGROUND_JOB's body says: the outcome, or that it cannot tell (the result is lost). */
export type JobVerdict =
  | { readonly kind: 'ended'; readonly outcome: AttemptOutcome }
  | { readonly kind: 'lost'; readonly fallbackCause: string | undefined }

export function verdictOfJob(legs: ReadonlyMap<string, LegState>, jobBody: string): JobVerdict {
  const body = parseJobBody(jobBody)
  if (body.ok) {
    const named = body.text.split(/\s+/)[0] ?? ''
    const uuid = legs.has(named) ? named : ([...legs.entries()].find(([, l]) => l.answered)?.[0] ?? named)
    return { kind: 'ended', outcome: { answered: true, uuid } }
  }
  // A re-sent originate (after a reconnect) is refused because its legs exist already.
  if (body.reason === 'DESTINATION_OUT_OF_ORDER') return { kind: 'lost', fallbackCause: body.reason }
  return { kind: 'ended', outcome: { answered: false, cause: body.reason.split(/\s+/)[0] ?? 'UNKNOWN' } }
}

/**
 * The outcome from channel state alone (the job result is lost, and the live channels have
 * been re-read since), or undefined while legs still ring.
 */
export function outcomeFromChannels(
  legs: ReadonlyMap<string, LegState>,
  fallbackCause: string | undefined,
): AttemptOutcome | undefined {
  const all = [...legs.entries()]
  const liveAnswered = all.filter(([, l]) => l.live && l.answered)
  const liveRinging = all.filter(([, l]) => l.live && !l.answered)
  const only = liveAnswered[0]
  // FreeSWITCH hangs up the other legs as soon as one answers: wait until it has.
  if (liveAnswered.length === 1 && liveRinging.length === 0 && only !== undefined) return { answered: true, uuid: only[0] }
  if (liveAnswered.length > 0 || liveRinging.length > 0) return undefined
  const ended = all.find(([, l]) => l.answered && !isCancelCause(l.cause ?? ''))
  if (ended !== undefined) return { answered: true, uuid: ended[0] }
  return failedOrUnknown(legs, fallbackCause)
}

/**
 * A failure with its cause, or OUTCOME_UNKNOWN when nothing was ever heard of the originate: no
 * leg seen and no job result (the link died with the command written; it may have rung).
 */
export function failedOrUnknown(legs: ReadonlyMap<string, LegState>, fallbackCause: string | undefined): AttemptOutcome {
  const seen = [...legs.values()].some((l) => l.created || l.cause !== undefined)
  if (!seen && fallbackCause === undefined) return OUTCOME_UNKNOWN
  return { answered: false, cause: pickCause(legs, fallbackCause) }
}

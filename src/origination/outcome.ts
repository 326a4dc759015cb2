/**
 * The result of an origination attempt, as the callback receiver sees it (docs/design.md "Result
 * callbacks"); the error ids of FreeSWITCH hangup causes are in pbx/hangup-causes.ts.
 */
import { errorIdOfCause, type CallErrorId } from '../pbx/hangup-causes.js'

export type { CallErrorId }

/**
 * The error id of a failed result: a hangup cause's, or `outcome_unknown` when nothing can tell
 * how the request ended (docs/design.md "An error reply means no call").
 */
export type ResultErrorId = CallErrorId | 'outcome_unknown'

export type CallResult =
  | { readonly result_code: 0; readonly uuid: string }
  | { readonly result_code: 500; readonly error: { readonly id: ResultErrorId; readonly cause: string } }

/** Implemented by src/callbacks: delivers one result to the request's callback_url. */
export interface CallbackSink {
  deliver(domain: string, url: string, result: CallResult, meta: { readonly requestId: string }): void
}

/** @internal Exported for tests: tests build the results a callback carries. */
export const answered = (uuid: string): CallResult => ({ result_code: 0, uuid })

/**
 * A failure result carrying the raw cause (`-ERR <CAUSE>` without the prefix).
 * @internal Exported for tests: test/openapi builds a failure result.
 */
export const notAnswered = (cause: string): CallResult => ({
  result_code: 500,
  error: { id: errorIdOfCause(cause), cause: cause.trim() === '' ? 'UNKNOWN' : cause.trim() },
})

/** Causes that mean "this leg was cancelled because another one won or we stopped": not the outcome. */
export const isCancelCause = (cause: string): boolean => cause === 'LOSE_RACE' || cause === 'ORIGINATOR_CANCEL'

/**
 * How one originate (all legs rung together) ended: the winning leg, the cause, or unknown: the
 * originate reached FreeSWITCH (the API answered 200) but its job result was lost and no leg of
 * it was ever seen, so nothing tells whether it rang (the link died with the command written).
 */
export type AttemptOutcome =
  | { readonly answered: true; readonly uuid: string }
  | { readonly answered: false; readonly cause: string; readonly unknown?: undefined }
  | { readonly answered: false; readonly cause: 'UNKNOWN'; readonly unknown: true }

/** The outcome when nothing can tell how the request ended (never a guess). */
export const OUTCOME_UNKNOWN: AttemptOutcome = { answered: false, cause: 'UNKNOWN', unknown: true }

/** The result callback of OUTCOME_UNKNOWN: `outcome_unknown`, cause `UNKNOWN`. */
export const outcomeUnknown = (): CallResult => ({ result_code: 500, error: { id: 'outcome_unknown', cause: 'UNKNOWN' } })

export const resultOf = (o: AttemptOutcome): CallResult =>
  o.answered ? answered(o.uuid) : o.unknown === true ? outcomeUnknown() : notAnswered(o.cause)

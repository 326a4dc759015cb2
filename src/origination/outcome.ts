/**
 * The result of an origination attempt, as the callback receiver sees it (DESIGN.md "Result
 * callbacks"); the error ids of FreeSWITCH hangup causes are in pbx/hangup-causes.ts.
 */
import { errorIdOfCause, type CallErrorId } from '../pbx/hangup-causes.js'

export type { CallErrorId }

export type CallResult =
  | { readonly result_code: 0; readonly uuid: string }
  | { readonly result_code: 500; readonly error: { readonly id: CallErrorId; readonly cause: string } }

/** Implemented by src/callbacks: delivers one result to the request's callback_url. */
export interface CallbackSink {
  deliver(domain: string, url: string, result: CallResult, meta: { readonly requestId: string }): void
}

export const answered = (uuid: string): CallResult => ({ result_code: 0, uuid })

/** A failure result carrying the raw cause (`-ERR <CAUSE>` without the prefix). */
export const notAnswered = (cause: string): CallResult => ({
  result_code: 500,
  error: { id: errorIdOfCause(cause), cause: cause.trim() === '' ? 'UNKNOWN' : cause.trim() },
})

/** Causes that mean "this leg was cancelled because another one won or we stopped": not the outcome. */
export const isCancelCause = (cause: string): boolean => cause === 'LOSE_RACE' || cause === 'ORIGINATOR_CANCEL'

/** How one originate (all legs rung together) ended: the winning leg, or the cause. */
export type AttemptOutcome =
  | { readonly answered: true; readonly uuid: string }
  | { readonly answered: false; readonly cause: string }

export const resultOf = (o: AttemptOutcome): CallResult => (o.answered ? answered(o.uuid) : notAnswered(o.cause))

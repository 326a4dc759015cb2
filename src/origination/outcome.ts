/**
 * The result of an origination attempt, as the callback receiver sees it (DESIGN.md "Result
 * callbacks"), and the mapping from FreeSWITCH hangup causes to our error ids (DESIGN.md
 * "Lessons from FreeSWITCH"; causes as seen in captures 10-17, 20, 24).
 */

export type CallErrorId = 'no_answer' | 'busy' | 'rejected' | 'not_registered' | 'cancelled' | 'failed'

export type CallResult =
  | { readonly result_code: 0; readonly uuid: string }
  | { readonly result_code: 500; readonly error: { readonly id: CallErrorId; readonly cause: string } }

/** Implemented by src/callbacks: delivers one result to the request's callback_url. */
export interface CallbackSink {
  deliver(domain: string, url: string, result: CallResult, meta: { readonly requestId: string }): void
}

const CAUSE_IDS: Readonly<Record<string, CallErrorId>> = {
  // originate_timeout expired (capture 10) / SIP 480 (capture 13)
  NO_ANSWER: 'no_answer',
  NO_USER_RESPONSE: 'no_answer',
  // a per-leg leg_timeout expired (switch_ivr_originate.c: ALLOTTED_TIMEOUT for leg timeouts)
  ALLOTTED_TIMEOUT: 'no_answer',
  // SIP 486 / 600 (capture 11)
  USER_BUSY: 'busy',
  // SIP 603 / 403 (capture 12)
  CALL_REJECTED: 'rejected',
  // registered nowhere (captures 14, 16) / unknown to the directory (capture 15)
  USER_NOT_REGISTERED: 'not_registered',
  SUBSCRIBER_ABSENT: 'not_registered',
  // the losers of a fork (capture 17), or legs we cancelled
  LOSE_RACE: 'cancelled',
  ORIGINATOR_CANCEL: 'cancelled',
}

/** The error id of a FreeSWITCH hangup cause; anything not listed is `failed`. */
export const errorIdOfCause = (cause: string): CallErrorId => CAUSE_IDS[cause.trim().toUpperCase()] ?? 'failed'

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

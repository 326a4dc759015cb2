/**
 * What a FreeSWITCH hangup cause means to the daemon's callers: the error id of a call that
 * was not answered (DESIGN.md "Lessons from FreeSWITCH"; causes as seen in captures 10-17, 20,
 * 24). It lives in the PBX layer, below its two users: the origination engine's results
 * (origination/outcome.ts) and the IVR's TransferFailureReason (ivr/elements/transfer.ts).
 */

export type CallErrorId = 'no_answer' | 'busy' | 'rejected' | 'not_registered' | 'cancelled' | 'failed'

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

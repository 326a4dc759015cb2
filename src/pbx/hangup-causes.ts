/**
 * What a FreeSWITCH hangup cause means to the daemon's callers: the error id of a call that
 * was not answered (docs/design.md "Lessons from FreeSWITCH"; causes as seen in the sessions
 * 10-17, 20 and 24 in test/fixtures/freeswitch/esl/). It lives in the PBX layer, below its two
 * users: the origination engine's results (origination/outcome.ts) and the IVR's
 * TransferFailureReason (ivr/elements/transfer.ts).
 */

export type CallErrorId = 'no_answer' | 'busy' | 'rejected' | 'not_registered' | 'cancelled' | 'failed'

const CAUSE_IDS: Readonly<Record<string, CallErrorId>> = {
  // originate_timeout expired (test/fixtures/freeswitch/esl/10-no-answer.txt) / SIP 480
  // (test/fixtures/freeswitch/esl/13-reject-480.txt)
  NO_ANSWER: 'no_answer',
  NO_USER_RESPONSE: 'no_answer',
  // a per-leg leg_timeout expired (switch_ivr_originate.c: ALLOTTED_TIMEOUT for leg timeouts)
  ALLOTTED_TIMEOUT: 'no_answer',
  // SIP 486 / 600 (test/fixtures/freeswitch/esl/11-busy-486.txt)
  USER_BUSY: 'busy',
  // SIP 603 / 403 (test/fixtures/freeswitch/esl/12-reject-603.txt)
  CALL_REJECTED: 'rejected',
  // registered nowhere (test/fixtures/freeswitch/esl/14-user-not-registered-1003.txt and
  // 16-sofia-contact-not-registered.txt) / unknown to the directory
  // (test/fixtures/freeswitch/esl/15-unknown-user-9999.txt)
  USER_NOT_REGISTERED: 'not_registered',
  SUBSCRIBER_ABSENT: 'not_registered',
  // the losers of a fork (test/fixtures/freeswitch/esl/17-two-legs-race.txt), or legs we cancelled
  LOSE_RACE: 'cancelled',
  ORIGINATOR_CANCEL: 'cancelled',
}

/** The error id of a FreeSWITCH hangup cause; anything not listed is `failed`. */
export const errorIdOfCause = (cause: string): CallErrorId => CAUSE_IDS[cause.trim().toUpperCase()] ?? 'failed'

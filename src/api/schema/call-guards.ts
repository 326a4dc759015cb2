/**
 * The two guards every operation takes when it creates a call (issue 29 item 3; docs/api.md
 * "Time limit and DTMF on answer"): `time_limit`, how long the call may last once its originating
 * leg answered, and `send_digits`, DTMF sent to that leg right after it answers. FreeSWITCH does
 * both on the leg itself (pbx/commands.ts OnAnswer), so they hold while the daemon is away.
 */
import { z } from 'zod'
import { MAX_HANGUP_AFTER_SEC, PATTERNS } from '../../pbx/commands.js'

const TIME_LIMIT_RULE = `must be a whole number of seconds from 1 to ${MAX_HANGUP_AFTER_SEC}`
/** 1 to 86400 as a string of digits, leading zeros allowed (as timeoutSchema: no lookahead, RE2-safe). */
const TIME_LIMIT_DIGITS_RE = /^0*(?:[1-9][0-9]{0,3}|[1-7][0-9]{4}|8[0-5][0-9]{3}|86[0-3][0-9]{2}|86400)$/
const DIGITS_RULE = 'must be 1 to 64 of 0-9 * # A B C D, w (a 0.5 s pause) and W (1 s)'

export const callGuardFields = {
  time_limit: z
    .union(
      [
        z.int(TIME_LIMIT_RULE).min(1, TIME_LIMIT_RULE).max(MAX_HANGUP_AFTER_SEC, TIME_LIMIT_RULE),
        z.string(TIME_LIMIT_RULE).max(12, TIME_LIMIT_RULE).regex(TIME_LIMIT_DIGITS_RE, TIME_LIMIT_RULE),
      ],
      { error: TIME_LIMIT_RULE },
    )
    .transform(Number)
    .optional()
    .describe(
      `Seconds the call may last once the originating leg answered: 1 to ${MAX_HANGUP_AFTER_SEC}, a number or a string of digits. FreeSWITCH then hangs that leg up with the cause ALLOTTED_TIMEOUT (and the call with it), counting whole seconds: between time_limit - 1 and time_limit after the answer. Above the domain's max_call_seconds: refused (invalid_parameter, naming the max). Absent: the domain's max_call_seconds, if any.`,
    ),
  send_digits: z
    .string(DIGITS_RULE)
    .regex(PATTERNS.dtmfWithPauses, DIGITS_RULE)
    .optional()
    .describe('DTMF sent to the originating leg right after it answers (to pass a PSTN menu, say): 0-9 * # A-D, w for a 0.5 s pause, W for 1 s; 1 to 64 of them.'),
}

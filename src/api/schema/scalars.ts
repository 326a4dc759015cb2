/**
 * Timeouts and booleans as clients send them: JSON values, or their strings (form-minded
 * clients send "30" and "true"). Nothing else is coerced: `null`, `1` or "yes" are refused.
 */
import { z } from 'zod'

const MAX_TIMEOUT_SEC = 3600
const TIMEOUT_RULE = `must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SEC}`
/**
 * 1 to 3600, leading zeros allowed; at most 8 digits is the string's max, not a lookahead, so
 * the OpenAPI document's pattern compiles in RE2 and Rust too (issue 26).
 */
const TIMEOUT_DIGITS_RE = /^0*(?:[1-9][0-9]{0,2}|[1-2][0-9]{3}|3[0-5][0-9]{2}|3600)$/
const TIMEOUT_MAX_DIGITS = 8

/** A timeout in seconds: a whole number from 1 to 3600, as a JSON number or a string of digits. */
export const timeoutSchema = z
  .union([z.int(TIMEOUT_RULE).min(1, TIMEOUT_RULE).max(MAX_TIMEOUT_SEC, TIMEOUT_RULE), z.string(TIMEOUT_RULE).max(TIMEOUT_MAX_DIGITS, TIMEOUT_RULE).regex(TIMEOUT_DIGITS_RE, TIMEOUT_RULE)], {
    error: TIMEOUT_RULE,
  })
  .transform(Number)

const BOOLEAN_RULE = 'must be true or false'

/** true/false, or the strings "true"/"false". */
export const booleanSchema = z
  .union([z.boolean(BOOLEAN_RULE), z.enum(['true', 'false'], BOOLEAN_RULE)], { error: BOOLEAN_RULE })
  .transform((v) => v === true || v === 'true')

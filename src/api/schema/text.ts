/**
 * Free-text fields: what every piece of client text must satisfy before it may travel towards
 * ESL commands, SIP headers and logs. Line breaks end ESL commands and SIP headers, so control
 * characters are refused everywhere; lengths are bounded.
 */
import { z } from 'zod'

/** No C0 or C1 control character nor DEL (a whole-value pattern, so JSON Schema can carry it). */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
export const NO_CONTROL_RE = /^[^\x00-\x1f\x7f-\x9f]*$/

export const MUST_BE_STRING = 'must be a string'

/** A non-empty string without control characters, at most `max` characters. */
export const text = (max: number) =>
  z
    .string(MUST_BE_STRING)
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .regex(NO_CONTROL_RE, 'must not contain control characters')

/** calling_name: printable ASCII (0x20-0x7e), 1 to 64 characters (it becomes a SIP display name). */
export const callingNameSchema = z
  .string(MUST_BE_STRING)
  .regex(/^[\x20-\x7e]{1,64}$/, 'must be 1 to 64 printable ASCII characters (0x20-0x7e)')
  .describe('The name shown on the ringing terminals: 1 to 64 printable ASCII characters (0x20-0x7e).')

/**
 * Strict text: the one rule every string parameter of the API starts from (issue 12 item 6,
 * docs/api.md "Parameter types"). A string must be well-formed Unicode (no lone surrogate: JSON
 * lets a client write `"\ud800"`, which no UTF-8 encoder can carry and which would be replaced
 * silently on its way to FreeSWITCH, a log or a CTI panel) and hold no control character (C0,
 * DEL, C1: line breaks end ESL commands, SIP headers and log lines). Such a value is refused as
 * `invalid_parameter`, never repaired. No parameter takes a tab: they are all one-line names,
 * labels, numbers and URLs. Each field's own rule (alphabet, length) comes after this one.
 *
 * The OpenAPI document carries the control-character half as a `pattern` (NO_CONTROL_RE: plain
 * `\xHH` escapes, which ECMA-262, RE2 and Rust's regex all compile). The well-formed half has
 * no portable pattern (a surrogate escape is refused by RE2 and Rust, whose strings cannot hold
 * a lone surrogate anyway), so it is a refinement the document states in words (docs/api.md).
 */
import { z } from 'zod'

/**
 * No C0 or C1 control character nor DEL (a whole-value pattern, so JSON Schema can carry it).
 */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
export const NO_CONTROL_RE = /^[^\x00-\x1f\x7f-\x9f]*$/

/**
 * Well-formed UTF-16 without control characters: every surrogate is half of a pair. Written
 * without the `u` flag (and without `\p{...}`), so that a JSON Schema consumer can carry it.
 * @internal Exported for tests: test/api checks the pattern and strictTextProblem agree.
 */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
export const STRICT_TEXT_RE = /^(?:[^\x00-\x1f\x7f-\x9f\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/

const MUST_BE_STRING = 'must be a string'

const hex = (c: number): string => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`

/**
 * Why a string breaks the strict-text rule (the first offending character, by position), or
 * undefined. Also checks gen_ws_ticket's uri (src/cti/query.ts), which is not a zod string.
 */
export function strictTextProblem(s: string): string | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return `must not contain control characters (found ${hex(c)} at position ${i + 1})`
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++
        continue
      }
      return `must be well-formed Unicode (found a lone surrogate ${hex(c)} at position ${i + 1})`
    }
    if (c >= 0xdc00 && c <= 0xdfff) return `must be well-formed Unicode (found a lone surrogate ${hex(c)} at position ${i + 1})`
  }
  return undefined
}

/**
 * THE base of every string parameter: a string, then strict text. Field rules chain after it
 * (`strictString().min(1, ...).regex(...)`), so a control character or a lone surrogate is
 * what the client hears about first, in these words, whatever the field.
 */
const strictTextError = (iss: { readonly input?: unknown }): string =>
  (typeof iss.input === 'string' ? strictTextProblem(iss.input) : undefined) ?? 'must be well-formed Unicode without control characters'

export const strictString = () =>
  z
    .string(MUST_BE_STRING)
    // Both checks word their issue by the first offending character, so whichever comes
    // first in the string is what the client hears about, as with a single check.
    .regex(NO_CONTROL_RE, { error: strictTextError })
    .refine((s) => STRICT_TEXT_RE.test(s), { error: strictTextError })

/** A non-empty strict string, at most `max` characters (UTF-16 code units, as JSON counts them). */
export const text = (max: number) => strictString().min(1, 'must not be empty').max(max, `must be at most ${max} characters`)

/** calling_name: printable ASCII (0x20-0x7e), 1 to 64 characters (it becomes a SIP display name). */
export const callingNameSchema = strictString()
  .regex(/^[\x20-\x7e]{1,64}$/, 'must be 1 to 64 printable ASCII characters (0x20-0x7e)')
  .describe('The name shown on the ringing terminals: 1 to 64 printable ASCII characters (0x20-0x7e).')

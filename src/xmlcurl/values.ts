/**
 * What may stand inside dialplan application data and channel variables.
 *
 * FreeSWITCH expands `${...}` in application data before running the application
 * (switch_core_session_execute_application) and expands variable values again when they are
 * referenced (switch_channel.c, switch_channel_expand_variables_check recurses into the value,
 * v1.10.12). `${name(args)}` calls an API, and `system` is one. So the data we write is built
 * only from values that passed a narrow alphabet, and `safe()` checks that again at the point
 * where data is assembled: a bug elsewhere becomes "not found", never an expansion.
 */
import { UnsafeValueError } from './document.js'

/**
 * Letters, digits and `. _ @ + * # % / = -`: enough for names, ids, numbers, domains, dial
 * targets and percent-encoded text; none of `$ { } [ ] , | ' ^ : ;`, spaces or quotes, which give
 * meaning to dial strings and expansions.
 */
const SAFE_RE = /^[A-Za-z0-9._@+*#%/=-]*$/

export function safe(value: string): string {
  if (!SAFE_RE.test(value)) throw new UnsafeValueError(`unsafe value in application data: ${JSON.stringify(value)}`)
  return value
}

/**
 * Percent-encoding of free text (end_user fields, URLs) for channel variables: every byte
 * except letters, digits and `- _ . ~` is encoded, so the result passes `safe()`.
 * Readers decode it with decodeURIComponent.
 */
export const pct = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** A regular expression that matches exactly this string (PCRE: a backslash before a non-alphanumeric is a literal). */
export const exactRegex = (s: string): string => `^${s.replace(/[^A-Za-z0-9_]/g, (c) => `\\${c}`)}$`

/**
 * Free text from the configuration (labels) for a directory `<variable>`: a `$` before `{`
 * (even with backslashes between, as switch_string_var_check_const allows) is dropped, so the
 * value never contains an expansion when FreeSWITCH later references the variable.
 */
export function noExpansion(text: string): string {
  let out = text
  // Removing one `$` can bring another next to a `{` (`$\$\{`): repeat until none is left.
  for (let prev = ''; prev !== out; ) {
    prev = out
    out = out.replace(/\$+(?=\\*\{)/g, '')
  }
  return out
}

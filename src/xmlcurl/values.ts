/**
 * What may stand inside dialplan application data and channel variables.
 *
 * FreeSWITCH expands `${...}` in application data before running the application
 * (switch_core_session_execute_application) and expands variable values again when they are
 * referenced (switch_channel.c, switch_channel_expand_variables_check recurses into the value,
 * v1.10.12). `${name(args)}` calls an API, and `system` is one. So the data we write is built
 * only from values that passed a narrow alphabet, and `safe()` checks that again at the point
 * where data is assembled: a bug elsewhere becomes "not found", never an expansion.
 *
 * The rule and the encoding are the ESL command builder's (src/pbx/commands.ts checkValue with
 * the `appValue` alphabet: letters, digits and `. _ @ + * # % / = -`; percentEncode), so a value
 * is held to one rule whether it reaches FreeSWITCH over ESL or in a document.
 */
import { checkValue, percentEncode } from '../pbx/commands.js'
import { UnsafeValueError } from './document.js'

export function safe(value: string): string {
  if (!checkValue('appValue', 'application data', value).ok) throw new UnsafeValueError(`unsafe value in application data: ${JSON.stringify(value)}`)
  return value
}

/**
 * Percent-encoding of free text (end_user fields, URLs) for channel variables: every byte
 * except letters, digits and `. _ -` is encoded (a `~` too: encodeURIComponent would keep it,
 * and `safe()` refuses it), so the result passes `safe()`. Readers decode it with
 * decodeURIComponent.
 */
export const pct = (text: string): string => percentEncode(text)

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

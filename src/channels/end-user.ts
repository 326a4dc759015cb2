/**
 * `cod_end_user` read back from a channel: the percent-encoded JSON that pbx/commands.ts
 * writes. Empty fields are dropped and a value that is not one gives undefined, so that a bad
 * variable hides nothing else about the channel.
 */
import { decodeEndUser } from '../pbx/commands.js'
import { END_USER_FIELDS, type EndUser } from '../pbx/end-user.js'

/** Longer values are not ours (the API bounds end_user far below this). */
const MAX_ENCODED_LENGTH = 16384

export function endUserOf(raw: string | undefined): EndUser | undefined {
  if (raw === undefined || raw === '' || raw.length > MAX_ENCODED_LENGTH) return undefined
  const decoded = decodeEndUser(raw)
  if (!decoded.ok) return undefined
  const out: Record<string, string> = {}
  for (const field of END_USER_FIELDS) {
    const v = decoded.value[field]
    if (v !== undefined && v !== '') out[field] = v
  }
  return Object.keys(out).length === 0 ? undefined : (out as EndUser)
}

export const sameEndUser = (a: EndUser | undefined, b: EndUser | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && END_USER_FIELDS.every((f) => a[f] === b[f]))

/**
 * end_user, the identity of the external party as the client describes it, in its two forms:
 * the object `{id?, name?, organization?, avatar?, prefecture?}` and the prefix
 * `{key=value,...}` written before a PSTN number. It is the only free text that reaches a
 * call (no control characters, bounded); later stages escape it wherever they write it.
 */
import { z } from 'zod'
import { END_USER_FIELDS, type EndUser } from '../../pbx/end-user.js'
import { err, ok, type Result } from '../../util/result.js'
import { text } from './text.js'

type EndUserField = (typeof END_USER_FIELDS)[number]

const endUserFields = {
  id: text(256).describe("The client's identifier of the party: 1-256 characters without control characters."),
  name: text(256).describe('Display name: 1-256 characters without control characters.'),
  organization: text(256).describe('Organization: 1-256 characters without control characters.'),
  avatar: text(2048).describe('Picture URL for CTI panels: 1-2048 characters without control characters.'),
  prefecture: text(256).describe('Region: 1-256 characters without control characters.'),
} satisfies Record<EndUserField, z.ZodType<string>>

const SOME_OF = END_USER_FIELDS.join(', ')

export const endUserSchema = z
  .strictObject(
    {
      id: endUserFields.id.optional(),
      name: endUserFields.name.optional(),
      organization: endUserFields.organization.optional(),
      avatar: endUserFields.avatar.optional(),
      prefecture: endUserFields.prefecture.optional(),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? `must be an object with some of ${SOME_OF}` : undefined) },
  )
  .refine((e) => Object.keys(e).length > 0, `must hold at least one of ${SOME_OF}`)
  .meta({ minProperties: 1 })
  .describe(`The external party, for CTI panels and channel variables: an object with at least one of ${SOME_OF}.`) satisfies z.ZodType<EndUser>

const isEndUserField = (k: string): k is EndUserField => (END_USER_FIELDS as readonly string[]).includes(k)

/** Why an end_user prefix is refused (worded to follow the parameter's name), or what it says and what follows it. */
export type EndUserPrefix = Result<{ readonly endUser: EndUser; readonly rest: string }, string>

/**
 * `{key=value,...}<rest>`: keys are end_user fields, a raw value holds no `,` `}` `=`, and is
 * percent-decoded (so those characters can still be sent, encoded).
 */
export function parseEndUserPrefix(s: string): EndUserPrefix {
  const close = s.indexOf('}')
  if (!s.startsWith('{') || close < 0) return err('an end_user prefix is written {key=value,...} before the number')
  const inner = s.slice(1, close)
  if (inner.length === 0) return err('the end_user prefix {} is empty')
  const endUser: Partial<Record<EndUserField, string>> = {}
  for (const pair of inner.split(',')) {
    const eq = pair.indexOf('=')
    if (eq < 0) return err('each end_user prefix entry is key=value; a value may not contain , } or = (percent-encode them)')
    const key = pair.slice(0, eq)
    const raw = pair.slice(eq + 1)
    if (!isEndUserField(key)) return err(`unknown end_user prefix key; keys are ${SOME_OF}`)
    if (raw.includes('=')) return err('an end_user prefix value may not contain , } or = (percent-encode them)')
    if (endUser[key] !== undefined) return err(`end_user prefix key ${key} is given twice`)
    let decoded: string
    try {
      decoded = decodeURIComponent(raw)
    } catch {
      return err(`end_user prefix value of ${key} has bad percent-encoding`)
    }
    // The same rules as the object form's field; the description names the key inside the prefix.
    const checked = endUserFields[key].safeParse(decoded)
    if (!checked.success) return err(`end_user prefix ${key}: ${checked.error.issues[0]?.message ?? 'is invalid'}`)
    endUser[key] = checked.data
  }
  return ok({ endUser, rest: s.slice(close + 1) })
}

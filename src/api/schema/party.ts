/**
 * PSTN parties and destinations as clients write them:
 *
 * - a PSTN number, optionally with an end_user prefix: `{name=Jane%20Doe,organization=ACME}0311112222`;
 * - the object form `{called_number, calling_number?, end_user?}`;
 * - a destination string, whose meaning (xml_url: forms, a user, group, extension or PSTN
 *   number) only the directory can tell: the schema checks it is a non-empty string and
 *   destination.ts resolves it after the parse.
 *
 * Both PSTN forms parse to a PstnParty. Whether the domain may present its calling_number is
 * checked after the parse (calling-number.ts).
 */
import { z } from 'zod'
import { isPstnNumber } from '../../config/schema.js'
import type { EndUser } from '../../pbx/end-user.js'
import { err, ok, type Result } from '../../util/result.js'
import { endUserSchema, parseEndUserPrefix } from './end-user.js'
import { PSTN_RULE, callingNumberSchema, pstnNumberSchema } from './numbers.js'
import { strictString } from './text.js'

/** A PSTN number with what the client said about it. */
export interface PstnParty {
  readonly number: string
  readonly callingNumber?: string
  readonly endUser?: EndUser
}

export const pstnParty = (number: string, callingNumber: string | undefined, endUser: EndUser | undefined): PstnParty => ({
  number,
  ...(callingNumber === undefined ? {} : { callingNumber }),
  ...(endUser === undefined ? {} : { endUser }),
})

/** The type rule of a field that also takes the object form. */
export const STRING_OR_OBJECT = 'must be a string or an object {called_number, calling_number, end_user}'

/** The object form `{called_number, calling_number?, end_user?}`, fields checked in this order. */
export const pstnObjectSchema = z
  .strictObject({
    called_number: pstnNumberSchema.describe('The PSTN number called: optional + then 2-32 digits, * or #.'),
    calling_number: callingNumberSchema.optional(),
    end_user: endUserSchema.optional(),
  })
  .transform((o) => pstnParty(o.called_number, o.calling_number, o.end_user))
  .describe('The object form of a PSTN party: {called_number, calling_number?, end_user?}.')

/** The string form: a PSTN number, optionally after an end_user prefix; else the rule it breaks. */
export function parsePstnString(s: string): Result<PstnParty, string> {
  if (s.startsWith('{')) {
    const p = parseEndUserPrefix(s)
    if (!p.ok) return p
    if (!isPstnNumber(p.value.rest)) return err(`the number after the end_user prefix ${PSTN_RULE}`)
    return ok(pstnParty(p.value.rest, undefined, p.value.endUser))
  }
  return isPstnNumber(s) ? ok({ number: s }) : err(PSTN_RULE)
}

const pstnStringSchema = strictString()
  .min(1, 'must not be empty')
  .transform((s, ctx): PstnParty => {
    const p = parsePstnString(s)
    if (p.ok) return p.value
    // The prefix grammar has no JSON Schema form; its rule is in the field's description.
    ctx.addIssue({ code: 'custom', message: p.error, input: s })
    return z.NEVER
  })
  .describe('A PSTN number (optional + then 2-32 digits, * or #), optionally after an end_user prefix {key=value,...} with percent-encoded values.')

/** A party always reached through the domain's gateway: the string form, and the object form where `objectForm`. */
export const pstnPartySchema = (objectForm: boolean) =>
  objectForm ? z.union([pstnStringSchema, pstnObjectSchema], { error: STRING_OR_OBJECT }) : pstnStringSchema

/** A destination before resolution: a non-empty string, or the PSTN object form where `objectForm`. */
const destinationString = strictString()
  .min(1, 'must not be empty')
  .describe('A destination string, resolved against the directory after the parse.')
export const destinationSchema = (objectForm: boolean) =>
  objectForm ? z.union([destinationString, pstnObjectSchema], { error: STRING_OR_OBJECT }) : destinationString

/** What destination.ts resolves. */
export type DestinationInput = string | PstnParty

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
 *
 * The string forms carry, for the OpenAPI document only, the patterns of forms.ts: a subset of
 * what the parse and destination.ts take, so a value that matches is never refused for its form.
 */
import { z } from 'zod'
import { isPstnNumber } from '../../config/schema.js'
import { END_USER_FIELDS, type EndUser } from '../../pbx/end-user.js'
import { err, ok, type Result } from '../../util/result.js'
import { endUserSchema, parseEndUserPrefix } from './end-user.js'
import {
  DESTINATION_NAME_PATTERN,
  DESTINATION_PREFIX_PATTERN,
  PREFIX_VALUE_MAX,
  PSTN_STRING_PATTERN,
  XML_URL_INLINE_PATTERN,
  XML_URL_LIST_PATTERN,
} from './forms.js'
import { PSTN_RULE, callingNumberSchema, pstnNumberSchema } from './numbers.js'
import { strictString } from './text.js'
import { MAX_URL_LENGTH } from './url.js'

/** A PSTN number with what the client said about it. */
export interface PstnParty {
  readonly number: string
  readonly callingNumber?: string
  readonly endUser?: EndUser
}

const pstnParty = (number: string, callingNumber: string | undefined, endUser: EndUser | undefined): PstnParty => ({
  number,
  ...(callingNumber === undefined ? {} : { callingNumber }),
  ...(endUser === undefined ? {} : { endUser }),
})

/** What the document's prefix pattern leaves out of what the parse takes. */
const PREFIX_FORM_NOTE = `The pattern writes the prefix keys in the order ${END_USER_FIELDS.join(', ')}, values up to ${PREFIX_VALUE_MAX} characters, percent-encoding only printable ASCII; the daemon also takes the keys in any order (each once), avatar up to 2048 and any UTF-8 percent-encoded.`

/** The type rule of a field that also takes the object form. */
const STRING_OR_OBJECT = 'must be a string or an object {called_number, calling_number, end_user}'

/** The object form `{called_number, calling_number?, end_user?}`, fields checked in this order. */
const pstnObjectSchema = z
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
  .meta({ pattern: PSTN_STRING_PATTERN })
  .describe(
    `A PSTN number (optional + then 2-32 digits, * or #), optionally after an end_user prefix {key=value,...} with percent-encoded values. ${PREFIX_FORM_NOTE}`,
  )

/** A party always reached through the domain's gateway: the string form, and the object form where `objectForm`. */
export const pstnPartySchema = (objectForm: boolean) =>
  objectForm ? z.union([pstnStringSchema, pstnObjectSchema], { error: STRING_OR_OBJECT }) : pstnStringSchema

/** The destination string forms a document shows (destination.ts resolves them, in this order). */
const NAME_FORM = {
  title: 'name or number',
  description: 'A user, group or extension name or number, a DID, or (where PSTN destinations are allowed) a PSTN number: which one, only the directory tells.',
  pattern: DESTINATION_NAME_PATTERN,
}
const PREFIX_FORM = {
  title: 'PSTN number with end_user',
  description: `A PSTN number the domain does not claim, after an end_user prefix. ${PREFIX_FORM_NOTE}`,
  pattern: DESTINATION_PREFIX_PATTERN,
}
const XML_URL_FORMS = [
  {
    title: 'xml_url: URLs',
    description: `An IVR document fetched from these http/https URLs, in order (fallbacks): at most 8; needs the domain privilege ON_THE_FLY_IVR_ALLOWED. maxLength bounds the whole list to ${MAX_URL_LENGTH} characters after xml_url:; the daemon takes ${MAX_URL_LENGTH} for each URL.`,
    pattern: XML_URL_LIST_PATTERN,
    maxLength: 'xml_url:'.length + MAX_URL_LENGTH,
  },
  {
    title: 'xml_url:inline_xml://',
    description: 'An IVR document sent inline, base64 (standard or URL-safe alphabet); refused as invalid_xml when it is not canonical base64 of a valid IVR document; needs the privilege ON_THE_FLY_IVR_ALLOWED.',
    pattern: XML_URL_INLINE_PATTERN,
  },
]

const destinationString = (forms: readonly object[]) =>
  strictString()
    .min(1, 'must not be empty')
    .meta({ anyOf: [...forms] })
    .describe('A destination string, resolved against the directory after the parse.')
const internalOrPstn = destinationString([NAME_FORM, PREFIX_FORM])
const internalOrIvr = destinationString([NAME_FORM, ...XML_URL_FORMS])

/**
 * A destination before resolution: a non-empty string, or the PSTN object form where
 * `objectForm`. The parse takes any non-empty strict string (destination.ts words what is
 * wrong with one); `xmlUrl` only chooses the forms the document lists: the internal ones and
 * xml_url: (call_external), else the internal and PSTN ones.
 */
export const destinationSchema = (objectForm: boolean, opts: { readonly xmlUrl?: boolean } = {}) => {
  const string = opts.xmlUrl === true ? internalOrIvr : internalOrPstn
  return objectForm ? z.union([string, pstnObjectSchema], { error: STRING_OR_OBJECT }) : string
}

/** What destination.ts resolves. */
export type DestinationInput = string | PstnParty

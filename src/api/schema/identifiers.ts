/**
 * The user_* and group_* identifiers: each value must have the shape the configuration
 * enforces on the records themselves, so a value outside it can name nothing and is refused as
 * invalid (this also keeps break-out characters out of descriptions and logs). Which record a
 * value names is the directory's to say (records.ts), after the parse.
 */
import { z } from 'zod'
import { DIGITS_RE, ID_RE, NAME_RE, PSTN_RE } from '../../config/schema.js'
import type { GroupKey, UserKey } from '../../directory/directory.js'
import { errorIdParams } from './parse.js'
import { PSTN_RULE } from './numbers.js'
import { NO_CONTROL_RE, strictString } from './text.js'

/** A non-empty strict string (text.ts), then the shape checks. */
const identifier = () => strictString().min(1, 'must not be empty')

const ID_RULE = 'must be 1-64 of A-Z a-z 0-9 _ -'
const NAME_RULE = 'must be 1-64 of A-Z a-z 0-9 . _ -'
const LABEL_RULE = 'must be at most 128 characters without control characters'
const EXTENSION_RULE = 'must be 1-32 digits'
const EMAIL_RULE = 'must be an e-mail address'

const id = () => identifier().regex(ID_RE, ID_RULE)
const name = () => identifier().regex(NAME_RE, NAME_RULE)
const label = () => identifier().max(128, LABEL_RULE).regex(NO_CONTROL_RE, LABEL_RULE)
const extension = () => identifier().regex(DIGITS_RE, EXTENSION_RULE)
const did = () => identifier().min(2, PSTN_RULE).max(32, PSTN_RULE).regex(PSTN_RE, PSTN_RULE)
const email = () => identifier().regex(/^[\x21-\x7e]{3,254}$/, EMAIL_RULE)

/** The user identifiers, in the order they are looked up. */
export const userIdentifiers = {
  user_id: id().describe('Identifies the user by its id: 1-64 of A-Z a-z 0-9 _ - (starting with a letter or digit).'),
  user_name: name().describe('Identifies the user by its name (SIP username), case-insensitive: 1-64 of A-Z a-z 0-9 . _ - (starting with a letter or digit).'),
  user_label: label().describe('Identifies the user by its label: at most 128 characters without control characters; refused as ambiguous when several users share it.'),
  user_extension: extension().describe('Identifies the user by its extension: 1-32 digits.'),
  user_did: did().describe('Identifies the user by its DID: a PSTN number (optional + then 2-32 digits, * or #).'),
  user_email: email().describe('Identifies the user by its e-mail address: 3-254 printable ASCII characters without spaces.'),
} satisfies Record<UserKey, z.ZodType<string>>

/** The group identifiers, in the order they are looked up. */
export const groupIdentifiers = {
  group_id: id().describe('Identifies the group by its id: 1-64 of A-Z a-z 0-9 _ - (starting with a letter or digit).'),
  group_name: name().describe('Identifies the group by its name, case-insensitive: 1-64 of A-Z a-z 0-9 . _ - (starting with a letter or digit).'),
  group_label: label().describe('Identifies the group by its label: at most 128 characters without control characters; refused as ambiguous when several groups share it.'),
  group_extension: extension().describe('Identifies the group by its extension: 1-32 digits.'),
  group_did: did().describe('Identifies the group by its DID: a PSTN number (optional + then 2-32 digits, * or #).'),
} satisfies Record<GroupKey, z.ZodType<string>>

/** The identifiers as optional fields of a request schema, in their lookup order. */
export function optionalFields<T extends Record<string, z.ZodType>>(fields: T): { [K in keyof T]: z.ZodOptional<T[K]> } {
  return Object.fromEntries(Object.entries(fields).map(([k, s]) => [k, s.optional()])) as { [K in keyof T]: z.ZodOptional<T[K]> }
}

export const identifierSchemas: Readonly<Record<UserKey | GroupKey, z.ZodType<string>>> = { ...userIdentifiers, ...groupIdentifiers }

export const oneOf = (keys: readonly string[]): string => `one of ${keys.join(', ')}`

/**
 * The object-level rule "at least one of `keys`" (missing_parameter when none is present).
 * Written as a refinement (anyOf-of-required has no zod form); the schema carries its JSON
 * Schema form with `.meta(anyOfRequired(keys))`.
 */
export function requireOneOf(keys: readonly string[]) {
  return (body: object, ctx: z.core.$RefinementCtx): void => {
    if (keys.some((k) => Object.hasOwn(body, k))) return
    ctx.addIssue({ code: 'custom', message: `${oneOf(keys)} is required`, params: errorIdParams('missing_parameter'), input: body })
  }
}

/** "At least one of `keys`" in JSON Schema, for the OpenAPI document: what requireOneOf checks. */
export const anyOfRequired = (keys: readonly string[]): { anyOf: Array<{ required: string[] }> } => ({ anyOf: keys.map((k) => ({ required: [k] })) })

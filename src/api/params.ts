/**
 * Validators shared by the operations (DESIGN.md "HTTP API decisions"). Each returns the
 * checked value or the ApiError naming the parameter and the rule it broke. Absent and present
 * are told apart with hasOwn: `null` is a value of the wrong type, not an absence, so that a
 * client bug never silently turns into a default.
 */
import { DIGITS_RE, ID_RE, NAME_RE, isPstnNumber } from '../config/schema.js'
import {
  GROUP_KEYS,
  USER_KEYS,
  type DomainDirectory,
  type Group,
  type GroupKey,
  type User,
  type UserKey,
} from '../directory/directory.js'
import { apiError, type ApiError } from './errors.js'
import { err, ok, type Result } from '../util/result.js'

export type Body = Readonly<Record<string, unknown>>

export const invalid = (param: string, rule: string): ApiError => apiError('invalid_parameter', `${param}: ${rule}`)
export const missing = (param: string, rule = 'is required'): ApiError => apiError('missing_parameter', `${param} ${rule}`)

export const has = (body: Body, key: string): boolean => Object.hasOwn(body, key)

/** C0 and C1 control characters and DEL: line breaks end ESL commands and SIP headers. */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
export const CONTROL_RE = /[\x00-\x1f\x7f-\x9f]/

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** The request body must be a JSON object. */
export function asBody(body: unknown): Result<Body, ApiError> {
  return isPlainObject(body) ? ok(body) : err(apiError('invalid_parameter', 'the request body must be a JSON object'))
}

/** A typo must not pass silently: every key outside `allowed` is refused by name. */
export function rejectUnknown(obj: Body, allowed: readonly string[], where = ''): Result<void, ApiError> {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) return err(invalid(`${where}${key}`, 'unknown parameter'))
  }
  return ok(undefined)
}

/** A non-empty string without control characters, at most `max` characters. */
export function checkText(value: unknown, param: string, max: number): Result<string, ApiError> {
  if (typeof value !== 'string') return err(invalid(param, 'must be a string'))
  if (value.length === 0) return err(invalid(param, 'must not be empty'))
  if (value.length > max) return err(invalid(param, `must be at most ${max} characters`))
  if (CONTROL_RE.test(value)) return err(invalid(param, 'must not contain control characters'))
  return ok(value)
}

export function requiredText(body: Body, key: string, max: number): Result<string, ApiError> {
  if (!has(body, key)) return err(missing(key))
  return checkText(body[key], key, max)
}

export const MAX_TIMEOUT_SEC = 3600

/** Timeouts: a positive whole number of seconds up to 3600, as a JSON number or a string of digits. */
export function optionalTimeout(body: Body, key: string): Result<number | undefined, ApiError> {
  if (!has(body, key)) return ok(undefined)
  const v = body[key]
  const rule = `must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SEC}`
  let n: number
  if (typeof v === 'number') n = v
  else if (typeof v === 'string' && /^[0-9]{1,8}$/.test(v)) n = Number(v)
  else return err(invalid(key, rule))
  if (!Number.isInteger(n) || n < 1 || n > MAX_TIMEOUT_SEC) return err(invalid(key, rule))
  return ok(n)
}

/** Booleans: true/false, or the strings "true"/"false" (form-minded clients send those). */
export function optionalBoolean(body: Body, key: string): Result<boolean | undefined, ApiError> {
  if (!has(body, key)) return ok(undefined)
  const v = body[key]
  if (v === true || v === 'true') return ok(true)
  if (v === false || v === 'false') return ok(false)
  return err(invalid(key, 'must be true or false'))
}

/** calling_name: printable ASCII (0x20-0x7e), 1 to 64 characters. */
export function optionalCallingName(body: Body, key = 'calling_name'): Result<string | undefined, ApiError> {
  if (!has(body, key)) return ok(undefined)
  const v = body[key]
  if (typeof v !== 'string') return err(invalid(key, 'must be a string'))
  if (!/^[\x20-\x7e]{1,64}$/.test(v)) return err(invalid(key, 'must be 1 to 64 printable ASCII characters (0x20-0x7e)'))
  return ok(v)
}

export const MAX_URL_LENGTH = 2048

/**
 * An absolute http/https URL of printable ASCII without spaces, at most 2048 characters.
 * Returns the URL as the WHATWG parser serialises it (what every later fetch will use).
 */
export function checkHttpUrl(value: string): string | undefined {
  if (value.length > MAX_URL_LENGTH || !/^[\x21-\x7e]+$/.test(value)) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined
  return url.href
}

export function optionalCallbackUrl(body: Body, key = 'callback_url'): Result<string | undefined, ApiError> {
  if (!has(body, key)) return ok(undefined)
  const v = body[key]
  if (typeof v !== 'string') return err(invalid(key, 'must be a string'))
  const url = checkHttpUrl(v)
  if (url === undefined) return err(invalid(key, `must be an absolute http or https URL of at most ${MAX_URL_LENGTH} characters`))
  return ok(url)
}

/** calling_number / ani: one of the numbers the domain may present. */
export function checkCallingNumber(value: unknown, param: string, domain: DomainDirectory): Result<string, ApiError> {
  if (typeof value !== 'string') return err(invalid(param, 'must be a string'))
  if (!isPstnNumber(value)) return err(invalid(param, 'must be a PSTN number: optional + then 2-32 digits, * or #'))
  if (!domain.mayPresent(value)) return err(invalid(param, 'is not one of the calling numbers this domain may present'))
  return ok(value)
}

/**
 * The shape every identifier value must have: the same rules the configuration enforces on
 * the records themselves, so a value outside them can name nothing and is refused as invalid
 * (this also keeps break-out characters out of descriptions and logs).
 */
type Shape = { readonly test: (v: string) => boolean; readonly rule: string }
const byRegex = (re: RegExp, rule: string): Shape => ({ test: (v) => re.test(v), rule })
const ID_SHAPE = byRegex(ID_RE, 'must be 1-64 of A-Z a-z 0-9 _ -')
const NAME_SHAPE = byRegex(NAME_RE, 'must be 1-64 of A-Z a-z 0-9 . _ -')
const LABEL_SHAPE: Shape = { test: (v) => v.length <= 128 && !CONTROL_RE.test(v), rule: 'must be at most 128 characters without control characters' }
const EXTENSION_SHAPE = byRegex(DIGITS_RE, 'must be 1-32 digits')
const DID_SHAPE: Shape = { test: isPstnNumber, rule: 'must be a PSTN number: optional + then 2-32 digits, * or #' }
const EMAIL_SHAPE = byRegex(/^[\x21-\x7e]{3,254}$/, 'must be an e-mail address')

const SHAPES: Record<UserKey | GroupKey, Shape> = {
  user_id: ID_SHAPE,
  user_name: NAME_SHAPE,
  user_label: LABEL_SHAPE,
  user_extension: EXTENSION_SHAPE,
  user_did: DID_SHAPE,
  user_email: EMAIL_SHAPE,
  group_id: ID_SHAPE,
  group_name: NAME_SHAPE,
  group_label: LABEL_SHAPE,
  group_extension: EXTENSION_SHAPE,
  group_did: DID_SHAPE,
}

export function checkIdentifier(value: unknown, key: UserKey | GroupKey): Result<string, ApiError> {
  if (typeof value !== 'string') return err(invalid(key, 'must be a string'))
  if (value.length === 0) return err(invalid(key, 'must not be empty'))
  const shape = SHAPES[key]
  if (!shape.test(value)) return err(invalid(key, shape.rule))
  return ok(value)
}

interface RecordKind<R, K extends string> {
  readonly noun: 'user' | 'group'
  readonly lookup: (key: K, value: string) => readonly R[]
  readonly idOf: (r: R) => string
  readonly ambiguous: 'ambiguous_user' | 'ambiguous_group'
  readonly notFound: 'user_not_found' | 'group_not_found'
}

/**
 * Resolves the identifiers of one kind present in the body. Several are allowed when they all
 * name the same record; one naming nothing is `*_not_found`; one naming several records (a
 * label) or two naming different records is `ambiguous_*`. `undefined` when none is present.
 * The description never repeats the value, and is the same whether the record exists in
 * another domain or nowhere.
 */
function resolveRecord<R, K extends UserKey | GroupKey>(
  body: Body,
  keys: readonly K[],
  kind: RecordKind<R, K>,
): Result<R | undefined, ApiError> {
  let found: R | undefined
  let foundBy: K | undefined
  for (const key of keys) {
    if (!has(body, key)) continue
    const value = checkIdentifier(body[key], key)
    if (!value.ok) return value
    const matches = kind.lookup(key, value.value)
    const first = matches[0]
    if (first === undefined) return err(apiError(kind.notFound, `${key} names no ${kind.noun} of this domain`))
    if (matches.length > 1) {
      return err(apiError(kind.ambiguous, `${key} matches ${matches.length} ${kind.noun}s; identify the ${kind.noun} by another parameter`))
    }
    if (found !== undefined && foundBy !== undefined && kind.idOf(found) !== kind.idOf(first)) {
      return err(apiError(kind.ambiguous, `${foundBy} and ${key} name different ${kind.noun}s`))
    }
    found = first
    foundBy = key
  }
  return ok(found)
}

export function resolveUser(body: Body, domain: DomainDirectory, keys: readonly UserKey[] = USER_KEYS): Result<User | undefined, ApiError> {
  return resolveRecord<User, UserKey>(body, keys, {
    noun: 'user',
    lookup: (k, v) => domain.usersBy(k, v),
    idOf: (u) => u.id,
    ambiguous: 'ambiguous_user',
    notFound: 'user_not_found',
  })
}

export function resolveGroupRef(body: Body, domain: DomainDirectory, keys: readonly GroupKey[] = GROUP_KEYS): Result<Group | undefined, ApiError> {
  return resolveRecord<Group, GroupKey>(body, keys, {
    noun: 'group',
    lookup: (k, v) => domain.groupsBy(k, v),
    idOf: (g) => g.id,
    ambiguous: 'ambiguous_group',
    notFound: 'group_not_found',
  })
}

export const oneOf = (keys: readonly string[]): string => `one of ${keys.join(', ')}`

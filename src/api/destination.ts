/**
 * Destinations and PSTN parties as clients write them (interface.md "Destination / target"):
 *
 * - a string: `xml_url:` forms, then the directory order of DESIGN.md (user, group,
 *   extension, PSTN number);
 * - a PSTN string with an end_user prefix: `{name=Jane%20Doe,organization=ACME}0311112222`;
 * - the object form `{called_number, calling_number?, end_user?}` (PSTN numbers only).
 *
 * Everything returned is either a directory record or a value that matched a narrow
 * pattern; the only free text is end_user (no control characters, bounded), which later
 * stages must escape wherever they write it.
 */
import { isPstnNumber } from '../config/schema.js'
import type { DomainDirectory } from '../directory/directory.js'
import type { Destination, IvrSource } from '../origination/plan.js'
import { END_USER_FIELDS, type EndUser } from '../pbx/end-user.js'
import { apiError, type ApiError } from './errors.js'
import { checkInlineIvr } from './inline-ivr.js'
import { decodeInlineXml } from '../ivr/document/index.js'
import { CONTROL_RE, checkCallingNumber, checkHttpUrl, invalid, isPlainObject, missing, rejectUnknown, MAX_URL_LENGTH } from './params.js'
import { err, ok, type Result } from '../util/result.js'

type EndUserField = (typeof END_USER_FIELDS)[number]

/** A PSTN number with what the client said about it. */
export interface PstnParty {
  readonly number: string
  readonly callingNumber?: string
  readonly endUser?: EndUser
}

export const PSTN_RULE = 'must be a PSTN number: optional + then 2-32 digits, * or #'

/** Everything a destination string can name without a prefix: names, numbers (NAME_RE, digits, PSTN). */
const DESTINATION_RE = /^[A-Za-z0-9._+*#-]{1,64}$/

const XML_URL = 'xml_url:'
const INLINE = 'inline_xml://'
const MAX_FALLBACK_URLS = 8

const maxLength = (field: EndUserField): number => (field === 'avatar' ? 2048 : 256)
const isEndUserField = (k: string): k is EndUserField => (END_USER_FIELDS as readonly string[]).includes(k)

function checkEndUserValue(value: unknown, param: string, field: EndUserField): Result<string, ApiError> {
  if (typeof value !== 'string') return err(invalid(param, 'must be a string'))
  if (value.length === 0) return err(invalid(param, 'must not be empty'))
  if (value.length > maxLength(field)) return err(invalid(param, `must be at most ${maxLength(field)} characters`))
  if (CONTROL_RE.test(value)) return err(invalid(param, 'must not contain control characters'))
  return ok(value)
}

/** The end_user object: only the five string fields of interface.md. */
export function parseEndUserObject(value: unknown, param: string): Result<EndUser, ApiError> {
  if (!isPlainObject(value)) return err(invalid(param, `must be an object with some of ${END_USER_FIELDS.join(', ')}`))
  const known = rejectUnknown(value, END_USER_FIELDS, `${param}.`)
  if (!known.ok) return known
  const endUser: Partial<Record<EndUserField, string>> = {}
  for (const field of END_USER_FIELDS) {
    if (!Object.hasOwn(value, field)) continue
    const v = checkEndUserValue(value[field], `${param}.${field}`, field)
    if (!v.ok) return v
    endUser[field] = v.value
  }
  if (Object.keys(endUser).length === 0) return err(invalid(param, `must hold at least one of ${END_USER_FIELDS.join(', ')}`))
  return ok(endUser)
}

/**
 * `{key=value,...}<rest>`: keys are end_user fields, a raw value holds no `,` `}` `=`, and is
 * percent-decoded (so those characters can still be sent, encoded).
 */
export function parseEndUserPrefix(s: string, param: string): Result<{ endUser: EndUser; rest: string }, ApiError> {
  const close = s.indexOf('}')
  if (!s.startsWith('{') || close < 0) return err(invalid(param, 'an end_user prefix is written {key=value,...} before the number'))
  const inner = s.slice(1, close)
  if (inner.length === 0) return err(invalid(param, 'the end_user prefix {} is empty'))
  const endUser: Partial<Record<EndUserField, string>> = {}
  for (const pair of inner.split(',')) {
    const eq = pair.indexOf('=')
    if (eq < 0) return err(invalid(param, 'each end_user prefix entry is key=value; a value may not contain , } or = (percent-encode them)'))
    const key = pair.slice(0, eq)
    const raw = pair.slice(eq + 1)
    if (!isEndUserField(key)) return err(invalid(param, `unknown end_user prefix key; keys are ${END_USER_FIELDS.join(', ')}`))
    if (raw.includes('=')) return err(invalid(param, 'an end_user prefix value may not contain , } or = (percent-encode them)'))
    if (endUser[key] !== undefined) return err(invalid(param, `end_user prefix key ${key} is given twice`))
    let decoded: string
    try {
      decoded = decodeURIComponent(raw)
    } catch {
      return err(invalid(param, `end_user prefix value of ${key} has bad percent-encoding`))
    }
    const v = checkEndUserValue(decoded, `${param} end_user prefix ${key}`, key)
    if (!v.ok) return v
    endUser[key] = v.value
  }
  return ok({ endUser, rest: s.slice(close + 1) })
}

/** The object form `{called_number, calling_number?, end_user?}`. */
function parsePstnObject(value: Record<string, unknown>, param: string, domain: DomainDirectory): Result<PstnParty, ApiError> {
  const known = rejectUnknown(value, ['called_number', 'calling_number', 'end_user'], `${param}.`)
  if (!known.ok) return known
  if (!Object.hasOwn(value, 'called_number')) return err(missing(`${param}.called_number`))
  const number = value.called_number
  if (typeof number !== 'string') return err(invalid(`${param}.called_number`, 'must be a string'))
  if (!isPstnNumber(number)) return err(invalid(`${param}.called_number`, PSTN_RULE))
  let callingNumber: string | undefined
  if (Object.hasOwn(value, 'calling_number')) {
    const c = checkCallingNumber(value.calling_number, `${param}.calling_number`, domain)
    if (!c.ok) return c
    callingNumber = c.value
  }
  let endUser: EndUser | undefined
  if (Object.hasOwn(value, 'end_user')) {
    const e = parseEndUserObject(value.end_user, `${param}.end_user`)
    if (!e.ok) return e
    endUser = e.value
  }
  return ok(party(number, callingNumber, endUser))
}

const party = (number: string, callingNumber: string | undefined, endUser: EndUser | undefined): PstnParty => ({
  number,
  ...(callingNumber === undefined ? {} : { callingNumber }),
  ...(endUser === undefined ? {} : { endUser }),
})

/**
 * A party that is always reached through the domain's gateway (call_external target,
 * initiate_call pstn_number): a PSTN number as a string (end_user prefix allowed) or, where
 * `objectForm`, as the object form. The number is not looked up in the directory: the
 * client asked for an external leg.
 */
export function parsePstnParty(value: unknown, param: string, domain: DomainDirectory, objectForm: boolean): Result<PstnParty, ApiError> {
  if (isPlainObject(value) && objectForm) return parsePstnObject(value, param, domain)
  if (typeof value !== 'string') {
    return err(invalid(param, objectForm ? 'must be a string or an object {called_number, calling_number, end_user}' : 'must be a string'))
  }
  if (value.length === 0) return err(invalid(param, 'must not be empty'))
  if (value.startsWith('{')) {
    const p = parseEndUserPrefix(value, param)
    if (!p.ok) return p
    if (!isPstnNumber(p.value.rest)) return err(invalid(param, `the number after the end_user prefix ${PSTN_RULE}`))
    return ok(party(p.value.rest, undefined, p.value.endUser))
  }
  if (!isPstnNumber(value)) return err(invalid(param, PSTN_RULE))
  return ok({ number: value })
}

function parseXmlUrl(rest: string, param: string): Result<IvrSource, ApiError> {
  if (rest.startsWith(INLINE)) {
    const decoded = decodeInlineXml(rest.slice(INLINE.length))
    if (!decoded.ok) return err(apiError('invalid_xml', `${param}: ${decoded.error}`))
    const xml = decoded.value
    const checked = checkInlineIvr(xml)
    if (!checked.ok) return err(apiError('invalid_xml', `${param}: inline IVR document: ${checked.error}`))
    return ok({ kind: 'inline', xml })
  }
  const rule = `xml_url: takes http/https URLs (a comma list gives fallbacks, at most ${MAX_FALLBACK_URLS}, each at most ${MAX_URL_LENGTH} characters) or inline_xml://<base64>`
  const parts = rest.split(',')
  if (parts.length > MAX_FALLBACK_URLS) return err(invalid(param, rule))
  const urls: string[] = []
  for (const part of parts) {
    const url = checkHttpUrl(part)
    if (url === undefined) return err(invalid(param, rule))
    urls.push(url)
  }
  return ok({ kind: 'url', urls })
}

export interface DestinationRules {
  /** Name of the parameter, for error descriptions. */
  readonly param: string
  /** The object form is accepted (call_user, call_group). */
  readonly objectForm: boolean
  /** `xml_url:` forms are accepted (call_external only). */
  readonly xmlUrl: boolean
  /** PSTN numbers are accepted (not in call_external, whose destination is internal only). */
  readonly pstn: boolean
}

const notPstn = (param: string): ApiError =>
  invalid(param, 'calling_number and end_user apply to PSTN numbers only, and this number belongs to the domain (a user, group or extension)')

/**
 * A party that carries PSTN-only details (object form or end_user prefix) must be a PSTN
 * number that the directory does not claim: an internal number with an end_user would be
 * routed internally and the details silently dropped.
 */
function pstnDestination(p: PstnParty, domain: DomainDirectory, rules: DestinationRules): Result<Destination, ApiError> {
  if (domain.resolveDestination(p.number)?.kind !== 'pstn') return err(notPstn(rules.param))
  if (!rules.pstn) return err(apiError('destination_not_allowed', `${rules.param}: must be internal (a user, group, extension or DID); PSTN numbers are not allowed here`))
  return ok({ kind: 'pstn', ...p })
}

export function parseDestination(value: unknown, domain: DomainDirectory, rules: DestinationRules): Result<Destination, ApiError> {
  const { param } = rules
  if (isPlainObject(value) && rules.objectForm) {
    const p = parsePstnObject(value, param, domain)
    return p.ok ? pstnDestination(p.value, domain, rules) : p
  }
  if (typeof value !== 'string') {
    return err(invalid(param, rules.objectForm ? 'must be a string or an object {called_number, calling_number, end_user}' : 'must be a string'))
  }
  if (value.length === 0) return err(invalid(param, 'must not be empty'))

  if (value.startsWith(XML_URL)) {
    if (!rules.xmlUrl) return err(apiError('destination_not_allowed', `${param}: xml_url: destinations are only allowed in call_external`))
    if (!domain.hasPrivilege('ON_THE_FLY_IVR_ALLOWED')) {
      return err(apiError('privilege_required', `${param}: xml_url: destinations need the domain privilege ON_THE_FLY_IVR_ALLOWED`))
    }
    const source = parseXmlUrl(value.slice(XML_URL.length), param)
    return source.ok ? ok({ kind: 'ivr', source: source.value }) : source
  }

  if (value.startsWith('{')) {
    const p = parseEndUserPrefix(value, param)
    if (!p.ok) return p
    if (!isPstnNumber(p.value.rest)) return err(invalid(param, `the number after the end_user prefix ${PSTN_RULE}`))
    return pstnDestination(party(p.value.rest, undefined, p.value.endUser), domain, rules)
  }

  if (!DESTINATION_RE.test(value)) {
    return err(invalid(param, 'must be a user, group or extension name or number, a DID or a PSTN number (1-64 of A-Z a-z 0-9 . _ - + * #)'))
  }
  const match = domain.resolveDestination(value)
  if (match === undefined) return err(apiError('destination_not_found', `${param} names no user, group, extension or PSTN number of this domain`))
  if (match.kind === 'pstn' && !rules.pstn) {
    return err(apiError('destination_not_allowed', `${param}: must be internal (a user, group, extension or DID); PSTN numbers are not allowed here`))
  }
  return ok(match)
}

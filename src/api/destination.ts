/**
 * Destination resolution, after the schema parse: what a destination names, in the order of
 * the design — `xml_url:` forms (where allowed, with the privilege), then the directory (user,
 * group, extension), then a PSTN number. A destination that carries PSTN-only details (the
 * object form or an end_user prefix) must be a PSTN number the directory does not claim.
 *
 * Everything returned is either a directory record or a value that matched a narrow pattern;
 * the only free text is end_user (no control characters, bounded), which later stages must
 * escape wherever they write it.
 */
import type { DomainDirectory } from '../directory/directory.js'
import type { Destination } from '../origination/plan.js'
import { checkPartyPresentable } from './calling-number.js'
import { apiError, type ApiError } from './errors.js'
import { parseWith } from './schema/parse.js'
import { destinationSchema, parsePstnString, type DestinationInput, type PstnParty } from './schema/party.js'
import { XML_URL, parseXmlUrl } from './xml-url.js'
import { err, ok, type Result } from '../util/result.js'

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

/** Everything a destination string can name without a prefix: names, numbers (NAME_RE, digits, PSTN). */
const DESTINATION_RE = /^[A-Za-z0-9._+*#-]{1,64}$/

const invalid = (param: string, rule: string): ApiError => apiError('invalid_parameter', `${param}: ${rule}`)
const pstnNotAllowed = (param: string): ApiError =>
  apiError('destination_not_allowed', `${param}: must be internal (a user, group, extension or DID); PSTN numbers are not allowed here`)

/**
 * A party that carries PSTN-only details: an internal number with an end_user would be routed
 * internally and the details silently dropped, so it is refused.
 */
function pstnDestination(p: PstnParty, domain: DomainDirectory, rules: DestinationRules): Result<Destination, ApiError> {
  if (domain.resolveDestination(p.number)?.kind !== 'pstn') {
    return err(invalid(rules.param, 'calling_number and end_user apply to PSTN numbers only, and this number belongs to the domain (a user, group or extension)'))
  }
  if (!rules.pstn) return err(pstnNotAllowed(rules.param))
  return ok({ kind: 'pstn', ...p })
}

/** A destination the schema accepted (destinationSchema), resolved against the domain. */
export function resolveDestination(value: DestinationInput, domain: DomainDirectory, rules: DestinationRules): Result<Destination, ApiError> {
  const { param } = rules
  if (typeof value !== 'string') {
    const party = checkPartyPresentable(value, param, domain)
    return party.ok ? pstnDestination(party.value, domain, rules) : party
  }

  if (value.startsWith(XML_URL)) {
    if (!rules.xmlUrl) return err(apiError('destination_not_allowed', `${param}: xml_url: destinations are only allowed in call_external`))
    if (!domain.hasPrivilege('ON_THE_FLY_IVR_ALLOWED')) {
      return err(apiError('privilege_required', `${param}: xml_url: destinations need the domain privilege ON_THE_FLY_IVR_ALLOWED`))
    }
    const source = parseXmlUrl(value.slice(XML_URL.length), param)
    return source.ok ? ok({ kind: 'ivr', source: source.value }) : source
  }

  if (value.startsWith('{')) {
    const p = parsePstnString(value)
    return p.ok ? pstnDestination(p.value, domain, rules) : err(invalid(param, p.error))
  }

  if (!DESTINATION_RE.test(value)) {
    return err(invalid(param, 'must be a user, group or extension name or number, a DID or a PSTN number (1-64 of A-Z a-z 0-9 . _ - + * #)'))
  }
  const match = domain.resolveDestination(value)
  if (match === undefined) return err(apiError('destination_not_found', `${param} names no user, group, extension or PSTN number of this domain`))
  if (match.kind === 'pstn' && !rules.pstn) return err(pstnNotAllowed(param))
  return ok(match)
}

/** A destination straight from a client (the CTI's transfer command): the schema, then the resolution. */
export function parseDestination(value: unknown, domain: DomainDirectory, rules: DestinationRules): Result<Destination, ApiError> {
  const parsed = parseWith(destinationSchema(rules.objectForm), value, [rules.param])
  return parsed.ok ? resolveDestination(parsed.value, domain, rules) : parsed
}

/**
 * Reads what the dialplan request tells about the calling channel, re-validating every value:
 * channel variables arrive from the network (a form field), and some of them (SIP headers,
 * caller id) are chosen by whoever sent the call. Nothing here trusts a value because of its
 * name: ids are looked up in the domain's directory, numbers must match the PSTN pattern and be
 * presentable by the domain, free text must decode to the expected shape.
 *
 * The variables are those of pbx/channel-vars.ts, as mod_xml_curl sends them: `variable_<name>`
 * (test/fixtures/freeswitch/xml_curl/04-originate-1002-xml-default.txt: the originate `{}`
 * variables appear as `variable_origination_uuid`, ...).
 */
import { isPstnNumber } from '../config/schema.js'
import type { DomainDirectory, Group, User } from '../directory/directory.js'
import { END_USER_FIELDS, type EndUser } from '../pbx/end-user.js'
import { CHANNEL_VARS, type Operation } from '../pbx/channel-vars.js'
import { isRecordingId } from '../recording/id.js'
import { err, ok, type Result } from '../util/result.js'
import type { FetchForm } from './form.js'
import type { RouteTarget } from './route-target.js'

/** Request ids and IVR keys: the daemon generates them (UUIDs); anything else is refused. */
export const REQUEST_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
const OPERATIONS: readonly Operation[] = ['call_user', 'call_group', 'call_external', 'initiate_call']
/** encodeURIComponent output: what an honest `cod_end_user` looks like. */
const PCT_TEXT_RE = /^[A-Za-z0-9%._~!*'()-]*$/
const END_USER_MAX = 8192
const END_USER_FIELD_MAX = 1024

const varField = (name: string): string => `variable_${name}`

/** The calling channel as far as routing needs it. */
export interface LegContext {
  /** Set when the channel is one the daemon originated for this domain, or a leg our bridge created for it. */
  readonly requestId?: string
  /** `originator` (originated legs) or `destination` (legs of our bridges), with requestId. */
  readonly role?: 'originator' | 'destination'
  readonly operation?: Operation
  /** Group context of the request (validated against the directory). */
  readonly groupContext?: Group
  readonly endUser?: EndUser
  /** Calling number the request asked to present (presentable by the domain). */
  readonly callingNumber?: string
  /** The domain user whose phone authenticated this call (inbound calls from phones). */
  readonly caller?: User
  /** The recording the daemon made for this leg's call (a UUID: it becomes a file name). */
  readonly recordingId?: string
}

/** Optional check that an IVR source was registered for a request (see IvrHandoff in router.ts). */
export type IvrKnown = (domain: string, key: string) => boolean

const sameDomain = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()

/**
 * `cod_end_user` holds percent-encoded JSON on the channel (pbx/channel-vars.ts). FreeSWITCH
 * does not encode a `%XX` that is already there when it builds the form (switch_utils.c
 * switch_url_encode → switch_url_encode_opt with double_encode false, v1.10.12), so after the
 * form is decoded once the field holds the JSON text itself. A sender that encodes every `%`
 * (a simulator, a proxy) leaves it percent-encoded. Both decode to the same object, which is
 * checked field by field and written out again by us.
 */
function readEndUser(raw: string): Result<EndUser, string> {
  if (raw.length > END_USER_MAX) return err('cod_end_user is too long')
  let text = raw
  if (!raw.startsWith('{')) {
    if (!PCT_TEXT_RE.test(raw)) return err('cod_end_user is neither JSON nor percent-encoded JSON')
    try {
      text = decodeURIComponent(raw)
    } catch {
      return err('cod_end_user has a bad percent-encoding')
    }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return err('cod_end_user is not JSON')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return err('cod_end_user is not an object')
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(parsed)) {
    if (!(END_USER_FIELDS as readonly string[]).includes(k)) return err(`cod_end_user has an unknown field ${k}`)
    if (typeof v !== 'string' || v.length > END_USER_FIELD_MAX) return err(`cod_end_user.${k} is not a string`)
    out[k] = v
  }
  return ok(out)
}

/**
 * The calling channel. A variable that is present must be valid (else an error: the whole
 * request is answered "not found"); absent variables are simply absent.
 */
export function readLeg(form: FetchForm, domain: DomainDirectory): Result<LegContext, string> {
  const v = (name: string) => form.get(varField(name))
  const direction = form.get('Call-Direction') ?? form.get('Caller-Direction')
  const leg: {
    requestId?: string
    role?: 'originator' | 'destination'
    operation?: Operation
    groupContext?: Group
    endUser?: EndUser
    callingNumber?: string
    caller?: User
    recordingId?: string
  } = {}

  const requestId = v(CHANNEL_VARS.requestId)
  if (requestId !== undefined) {
    // Only a channel FreeSWITCH originated (outbound) can carry our request id: an inbound
    // call's variables come from its SIP peer and are never trusted as ours.
    if (direction !== 'outbound') return err('cod_request_id on a channel that is not outbound')
    if (!REQUEST_ID_RE.test(requestId)) return err('cod_request_id is malformed')
    const legDomain = v(CHANNEL_VARS.domain)
    if (legDomain === undefined || !sameDomain(legDomain, domain.name)) return err('cod_domain is not the context domain')
    const role = v(CHANNEL_VARS.role)
    if (role !== undefined && role !== 'originator' && role !== 'destination') return err('cod_role is unknown')
    leg.requestId = requestId
    if (role !== undefined) leg.role = role

    const operation = v(CHANNEL_VARS.operation)
    if (operation !== undefined) {
      const op = OPERATIONS.find((o) => o === operation)
      if (op === undefined) return err('cod_operation is unknown')
      leg.operation = op
    }
    const groupId = v(CHANNEL_VARS.groupId)
    if (groupId !== undefined) {
      const group = domain.groupById(groupId)
      if (group === undefined) return err('cod_group_id is not a group of the domain')
      leg.groupContext = group
    }
    const calling = v(CHANNEL_VARS.destCallingNumber)
    if (calling !== undefined) {
      if (!isPstnNumber(calling) || !domain.mayPresent(calling)) return err('cod_dest_calling_number may not be presented by the domain')
      leg.callingNumber = calling
    }
    const endUser = v(CHANNEL_VARS.endUser)
    if (endUser !== undefined) {
      const parsed = readEndUser(endUser)
      if (!parsed.ok) return parsed
      leg.endUser = parsed.value
    }
    // Checked here, before anything turns it into a file name: only a UUID of ours names a file.
    const recordingId = v(CHANNEL_VARS.recordingId)
    if (recordingId !== undefined) {
      if (!isRecordingId(recordingId)) return err('cod_recording_id is not a recording id')
      leg.recordingId = recordingId
    }
  }

  // A phone of the domain: sofia sets sip_authorized, user_name and domain_name once the
  // INVITE's credentials were checked against our directory (sofia_reg.c sofia_reg_parse_auth,
  // test/fixtures/freeswitch/xml_curl/05-invite-1004-to-1002.txt REQUEST 3).
  if (direction === 'inbound' && v('sip_authorized') === 'true') {
    const userName = v('user_name')
    const userDomain = v('domain_name')
    if (userName !== undefined && userDomain !== undefined && sameDomain(userDomain, domain.name)) {
      const caller = domain.userBySipName(userName)
      if (caller !== undefined) leg.caller = caller
    }
  }
  return ok(leg)
}

/** The destination an originated leg carries, checked against the directory of its domain. */
export function readOriginatedDestination(
  form: FetchForm,
  domain: DomainDirectory,
  leg: LegContext,
  ivrKnown?: IvrKnown,
): Result<RouteTarget, string> {
  const kind = form.get(varField(CHANNEL_VARS.destKind))
  const value = form.get(varField(CHANNEL_VARS.destValue))
  if (kind === undefined || value === undefined) return err('cod_dest_kind or cod_dest_value missing')
  switch (kind) {
    case 'user': {
      const user = domain.userById(value)
      return user === undefined ? err('cod_dest_value is not a user of the domain') : ok({ kind, user })
    }
    case 'group': {
      const group = domain.groupById(value)
      return group === undefined ? err('cod_dest_value is not a group of the domain') : ok({ kind, group })
    }
    case 'extension': {
      const extension = domain.extension(value)
      return extension === undefined
        ? err('cod_dest_value is not an extension of the domain')
        : ok({ kind, number: extension.number, xmlUrl: extension.xml_url })
    }
    case 'pstn':
      return isPstnNumber(value) ? ok({ kind, number: value }) : err('cod_dest_value is not a PSTN number')
    case 'ivr': {
      // The document itself stays in the daemon (registered under the request id before the
      // originate); the channel only names it.
      if (!REQUEST_ID_RE.test(value)) return err('cod_dest_value is not an IVR key')
      if (ivrKnown !== undefined ? !ivrKnown(domain.name, value) : value !== leg.requestId) {
        return err('cod_dest_value names no IVR document of this request')
      }
      return ok({ kind, key: value })
    }
    default:
      return err('cod_dest_kind is unknown')
  }
}

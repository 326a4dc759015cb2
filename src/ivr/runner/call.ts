/**
 * Reads a CHANNEL_PARK event: is this a channel our dialplan handed to the IVR runner, which
 * document does it name, and what are its call parameters.
 *
 * The dialplan (xmlcurl/routes.ts, IVR_VARS) answers and parks the channel with
 * `cod_ivr_url` (percent-encoded URL: an extension bound to an XML URL, with
 * `cod_ivr_extension`) or `cod_ivr_request` (the key of an API request's `xml_url:` source),
 * plus `cod_domain`; they arrive as `variable_<name>` (CHANNEL_PARK carries the channel's
 * variables: switch_channel.c switch_channel_event_set_extended_data). Nothing is trusted for its
 * name: the domain must be ours, the URL must be one of the domain's extension URLs, the key
 * must look like one the daemon made.
 *
 * Call parameters (docs/ivr.md "Fetching"): for a call that came in (a phone dialing the extension) the
 * caller profile says it all (Caller-Destination-Number, Caller-Caller-ID-*). For a leg the
 * daemon originated, the caller profile's destination is our routing extension and the caller
 * id is flipped (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt:
 * `variable_channel_cid_flipped`, Caller-Caller-ID-Number is the party called), so the called
 * number is the one the leg dialled (`variable_sip_to_user`,
 * test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt; or, flipped,
 * Caller-Caller-ID-Number) and the calling number the one we presented
 * (`origination_caller_id_number`, or, flipped, Caller-Callee-ID-Number).
 */
import type { Directory, DomainDirectory } from '../../directory/directory.js'
import { CHANNEL_VARS, ROUTE_EXTENSION } from '../../pbx/channel-vars.js'
import { PATTERNS } from '../../pbx/commands.js'
import { varHeader, type EventVariable } from '../../pbx/event-headers.js'
import type { FsEvent } from '../../pbx/types.js'
import { err, ok, type Result } from '../../util/result.js'
import { FetchForm } from '../../xmlcurl/form.js'
import { readLeg, REQUEST_ID_RE, type LegContext } from '../../xmlcurl/leg.js'
import { IVR_VARS } from '../../xmlcurl/routes.js'
import { checkUrl } from '../syntax/checks.js'
import type { CallDescription } from '../fetch/call-params.js'

/** What the parked channel names as its document. */
export type ParkedSource =
  /** An extension's XML URL (the directory's value). */
  | { readonly kind: 'url'; readonly url: string }
  /** The key of a registered API source. */
  | { readonly kind: 'request'; readonly key: string }

export interface ParkedCall {
  readonly uuid: string
  readonly domain: DomainDirectory
  readonly source: ParkedSource
  readonly answered: boolean
  readonly call: CallDescription
  readonly leg: LegContext
}

const v = (e: FsEvent, name: EventVariable): string | undefined => e[varHeader(name)]

/** Whether the event is a park of a channel handed to the IVR runner (whatever its validity). */
const isIvrPark = (e: FsEvent): boolean =>
  e['Event-Name'] === 'CHANNEL_PARK' && (v(e, IVR_VARS.url) !== undefined || v(e, IVR_VARS.request) !== undefined)

const present = (s: string | undefined): string | undefined => (s === undefined || s === '' ? undefined : s)

const time = (s: string | undefined): string | undefined => (s !== undefined && /^[1-9]\d*$/.test(s) ? s : undefined)

/** The event's headers as the form the dialplan would have received (same names), for readLeg. */
function asForm(e: FsEvent): FetchForm {
  const params = new URLSearchParams()
  for (const [k, val] of Object.entries(e)) if (val !== undefined) params.append(k, val)
  return new FetchForm(params)
}

function source(e: FsEvent, domain: DomainDirectory): Result<ParkedSource, string> {
  const rawUrl = v(e, IVR_VARS.url)
  if (rawUrl !== undefined) {
    let url: string
    try {
      url = decodeURIComponent(rawUrl)
    } catch {
      return err('cod_ivr_url is not percent-encoded')
    }
    const number = v(e, IVR_VARS.extension)
    const bound = number !== undefined ? domain.extension(number) : domain.config.extensions.find((x) => x.xml_url === url)
    if (bound === undefined || bound.xml_url !== url) return err('cod_ivr_url is not the XML URL of an extension of the domain')
    const checked = checkUrl(bound.xml_url)
    return checked.ok ? ok({ kind: 'url', url: checked.value }) : err(`extension ${bound.number}: ${checked.error}`)
  }
  const key = v(e, IVR_VARS.request)
  if (key === undefined || !REQUEST_ID_RE.test(key)) return err('cod_ivr_request is malformed')
  return ok({ kind: 'request', key })
}

/** undefined: not a channel for the runner; an error: ours, but unusable (logged, hung up). */
export function readParkedCall(e: FsEvent, directory: Directory): Result<ParkedCall, string> | undefined {
  if (!isIvrPark(e)) return undefined
  const uuid = e['Unique-ID'] ?? ''
  if (!PATTERNS.uuid.test(uuid)) return err('Unique-ID is not a uuid')
  const domainName = v(e, CHANNEL_VARS.domain)
  const domain = domainName === undefined ? undefined : directory.domain(domainName)
  if (domain === undefined) return err('cod_domain is not one of our domains')
  const src = source(e, domain)
  if (!src.ok) return src

  const legRead = readLeg(asForm(e), domain)
  const leg: LegContext = legRead.ok ? legRead.value : {}
  const outbound = e['Call-Direction'] === 'outbound'
  const destination = present(e['Caller-Destination-Number'])
  // switch_channel_flip_cid (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt:
  // Caller-Caller-ID-Number is the number dialled once flipped).
  const flipped = v(e, 'channel_cid_flipped') !== undefined
  const calledNumber = outbound
    ? (present(v(e, 'sip_to_user')) ??
      (flipped ? present(e['Caller-Caller-ID-Number']) : undefined) ??
      present(v(e, 'dialed_user')) ??
      (destination !== ROUTE_EXTENSION ? destination : undefined))
    : destination
  const callingNumber = outbound
    ? (present(v(e, 'origination_caller_id_number')) ?? present(e['Caller-Callee-ID-Number']))
    : present(e['Caller-Caller-ID-Number'])
  const callerName = outbound ? present(v(e, 'origination_caller_id_name')) : present(e['Caller-Caller-ID-Name'])
  const answered = e['Answer-State'] === 'answered'

  const userId = v(e, CHANNEL_VARS.userId)
  const user = (userId !== undefined ? domain.userById(userId) : undefined) ?? leg.caller
  const groupId = v(e, CHANNEL_VARS.groupId)
  const group = (groupId !== undefined ? domain.groupById(groupId) : undefined) ?? leg.groupContext

  const call: CallDescription = {
    uuid,
    status: answered ? 'in-progress' : 'ringing',
    direction: outbound ? 'outbound' : 'inbound',
    domainName: domain.name,
    anonymous: e['Caller-Privacy-Hide-Number'] === 'true' || /^anonymous$/i.test(callingNumber ?? ''),
    ...(calledNumber !== undefined ? { calledNumber } : {}),
    ...(callingNumber !== undefined ? { callingNumber } : {}),
    ...(callerName !== undefined ? { callerName } : {}),
    ...(time(e['Caller-Channel-Created-Time']) !== undefined ? { startTime: time(e['Caller-Channel-Created-Time']) } : {}),
    ...(time(e['Caller-Channel-Answered-Time']) !== undefined ? { answerTime: time(e['Caller-Channel-Answered-Time']) } : {}),
    ...(user !== undefined ? { user: { id: user.id, name: user.name } } : {}),
    ...(group !== undefined ? { group: { id: group.id, name: group.name } } : {}),
  }
  return ok({ uuid, domain, source: src.value, answered, call, leg })
}

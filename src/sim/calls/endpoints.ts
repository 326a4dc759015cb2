/**
 * What one leg of a dial string becomes: a channel to create (with its far end) or an
 * immediate failure without any channel event.
 *
 * - `error/<cause>` (mod_dptools.c error_outgoing_channel): fails with that cause, no channel
 *   (test/fixtures/freeswitch/esl/16-sofia-contact-not-registered.txt: error/user_not_registered →
 *   USER_NOT_REGISTERED; 22: error/user_busy).
 * - `sofia/<profile>/[sip:]user@host:port`: a contact. A registered terminal behaves as
 *   configured; any other address gets 503 (test/fixtures/freeswitch/esl/22-misc-replies.txt: dead
 *   port → NORMAL_TEMPORARY_FAILURE). Another profile name: INVALID_PROFILE (mod_sofia.c
 *   sofia_outgoing_channel).
 * - `sofia/gateway/<gw>/<number>`: the PSTN through the domain whose `gateway` is <gw>; an
 *   unknown gateway fails with INVALID_GATEWAY before any channel event (mod_sofia.c
 *   sofia_outgoing_channel: "Invalid Gateway").
 * - `user/<name>[@<domain>]` (mod_dptools.c user_outgoing_channel): directory lookup
 *   (SUBSCRIBER_ABSENT when unknown, test/fixtures/freeswitch/esl/15-unknown-user-9999.txt), then
 *   the user's dial-string with `${dialed_user}`, `${dialed_domain}` and `${sofia_contact(...)}`
 *   expanded, dialed in place.
 * - anything else: CHAN_NOT_IMPLEMENTED (switch_core_session_outgoing_channel: no such endpoint).
 */
import type { Switch } from '../core/switch.js'
import { str2cause } from '../model/causes.js'
import type { FarEnd } from '../model/channel.js'
import { farEndOf, TERMINAL_HOST } from '../model/registry.js'
import { parseDialString, varsToMap } from '../text/dialstring.js'
import type { VarList } from '../text/fs-strings.js'
import { locateUser } from './directory.js'

export type LegPlan =
  | { readonly kind: 'fail'; readonly cause: string }
  | {
      readonly kind: 'channel'
      readonly name: string
      /** Caller-Destination-Number of the new leg. */
      readonly destination: string
      /** Variables in the order they appear on the channel. */
      readonly vars: VarList
      readonly farEnd: FarEnd
      readonly endpoint: 'sofia' | 'user'
    }

/** Merges variable lists: the first occurrence keeps its place, later ones win the value. */
export function mergeVars(...lists: VarList[]): VarList {
  const m = new Map<string, string>()
  for (const list of lists) for (const [k, v] of list) m.set(k, v)
  return [...m.entries()]
}

const MAX_DEPTH = 4

export async function resolveLeg(sw: Switch, endpoint: string, vars: VarList, depth = 0): Promise<LegPlan[]> {
  const slash = endpoint.indexOf('/')
  const tech = slash < 0 ? endpoint : endpoint.slice(0, slash)
  const rest = slash < 0 ? '' : endpoint.slice(slash + 1)
  switch (tech.toLowerCase()) {
    case 'error':
      return [{ kind: 'fail', cause: str2cause(rest) }]
    case 'sofia':
      return [sofiaLeg(sw, rest, vars)]
    case 'user':
      if (depth >= MAX_DEPTH) return [{ kind: 'fail', cause: 'INVALID_IE_CONTENTS' }]
      return userLeg(sw, rest, vars, depth)
    default:
      return [{ kind: 'fail', cause: 'CHAN_NOT_IMPLEMENTED' }]
  }
}

function sofiaLeg(sw: Switch, rest: string, vars: VarList): LegPlan {
  const slash = rest.indexOf('/')
  if (slash < 0) return { kind: 'fail', cause: 'INVALID_URL' }
  const profile = rest.slice(0, slash)
  const target = rest.slice(slash + 1)
  if (profile === 'gateway') {
    const [gw, number] = target.split('/', 2)
    if (gw === undefined || gw === '' || number === undefined || number === '') return { kind: 'fail', cause: 'INVALID_URL' }
    if (sw.registry.gatewayDomain(gw) === undefined) return { kind: 'fail', cause: 'INVALID_GATEWAY' }
    const dest = number.split(';')[0] as string
    return {
      kind: 'channel',
      name: `sofia/${sw.profile}/${dest}`,
      destination: dest,
      vars: mergeVars(
        vars,
        [
          ['sip_gateway_name', gw],
          ['sip_destination_url', `sip:${dest}@${gw}`],
        ],
        sofiaVars(sw, `${dest}@${gw}`, gw),
      ),
      farEnd: farEndOf(sw.registry.pstnBehaviour(gw, dest), 'pstn', dest),
      endpoint: 'sofia',
    }
  }
  if (profile !== sw.profile) return { kind: 'fail', cause: 'INVALID_PROFILE' }
  const uri = target.replace(/^sips?:/i, '').split(';')[0] as string
  const at = uri.lastIndexOf('@')
  const user = at < 0 ? '' : uri.slice(0, at)
  const hostPort = at < 0 ? uri : uri.slice(at + 1)
  const colon = hostPort.lastIndexOf(':')
  const host = colon < 0 ? hostPort : hostPort.slice(0, colon)
  const port = colon < 0 ? 5060 : Number(hostPort.slice(colon + 1))
  const terminal = sw.registry.terminalAt(host, port)
  const farEnd: FarEnd =
    terminal === undefined
      ? { kind: 'terminal', label: uri, refuse: 'deadContact' }
      : farEndOf(terminal.behaviour, 'terminal', `${terminal.user.name}#${terminal.index}`)
  const vm = varsToMap(vars)
  return {
    kind: 'channel',
    name: `sofia/${sw.profile}/${uri}`,
    destination: user,
    vars: mergeVars(
      [['sip_destination_url', `sip:${uri}`]],
      vars,
      sofiaVars(sw, uri, hostPort, vm.get('sip_invite_domain') ?? TERMINAL_HOST),
    ),
    farEnd,
    endpoint: 'sofia',
  }
}

/**
 * The sofia variables a new outbound leg carries from CHANNEL_CREATE on
 * (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt).
 */
function sofiaVars(sw: Switch, reqUri: string, toHost: string, fromHost = TERMINAL_HOST): VarList {
  return [
    ['originate_early_media', 'false'],
    ['rtp_use_codec_string', 'PCMU,PCMA'],
    ['sip_outgoing_contact_uri', `<sip:mod_sofia@${TERMINAL_HOST}:5060>`],
    ['sip_req_uri', reqUri],
    ['sip_to_host', toHost],
    ['sip_from_host', fromHost],
    ['sofia_profile_name', sw.profile],
    ['recovery_profile_name', sw.profile],
    ['sofia_profile_url', `sip:mod_sofia@${TERMINAL_HOST}:5060`],
  ]
}

async function userLeg(sw: Switch, rest: string, vars: VarList, depth: number): Promise<LegPlan[]> {
  const at = rest.indexOf('@')
  const user = at < 0 ? rest : rest.slice(0, at)
  const domain = at < 0 ? (sw.globals.get('domain') ?? '') : rest.slice(at + 1)
  if (user === '' || domain === '') return [{ kind: 'fail', cause: 'SUBSCRIBER_ABSENT' }]
  const found = await locateUser(sw, user, domain, vars)
  if (found === undefined) return [{ kind: 'fail', cause: 'SUBSCRIBER_ABSENT' }]
  if (found.dialString === undefined) return [{ kind: 'fail', cause: 'MANDATORY_IE_MISSING' }]
  const dialed: VarList = [
    ['dialed_user', found.id],
    ['dialed_domain', domain],
  ]
  // switch_event_expand_headers over the leg's variables plus dialed_user/dialed_domain.
  const lookup = varsToMap(vars, dialed)
  const dest = sw.expandLookup((n) => lookup.get(n), found.dialString)
  // mod_dptools.c: "Waddya Daft?" refuses a dial-string that would call the same user/ again.
  if (dest.toLowerCase().includes(`user/${found.id.toLowerCase()}`)) return [{ kind: 'fail', cause: 'INVALID_IE_CONTENTS' }]
  const parsed = parseDialString(dest)
  if (parsed === undefined) return [{ kind: 'fail', cause: 'DESTINATION_OUT_OF_ORDER' }]
  const presence: VarList = found.dialString.includes('presence_id=') ? [] : [['presence_id', `${found.id}@${domain}`]]
  const plans: LegPlan[] = []
  for (const leg of parsed.groups[0] ?? []) {
    const inner = await resolveLeg(sw, leg.endpoint, mergeVars(vars, dialed, parsed.globals, leg.vars, presence, found.variables), depth + 1)
    for (const p of inner) {
      plans.push(p.kind === 'channel' ? { ...p, vars: mergeVars(p.vars, [['originate_endpoint', 'user']]), endpoint: 'user' } : p)
    }
  }
  return plans.length > 0 ? plans : [{ kind: 'fail', cause: 'DESTINATION_OUT_OF_ORDER' }]
}

/**
 * Dialplan actions per destination kind. Pure: a validated destination and the calling leg in,
 * a list of `<action application data>` out. Every piece of data goes through `safe()`.
 *
 * Variables on the legs the bridge creates: a channel variable set with `set` stays on the
 * calling channel; `export` also puts it in the channel's `export_vars`, and every leg a bridge
 * or originate creates from that channel receives the listed variables (switch_channel.c,
 * switch_channel_export_variable_var_check and switch_channel_process_export, v1.10.12;
 * test/fixtures/freeswitch/xml_curl/04-originate-1002-xml-default.txt: "EXPORTING[export_vars]
 * [dialed_extension]=[1002] to event"). A name prefixed
 * `nolocal:` is exported to the new legs only: the calling channel keeps its own value (its
 * cod_role stays `originator`, its cod_user_id stays the originating user). Without an export
 * the new legs carry nothing of ours (test/fixtures/freeswitch/esl/19-originate-xml-default.txt:
 * the B leg has no my_request_id).
 *
 * Bridges and their outcome: `hangup_after_bridge=true` ends the calling channel when an
 * answered bridge ends; `continue_on_fail=true` lets the next action run when a bridge fails,
 * and the failing bridge leaves its cause in `originate_disposition` (switch_ivr_originate.c,
 * end of switch_ivr_originate: `originate_disposition` = switch_channel_cause2str(cause)), which
 * the final `hangup ${originate_disposition}` hands on as the hangup cause (mod_dptools.c
 * hangup_function → switch_channel_str2cause; an unknown text gives NORMAL_CLEARING).
 */
import type { DomainDirectory, Group, User } from '../directory/directory.js'
import type { EndUser } from '../pbx/end-user.js'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import type { LegContext } from './leg.js'
import type { RouteTarget } from './route-target.js'
import { pct, safe } from './values.js'

export interface Action {
  readonly app: string
  readonly data?: string
}

/** Re-exported so that callers of routeActions (the IVR's Transfer) find its input type beside it. */
export type { RouteTarget }

/**
 * Variables the IVR runner (a later part) reads from the CHANNEL_PARK event of a channel our
 * dialplan parked (`variable_<name>` in the event):
 * - `cod_ivr_url`: percent-encoded URL of the XML document (extensions bound to an XML URL);
 *   decode with decodeURIComponent.
 * - `cod_ivr_extension`: the extension number that led here (extensions only).
 * - `cod_ivr_request`: the key under which the daemon holds the IVR source of an API request
 *   (`xml_url:` destinations; for extensions reached by an originated leg, the request id).
 * Together with `cod_domain` (always set) and `cod_request_id` (originated legs). A parked
 * channel with none of cod_ivr_url / cod_ivr_request is not the runner's.
 */
export const IVR_VARS = {
  url: 'cod_ivr_url',
  extension: 'cod_ivr_extension',
  request: 'cod_ivr_request',
} as const

/** Ringback the calling channel hears while a destination rings (the vanilla Local_Extension tone). */
const RINGBACK = '%(2000,4000,440,480)'

const set = (name: string, value: string): Action => ({ app: 'set', data: `${name}=${safe(value)}` })
const exportBoth = (name: string, value: string): Action => ({ app: 'export', data: `${name}=${safe(value)}` })
const exportRemote = (name: string, value: string): Action => ({ app: 'export', data: `nolocal:${name}=${safe(value)}` })
const hangupWithBridgeCause: Action = { app: 'hangup', data: '${originate_disposition}' }

/** `user/<name>@<domain>`: the directory dial string rings every terminal of the user. */
const userTarget = (domain: DomainDirectory, user: User): string => `user/${safe(user.name)}@${safe(domain.name)}`

function endUserExports(endUser: EndUser): Action[] {
  const actions = [exportBoth(CHANNEL_VARS.endUser, pct(JSON.stringify(endUser)))]
  for (const [field, value] of Object.entries(endUser)) {
    if (typeof value === 'string') actions.push(exportBoth(`${CHANNEL_VARS.endUser}_${field}`, pct(value)))
  }
  return actions
}

/**
 * Group hunt budget: member i rings for min(member_answer_timeout, what is left of answer_timeout
 * after the members before it rang their full time). originate_timeout / call_timeout bound
 * each `|` failover segment and each bridge separately (switch_ivr_originate.c resets `start`
 * for every segment), so nothing in FreeSWITCH bounds the whole hunt: the budget is split here,
 * and members left without time are not rung. The hunt can end earlier (a member that fails at
 * once gives no time to the next), never later.
 * @internal Exported for tests: test/xmlcurl checks the plan without the document.
 */
export function huntPlan(members: readonly User[], memberTimeoutSec: number, totalSec: number): Array<{ user: User; timeoutSec: number }> {
  const plan: Array<{ user: User; timeoutSec: number }> = []
  let used = 0
  for (const user of members) {
    const timeoutSec = Math.min(memberTimeoutSec, totalSec - used)
    if (timeoutSec <= 0) break
    plan.push({ user, timeoutSec })
    used += timeoutSec
  }
  return plan
}

/**
 * One bridge per member, in order, each ringing all the member's terminals. Not one bridge with
 * `|` failover: a dial string with more than one element makes the originate "forked", and a
 * `user/` endpoint in a forked dial calls only the first contact of the user
 * (mod_dptools.c user_outgoing_channel sets SOF_NOBLOCK under SOF_FORKED_DIAL, and
 * switch_ivr_originate then logs "Only calling the first element in the list in this mode").
 * `call_timeout` bounds the member's bridge and the `user/` endpoint's inner originate (which
 * reads call_timeout of the calling channel first, then leg_timeout); `leg_timeout` bounds each
 * leg of the member.
 */
function huntActions(domain: DomainDirectory, group: Group): Action[] {
  const plan = huntPlan(domain.members(group), group.member_answer_timeout, group.answer_timeout)
  if (plan.length === 0) return [{ app: 'hangup', data: 'NO_ROUTE_DESTINATION' }]
  const actions: Action[] = []
  for (const { user, timeoutSec } of plan) {
    const t = String(timeoutSec)
    actions.push(
      exportRemote(CHANNEL_VARS.userId, user.id),
      set('call_timeout', t),
      { app: 'bridge', data: `[leg_timeout=${safe(t)}]${userTarget(domain, user)}` },
    )
  }
  actions.push(hangupWithBridgeCause)
  return actions
}

/** The calling number for a PSTN destination: the leg's (already checked), the calling user's DID when presentable, else the domain's first. */
function presentedNumber(domain: DomainDirectory, leg: LegContext): string | undefined {
  if (leg.callingNumber !== undefined) return leg.callingNumber
  const did = leg.caller?.did
  if (did !== undefined && domain.mayPresent(did)) return did
  return domain.config.calling_numbers[0]
}

export function routeActions(domain: DomainDirectory, leg: LegContext, target: RouteTarget): Action[] {
  const actions: Action[] = [
    set('hangup_after_bridge', 'true'),
    set('continue_on_fail', 'true'),
    exportBoth(CHANNEL_VARS.domain, domain.name),
  ]
  if (leg.requestId !== undefined) actions.push(exportBoth(CHANNEL_VARS.requestId, leg.requestId))
  if (leg.operation !== undefined) actions.push(exportBoth(CHANNEL_VARS.operation, leg.operation))
  actions.push(exportRemote(CHANNEL_VARS.role, 'destination'))
  if (target.kind === 'group') {
    actions.push(exportRemote(CHANNEL_VARS.groupId, target.group.id), exportRemote(CHANNEL_VARS.groupName, target.group.name))
  } else if (leg.groupContext !== undefined) {
    actions.push(exportBoth(CHANNEL_VARS.groupId, leg.groupContext.id), exportBoth(CHANNEL_VARS.groupName, leg.groupContext.name))
  }
  if (leg.endUser !== undefined) actions.push(...endUserExports(leg.endUser))

  switch (target.kind) {
    case 'user':
      actions.push(
        exportRemote(CHANNEL_VARS.userId, target.user.id),
        { app: 'set', data: `ringback=${RINGBACK}` },
        { app: 'bridge', data: userTarget(domain, target.user) },
        hangupWithBridgeCause,
      )
      break
    case 'group':
      actions.push({ app: 'set', data: `ringback=${RINGBACK}` }, ...huntActions(domain, target.group))
      break
    case 'pstn': {
      const calling = presentedNumber(domain, leg)
      if (calling !== undefined) actions.push(set('effective_caller_id_number', calling))
      actions.push(
        { app: 'set', data: `ringback=${RINGBACK}` },
        { app: 'bridge', data: `sofia/gateway/${safe(domain.config.gateway)}/${safe(target.number)}` },
        hangupWithBridgeCause,
      )
      break
    }
    // No `answer` here: the IVR runner answers before the first prompt, so a document whose
    // first element is <Hangup> can still reject an unanswered inbound call (docs/ivr.md "Hangup").
    case 'extension':
      actions.push(
        set(IVR_VARS.url, pct(target.xmlUrl)),
        set(IVR_VARS.extension, target.number),
        ...(leg.requestId !== undefined ? [set(IVR_VARS.request, leg.requestId)] : []),
        { app: 'park' },
      )
      break
    case 'ivr':
      actions.push(set(IVR_VARS.request, target.key), { app: 'park' })
      break
  }
  return actions
}

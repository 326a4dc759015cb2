/**
 * The dialplan section. We own the contexts named after our domains, and route two kinds of
 * calls in them:
 *
 * (a) an originated leg that answered: the originate's dialplan target is
 *     `cod_route XML <domain>` (pbx/channel-vars.ts ROUTE_EXTENSION), so the request has
 *     Hunt-Destination-Number=cod_route and Hunt-Context=<domain>, and the leg carries
 *     `variable_cod_dest_kind` / `variable_cod_dest_value` naming where it goes;
 * (b) any other call in the context: a phone of the domain (its directory entry sets
 *     user_context=<domain>), a call from the domain's gateway, or a transfer; it goes where
 *     Hunt-Destination-Number resolves in the domain's directory (DomainDirectory.resolveDestination).
 *
 * The context in the document must be named exactly as the request's Hunt-Context: with any
 * other name FreeSWITCH logs "Context ... not found" and the call fails with
 * NO_ROUTE_DESTINATION, without falling back to the static dialplan
 * (test/fixtures/freeswitch/xml_curl/11-dialplan-wrong-context.txt).
 */
import { DOMAIN_RE } from '../config/schema.js'
import type { Directory, DomainDirectory } from '../directory/directory.js'
import { ROUTE_EXTENSION } from '../pbx/channel-vars.js'
import { found, notFound, type SectionAnswer } from './answer.js'
import { LIMIT_CAUSE, type BridgeGate } from './bridge-gate.js'
import { dialplanDocument } from './dialplan-document.js'
import type { FetchForm } from './form.js'
import { readLeg, readOriginatedDestination, type IvrKnown, type LegContext } from './leg.js'
import { routeActions, type Action, type RouteTarget } from './routes.js'
import { exactRegex } from './values.js'
import { originatorCallerId, withCallerId } from './caller-id.js'
import { withDestinationTimeout } from './destination-timeout.js'
import { connectingAction, recordingPath, withRecording, type DialplanRecording } from './recording.js'

/** What a caller may dial: user names, numbers (with + * #). */
const DIALED_RE = /^[A-Za-z0-9+*#._-]{1,64}$/

function dialedTarget(domain: DomainDirectory, leg: LegContext, number: string): RouteTarget | string {
  if (!DIALED_RE.test(number)) return 'destination number has characters no destination has'
  const match = domain.resolveDestination(number)
  if (match === undefined) return 'destination number matches nothing in the domain'
  switch (match.kind) {
    case 'user':
    case 'group':
      return match
    case 'extension':
      return { kind: 'extension', number: match.extension.number, xmlUrl: match.extension.xml_url }
    case 'pstn':
      // Only a phone of the domain, or a leg the daemon originated for it, may reach the PSTN
      // through the domain's gateway: a call that came in from the gateway must not go back out.
      if (leg.caller === undefined && leg.requestId === undefined) return 'PSTN destination for a caller that is not of the domain'
      return { kind: 'pstn', number: match.number }
  }
}

/**
 * The actions for a leg of an API request that would bridge: the bridge when the request still
 * holds channels for its destination (bridge-gate.ts), else a hangup with LIMIT_CAUSE, so that
 * the dialplan never creates more legs than the channel limit admitted.
 */
function gatedActions(form: FetchForm, domain: DomainDirectory, leg: LegContext, target: RouteTarget, gate: BridgeGate | undefined): Action[] {
  const bridges = target.kind === 'user' || target.kind === 'group' || target.kind === 'pstn'
  if (gate !== undefined && bridges && leg.requestId !== undefined && !gate.mayBridge(domain.name, leg.requestId, form.get('Unique-ID'))) {
    return [{ app: 'hangup', data: LIMIT_CAUSE }]
  }
  // The destination sees who calls (an originated leg the IVR transfers too), and rings for at
  // most the domain's destination_timeout.
  const routed = withCallerId(routeActions(domain, leg, target), originatorCallerId(form, domain, leg))
  return withDestinationTimeout(routed, domain.config.destination_timeout)
}

/**
 * The answered leg's actions with its recording armed, when the leg carries a recording id and
 * the daemon gives it a file (recording.ts). Only the `cod_route` extension records: it is where
 * a call of an API request is connected, once.
 */
function recordedActions(actions: Action[], domain: DomainDirectory, leg: LegContext, target: RouteTarget, recording: DialplanRecording | undefined): Action[] {
  const id = leg.recordingId
  // Nothing connects the leg (a hangup over the channel limit, a group with nobody to ring):
  // nothing to record, and no file is asked for (the daemon makes its folder when asked).
  if (id === undefined || recording === undefined || connectingAction(actions) < 0) return actions
  const path = recordingPath(recording, domain.name, id)
  if (!path.ok) {
    recording.recordingRefused?.(domain.name, id, path.error)
    return actions
  }
  return withRecording(actions, target, path.value)
}

export function answerDialplan(form: FetchForm, directory: Directory, ivrKnown?: IvrKnown, gate?: BridgeGate, recording?: DialplanRecording): SectionAnswer {
  const context = form.get('Hunt-Context')
  const number = form.get('Hunt-Destination-Number')
  if (context === undefined || number === undefined) return notFound('no Hunt-Context or Hunt-Destination-Number')
  if (!DOMAIN_RE.test(context)) return notFound('context is not a domain name')
  const domain = directory.domain(context)
  if (domain === undefined) return notFound('context is not one of our domains')
  const leg = readLeg(form, domain)
  if (!leg.ok) return notFound(leg.error)

  if (number === ROUTE_EXTENSION) {
    if (leg.value.requestId === undefined) return notFound('cod_route without a request id')
    // A leg our own bridge created is a destination already: it never routes as an originator.
    if (leg.value.role === 'destination') return notFound('cod_route on a destination leg')
    const target = readOriginatedDestination(form, domain, leg.value, ivrKnown)
    if (!target.ok) return notFound(target.error)
    const actions = recordedActions(gatedActions(form, domain, leg.value, target.value, gate), domain, leg.value, target.value, recording)
    return found(dialplanDocument(context, ROUTE_EXTENSION, exactRegex(number), actions))
  }
  const target = dialedTarget(domain, leg.value, number)
  if (typeof target === 'string') return notFound(target)
  return found(dialplanDocument(context, 'cod_dial', exactRegex(number), gatedActions(form, domain, leg.value, target, gate)))
}

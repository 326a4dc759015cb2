/**
 * A call from a registered phone (a sofia INVITE): the inbound channel with the variables
 * mod_sofia sets for an authorised user, which then routes through the XML dialplan in the
 * caller's user_context (the domain name) via mod_xml_curl.
 */
import { randomUUID } from 'node:crypto'
import { err, ok, type Result } from '../../util/result.js'
import type { Switch } from '../core/switch.js'
import { Session } from '../model/session.js'

export interface InboundCall {
  readonly domain: string
  readonly fromUser: string
  readonly destination: string
}

/** Creates the channel (CHANNEL_CREATE has fired when this returns) and starts its routing; its uuid, or why not. */
export function placeInboundCall(sw: Switch, o: InboundCall): Result<string, string> {
  const user = sw.registry.user(o.domain, o.fromUser)
  const domain = sw.registry.domain(o.domain)
  if (user === undefined || domain === undefined) return err(`sim: no user ${o.fromUser}@${o.domain}`)
  const terminal = sw.registry.terminals(domain.name, user).find((t) => t.behaviour.behaviour !== 'unregistered')
  const port = terminal?.port ?? 5060
  // An inbound session takes from the session rate too (core/session-rate.ts).
  if (!sw.sessionRate.request()) return err(`sim: Throttle Error! ${sw.sessions.size} (sessions-per-second)`)
  const uuid = sw.newUuid()
  const name = `sofia/${sw.profile}/${user.name}@${domain.name}`
  const s = new Session({
    uuid,
    name,
    direction: 'inbound',
    profile: {
      direction: 'inbound',
      logicalDirection: 'inbound',
      username: user.name,
      dialplan: 'XML',
      callerIdName: user.label ?? user.name,
      callerIdNumber: user.name,
      origCallerIdName: user.label ?? user.name,
      origCallerIdNumber: user.name,
      networkAddr: '127.0.0.1',
      ani: user.name,
      destinationNumber: o.destination,
      source: 'mod_sofia',
      context: domain.name,
    },
  })
  s.hitDialplan = true
  s.presenceId = `${user.name}@${domain.name}`
  const vars: Array<[string, string]> = [
    ['direction', 'inbound'],
    ['uuid', uuid],
    ['session_id', String(sw.sessionsSinceStartup + 1)],
    ['sip_from_user', user.name],
    ['sip_from_uri', `${user.name}@${domain.name}`],
    ['sip_from_host', domain.name],
    ['channel_name', name],
    ['sip_call_id', `${randomUUID()}@127.0.0.1`],
    ['sip_local_network_addr', '127.0.0.1'],
    ['sip_network_ip', '127.0.0.1'],
    ['sip_network_port', String(port)],
    ['sip_received_ip', '127.0.0.1'],
    ['sip_received_port', String(port)],
    ['sip_via_protocol', 'udp'],
    ['sip_authorized', 'true'],
    ['sip_number_alias', user.extension ?? user.name],
    ['sip_auth_username', user.name],
    ['sip_auth_realm', domain.name],
    ['number_alias', user.extension ?? user.name],
    ['requested_user_name', user.name],
    ['requested_domain_name', domain.name],
    ['user_context', domain.name],
    ['effective_caller_id_name', user.label ?? user.name],
    ['effective_caller_id_number', user.extension ?? user.name],
    ['user_name', user.name],
    ['domain_name', domain.name],
    ['sofia_profile_name', sw.profile],
    ['sip_req_user', o.destination],
    ['sip_req_uri', `${o.destination}@${domain.name}`],
    ['sip_req_host', domain.name],
    ['sip_to_user', o.destination],
    ['sip_to_uri', `${o.destination}@${domain.name}`],
    ['sip_to_host', domain.name],
    ['sip_contact_user', user.name],
    ['sip_contact_port', String(port)],
    ['sip_contact_uri', `${user.name}@127.0.0.1:${port}`],
    ['sip_contact_host', '127.0.0.1'],
    ['presence_id', `${user.name}@${domain.name}`],
    ['call_uuid', uuid],
  ]
  for (const [k, v] of vars) s.setVar(k, v)
  sw.add(s)
  s.callState = 'RINGING'
  sw.requestStep(s, { kind: 'route' })
  return ok(uuid)
}

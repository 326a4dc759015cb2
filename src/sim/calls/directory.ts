/**
 * User lookups as FreeSWITCH makes them for `user/<name>@<domain>` (mod_dptools.c
 * user_outgoing_channel, switch_xml_locate_user_merged): ask mod_xml_curl (section=directory,
 * action=user_call, test/fixtures/freeswitch/xml_curl/02-originate-user-1001.txt), and when there
 * is no binding, the fetch fails or the reply is "not found", use the static directory, which here
 * is the simulator's configuration. A user is found by `id` or `number-alias`
 * (test/fixtures/freeswitch/xml_curl/08-serve-directory-user-call.txt: user/8001 reaches id 1001).
 */
import type { Switch } from '../core/switch.js'
import type { VarList } from '../text/fs-strings.js'
import { xmlCurlFetch } from '../xml/curl.js'
import { child, childrenNamed, findSection, parseXml, type XmlElement } from '../xml/document.js'

export interface DirectoryUser {
  /** The `id` attribute: becomes `dialed_user`. */
  readonly id: string
  readonly dialString?: string
  readonly variables: VarList
}

/**
 * The dial-string of FreeSWITCH's vanilla directory (conf/vanilla/directory/default.xml, without
 * the verto part), used by the static directory: `^^:` makes `:` the variable delimiter.
 */
const STATIC_DIAL_STRING =
  '{^^:sip_invite_domain=${dialed_domain}:presence_id=${dialed_user}@${dialed_domain}}${sofia_contact(*/${dialed_user}@${dialed_domain})}'

/** The static directory: the configured users; the SIP user name is the user's `name`. */
function staticUser(sw: Switch, user: string, domain: string): DirectoryUser | undefined {
  const u = sw.registry.user(domain, user)
  const d = sw.registry.domain(domain)
  if (u === undefined || d === undefined) return undefined
  return {
    id: u.name,
    dialString: STATIC_DIAL_STRING,
    variables: [
      ['user_context', d.name],
      ['effective_caller_id_name', u.label ?? u.name],
      ['effective_caller_id_number', u.extension ?? u.name],
      ...(u.extension !== undefined ? ([['number_alias', u.extension]] as VarList) : []),
    ],
  }
}

function findUser(domainEl: XmlElement, user: string): XmlElement | undefined {
  const matches = (u: XmlElement): boolean => u.attrs['id'] === user || u.attrs['number-alias'] === user
  const direct = child(domainEl, 'users')
  const fromUsers = direct === undefined ? undefined : childrenNamed(direct, 'user').find(matches)
  if (fromUsers !== undefined) return fromUsers
  for (const groups of childrenNamed(domainEl, 'groups')) {
    for (const group of childrenNamed(groups, 'group')) {
      for (const users of childrenNamed(group, 'users')) {
        const u = childrenNamed(users, 'user').find(matches)
        if (u !== undefined) return u
      }
    }
  }
  return undefined
}

function params(e: XmlElement | undefined): Map<string, string> {
  const out = new Map<string, string>()
  const p = e === undefined ? undefined : child(e, 'params')
  if (p !== undefined) for (const x of childrenNamed(p, 'param')) out.set(x.attrs['name'] ?? '', x.attrs['value'] ?? '')
  return out
}

function variables(e: XmlElement | undefined): VarList {
  const v = e === undefined ? undefined : child(e, 'variables')
  return v === undefined ? [] : childrenNamed(v, 'variable').map((x) => [x.attrs['name'] ?? '', x.attrs['value'] ?? ''] as [string, string])
}

/**
 * Locates a user for a `user/` leg. `undefined`: unknown (SUBSCRIBER_ABSENT,
 * test/fixtures/freeswitch/esl/15-unknown-user-9999.txt). `legVars` are the originate's variables,
 * which FreeSWITCH adds to the request
 * (test/fixtures/freeswitch/xml_curl/02-originate-user-1001.txt).
 */
export async function locateUser(sw: Switch, user: string, domain: string, legVars: VarList): Promise<DirectoryUser | undefined> {
  const binding = sw.xmlCurl
  if (binding === undefined) return staticUser(sw, user, domain)
  const form = sw.bus.coreHeaders('REQUEST_PARAMS', ['mod_dptools.c', 'user_outgoing_channel', '4366'])
  form.push(['as_channel', 'true'], ['action', 'user_call'], ...legVars, ['key', 'id'], ['user', user], ['domain', domain])
  const res = await xmlCurlFetch(
    binding,
    { hostname: sw.bus.identity.hostname, section: 'directory', tagName: 'domain', keyName: 'name', keyValue: domain, params: form },
    sw.logger,
    sw.closing,
  )
  if (!res.ok) return staticUser(sw, user, domain)
  const section = findSection(parseXml(res.body), 'directory')
  if (section === undefined || section === 'not-found') return staticUser(sw, user, domain)
  const domainEl = childrenNamed(section, 'domain').find((d) => (d.attrs['name'] ?? '').toLowerCase() === domain.toLowerCase())
  if (domainEl === undefined) return undefined
  const userEl = findUser(domainEl, user)
  if (userEl === undefined) return undefined
  const dialString = params(userEl).get('dial-string') ?? params(domainEl).get('dial-string')
  return {
    id: userEl.attrs['id'] ?? user,
    ...(dialString !== undefined ? { dialString } : {}),
    variables: [...variables(domainEl), ...variables(userEl)],
  }
}

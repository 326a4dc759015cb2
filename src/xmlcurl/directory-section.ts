/**
 * The directory section: SIP authentication (action=sip_auth, requests 01 in
 * test/fixtures/freeswitch/xml_curl/), `user/` dialing (action=user_call, requests 02 and 04) and
 * the lookups of `user_exists` / `user_data` (no action, requests 06). The document has the shape
 * FreeSWITCH 1.10.12 accepted in requests 07 and 08 (xml_curl/working-directory.xml).
 *
 * A user's SIP username is the user's name; the extension is the `number-alias`, which
 * FreeSWITCH matches too when key=id (switch_xml.c find_user_in_tag;
 * test/fixtures/freeswitch/xml_curl/08-serve-directory-user-call.txt: a request for user=8001
 * answered with `id="1001" number-alias="8001"` reached 1001).
 *
 * These documents depend on the configuration alone: each is written once per configuration and
 * then served from memory (document-cache.ts).
 */
import type { Directory, DomainDirectory, User } from '../directory/directory.js'
import { foundKept, notFound, type SectionAnswer } from './answer.js'
import { keptDomainDocument, keptUserDocument } from './document-cache.js'
import { el, renderDocument, type XmlNode } from './document.js'
import type { FetchForm } from './form.js'
import { noExpansion } from './values.js'

/**
 * The dial string of working-directory.xml: `user/<name>@<domain>` rings every registered
 * contact of the user (sofia_contact with the `*` profile answers a comma list when the profile
 * keeps several registrations: multiple-registrations=contact, freeswitch/sip_profiles/internal.xml).
 */
const USER_DIAL_STRING = '{presence_id=${dialed_user}@${dialed_domain}}${sofia_contact(*/${dialed_user}@${dialed_domain})}'

/** Actions we serve; anything else (message-count, reverse-auth-lookup, ...) falls back to static XML. */
const ACTIONS = new Set(['sip_auth', 'user_call'])

function userElement(domain: DomainDirectory, user: User): XmlNode {
  const aliasAttr: Record<string, string> = user.extension === undefined ? {} : { 'number-alias': user.extension }
  return el('user', { id: user.name, ...aliasAttr }, [
    el('params', {}, [
      el('param', { name: 'password', value: user.password }),
      el('param', { name: 'dial-string', value: USER_DIAL_STRING }),
      // A phone may register with the extension (the number-alias); the registration is then
      // stored under that name and `sofia_contact */<name>@<domain>` would not find it. sofia
      // takes `sip-*` params of the user into the registration event and `sip-force-user`
      // replaces the stored user (sofia_reg.c, sofia_reg_handle_register_token, v1.10.12).
      el('param', { name: 'sip-force-user', value: user.name }),
    ]),
    el('variables', {}, [
      // Calls from the user's phones run the dialplan context named after the domain, which we own.
      el('variable', { name: 'user_context', value: domain.name }),
      el('variable', { name: 'effective_caller_id_name', value: noExpansion(user.label ?? user.name) }),
      el('variable', { name: 'effective_caller_id_number', value: user.extension ?? user.name }),
      el('variable', { name: 'cod_user_id', value: user.id }),
      el('variable', { name: 'cod_domain', value: domain.name }),
    ]),
  ])
}

const domainParams = () => el('params', {}, [el('param', { name: 'dial-string', value: USER_DIAL_STRING })])

function directoryDocument(domain: DomainDirectory, user: User): string {
  return renderDocument([
    el('section', { name: 'directory' }, [
      el('domain', { name: domain.name }, [
        domainParams(),
        el('groups', {}, [el('group', { name: 'default' }, [el('users', {}, [userElement(domain, user)])])]),
      ]),
    ]),
  ])
}

/**
 * A lookup of the domain alone (no user): `xml_locate directory domain name <domain>`,
 * `domain_exists <domain>`. The domain and its params, no users: users are only ever given
 * one at a time, to a lookup that names them.
 */
function domainDocument(domain: DomainDirectory): string {
  return renderDocument([el('section', { name: 'directory' }, [el('domain', { name: domain.name }, [domainParams()])])])
}

export function answerDirectory(form: FetchForm, directory: Directory): SectionAnswer {
  // purpose=network-list (reloadacl) and purpose=gateways (profile rescan):
  // test/fixtures/freeswitch/xml_curl/06-other-lookups.txt. Not ours.
  const purpose = form.get('purpose')
  if (purpose !== undefined) return notFound(`directory purpose ${purpose}`)
  if (form.get('tag_name') !== 'domain' || form.get('key_name') !== 'name') return notFound('directory lookup is not by domain name')
  const domainName = form.get('key_value') ?? ''
  const domain = directory.domain(domainName)
  if (domain === undefined) return notFound('unknown domain')
  const alsoDomain = form.get('domain')
  if (alsoDomain !== undefined && alsoDomain.toLowerCase() !== domainName.toLowerCase()) return notFound('domain and key_value differ')
  const action = form.get('action')
  if (action !== undefined && !ACTIONS.has(action)) return notFound(`directory action ${action}`)
  const key = form.get('key')
  const userName = form.get('user')
  if (userName === undefined && key === undefined && action === undefined) return foundKept(keptDomainDocument(domain, () => domainDocument(domain)))
  if (userName === undefined || userName === '') return notFound('no user')
  let user: User | undefined
  if (key === 'id') user = domain.userBySipName(userName)
  else if (key === 'number-alias') user = domain.usersBy('user_extension', userName)[0]
  else return notFound(`directory key ${key ?? '(none)'}`)
  if (user === undefined) return notFound('unknown user')
  return foundKept(keptUserDocument(domain, user, () => directoryDocument(domain, user)))
}

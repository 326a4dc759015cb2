/**
 * The xml_curl listener from outside (issue 12 item 5, docs/deploy.md "Listeners"): the API
 * listener answers 404 for FreeSWITCH's routes, whatever the credentials; wrong credentials on
 * the xml_curl listener are throttled there, apart from the API's throttle (an address blocked
 * on one is not blocked on the other); and hostile values in every field FreeSWITCH posts are
 * answered with a well-formed document, never with the hostile text as markup.
 */
import { XMLValidator } from 'fast-xml-parser'
import { INJECTIONS, UNICODE } from '../abuse/corpus.js'
import { ALPHA, AUTH_ALPHA, MAX_FAILURES, XML_CURL_PASSWORD, XML_CURL_USER, apiPost, basic, outcomeOf, type Answer, type World } from './world.js'

const PATH = '/freeswitch/xml_curl'
const FREESWITCH = basic(XML_CURL_USER, XML_CURL_PASSWORD)

/** The xml_curl listener's origin, when this daemon has one. */
/** FreeSWITCH's credentials (the slow-body case needs them: a request without is answered 401 at once). */
export const XML_CURL_AUTH = FREESWITCH

export const xmlCurlBase = (w: World): string | undefined => (w.daemon as { xmlCurlBaseUrl?: string }).xmlCurlBaseUrl

const form = (fields: Record<string, string>, auth = FREESWITCH) => ({
  method: 'POST',
  path: PATH,
  headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

const DIRECTORY = { section: 'directory', tag_name: 'domain', key_name: 'name', key_value: ALPHA, action: 'sip_auth', key: 'id', user: 'alice', domain: ALPHA, sip_auth_username: 'alice', sip_auth_realm: ALPHA }
const DIALPLAN = { section: 'dialplan', 'Hunt-Context': ALPHA, 'Caller-Destination-Number': 'cod_route', 'Caller-Context': ALPHA, 'Unique-ID': '00000000-0000-4000-8000-000000000000', variable_cod_domain: ALPHA }

export async function xmlCurlListener(w: World, attacker: string, bystander: string): Promise<string[]> {
  const problems: string[] = []
  const base = xmlCurlBase(w)
  if (base === undefined) return ['the daemon has no xml_curl listener of its own (xmlCurlBaseUrl)']
  const check = (family: string, name: string, a: Answer, ok: (a: Answer) => boolean) => {
    w.tally.count(family, outcomeOf(a))
    if (!ok(a)) problems.push(`${name}: ${a.status} ${a.text.slice(0, 400)}`)
  }

  // The API listener does not serve FreeSWITCH's documents, with or without their credentials.
  for (const [name, req] of [
    ['directory with FreeSWITCH credentials', form(DIRECTORY)],
    ['dialplan with FreeSWITCH credentials', form(DIALPLAN)],
    ['directory with a domain token', form(DIRECTORY, AUTH_ALPHA)],
    ['directory without credentials', { ...form(DIRECTORY), headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
    ['GET', { method: 'GET', path: PATH, headers: { authorization: FREESWITCH } }],
  ] as const) {
    check('xml_curl routes on the API listener', name, await w.send(req), (a) => a.status === 404 && !a.text.includes('sip-pass'))
  }

  // Wrong credentials on the xml_curl listener: 401, then 429 from that address only.
  for (let i = 0; i < MAX_FAILURES; i++) {
    check('xml_curl: wrong credentials', `guess ${i + 1}`, await w.send(form(DIRECTORY, basic(XML_CURL_USER, `guess-${i}-xxxxxxxx`)), { base, from: attacker }), (a) => a.status === 401)
  }
  for (let i = 0; i < 5; i++) {
    check('xml_curl: wrong credentials', `guess past the threshold ${i}`, await w.send(form(DIRECTORY, basic(XML_CURL_USER, `guess-x${i}-xxxxxxxx`)), { base, from: attacker }), (a) => a.status === 429)
  }
  check('xml_curl: wrong credentials', 'the right credentials from the blocked address', await w.send(form(DIRECTORY), { base, from: attacker }), (a) => a.status === 429)
  // Throttles apart: the address blocked on xml_curl still uses the API, FreeSWITCH's address still gets documents.
  check('xml_curl: separate throttles', 'the API from the address blocked on xml_curl', await w.send(apiPost('gen_ws_ticket', { uri: '/api/ws_cti?app_name=x&user_name=alice' }), { from: attacker }), (a) => a.status === 200)
  check('xml_curl: separate throttles', 'documents for another address', await w.send(form(DIRECTORY), { base, from: bystander }), (a) => a.status === 200 && a.text.includes('alice-sip-pass-A1'))

  // Hostile values in the fields FreeSWITCH posts: a well-formed document, the text never as markup.
  const values = [...INJECTIONS, ...UNICODE]
  const fields: Array<[Record<string, string>, string]> = [
    [DIRECTORY, 'user'],
    [DIRECTORY, 'domain'],
    [DIRECTORY, 'key_value'],
    [DIRECTORY, 'action'],
    [DIRECTORY, 'key'],
    [DIALPLAN, 'Caller-Destination-Number'],
    [DIALPLAN, 'Hunt-Context'],
    [DIALPLAN, 'variable_cod_domain'],
    [DIALPLAN, 'variable_cod_request_id'],
    [DIALPLAN, 'Unique-ID'],
  ]
  for (const v of values) {
    for (const [fieldsOf, field] of fields) {
      const a = await w.send(form({ ...fieldsOf, [field]: `${fieldsOf[field] ?? 'x'}${v}` }), { base })
      const wellFormed = a.status === 200 && XMLValidator.validate(a.text) === true
      check('injection: xml_curl form fields', `${field}=${JSON.stringify(v).slice(0, 40)}`, a, () => wellFormed && !(v.includes('<') && a.text.includes(v)))
    }
  }
  return problems
}

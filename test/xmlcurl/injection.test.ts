/**
 * Hostile values on both sides: configuration values full of markup and expansions, and
 * request fields (which come from the network, some from SIP peers) full of newlines,
 * `${system(...)}` and markup. Every document must stay well-formed, carry configuration values
 * unchanged after FreeSWITCH's decoding, and never carry a FreeSWITCH expansion that came from
 * outside.
 */
import t from 'tap'
import { answerFetch, FetchForm } from '../../src/xmlcurl/index.js'
import { actionsOf, ATTACKS, exampleDomain, findAll, fixture, makeRuntime, originatedLeg, parseDocument, phoneCall } from './helpers.js'

const MARKUP = `<&"']]>`
const HOSTILE_PASSWORD = `p${MARKUP}$\${hostname}\${system(id)}$$\${x}`
const HOSTILE_LABEL = `Ann ${MARKUP} \${system(touch /tmp/pwned)} $\${hostname} $\\{y}`
const HOSTILE_URL = `https://ivr.example.test/x?q=\${system(id)}&a="<]]>&b=$\${hostname}`

const hostileDomain = {
  ...exampleDomain,
  users: [
    { id: '1', name: 'alice', label: HOSTILE_LABEL, extension: '1001', password: HOSTILE_PASSWORD },
    ...exampleDomain.users.slice(1),
  ],
  groups: [{ ...exampleDomain.groups[0], label: HOSTILE_LABEL }],
  extensions: [{ number: '3001', xml_url: HOSTILE_URL }],
}
const runtime = makeRuntime([hostileDomain])
const ask = (form: URLSearchParams) => answerFetch(new FetchForm(form), runtime.directory)
const xmlOf = (form: URLSearchParams): string => {
  const a = ask(form)
  if (!a.found) throw new Error(`expected a document, got not found: ${a.reason}`)
  return a.xml
}

/** Raw-text triggers of FreeSWITCH's preprocessor (switch_xml.c preprocess): none may appear. */
const assertNoPreprocessorTrigger = (t: { notMatch: (s: string, re: RegExp, msg: string) => unknown }, xml: string) => {
  t.notMatch(xml, /\$\$\{/, 'no $${ in the raw text')
  t.notMatch(xml, /<\?|<include>|<X-PRE-PROCESS|<!--#/i, 'no preprocessor directive')
}

t.test('configuration values with markup reach FreeSWITCH unchanged, as well-formed XML', async (t) => {
  const xml = xmlOf(fixture('01-sip-auth-register', { user: 'alice' }))
  const doc = parseDocument(xml)
  const params = Object.fromEntries(findAll(doc, 'param').map((p) => [p.attrs.name, p.attrs.value]))
  t.equal(params.password, HOSTILE_PASSWORD, 'the password decodes to exactly the configured one')
  t.match(xml, /value="p&lt;&amp;&quot;']]&gt;&#36;\$\{hostname\}\$\{system\(id\)\}&#36;&#36;\$\{x\}"/, 'escaped, and $$ written as &#36;$')
  assertNoPreprocessorTrigger(t, xml)
  const name = findAll(doc, 'variable').find((v) => v.attrs.name === 'effective_caller_id_name')?.attrs.value
  t.equal(name, `Ann ${MARKUP} {system(touch /tmp/pwned)} {hostname} \\{y}`, 'the caller id name keeps the text but loses every ${')
})

t.test('an XML URL with markup and expansions travels percent-encoded', async (t) => {
  const xml = xmlOf(phoneCall('3001'))
  parseDocument(xml)
  const url = actionsOf(xml).find((a) => a.startsWith('set cod_ivr_url='))
  t.ok(url)
  const value = (url ?? '').slice('set cod_ivr_url='.length)
  t.match(value, /^[A-Za-z0-9%._~-]+$/)
  t.equal(decodeURIComponent(value), HOSTILE_URL)
  assertNoPreprocessorTrigger(t, xml)
})

t.test('a group label never reaches the dialplan', async (t) => {
  const xml = xmlOf(phoneCall('2001'))
  t.notMatch(xml, /Ann|system|hostname/)
})


t.test('hostile request values: not found, or a document without them', async (t) => {
  const forms: Array<[string, (attack: string) => URLSearchParams]> = [
    ['Hunt-Destination-Number', (a) => phoneCall(a)],
    ['Hunt-Context', (a) => phoneCall('1002', { 'Hunt-Context': a })],
    ['caller id name and number of a phone', (a) => phoneCall('1002', { 'Caller-Caller-ID-Name': a, 'Caller-Caller-ID-Number': a, variable_sip_from_user: a })],
    ['user_name of a phone', (a) => phoneCall('0311112222', { variable_user_name: a })],
    ['cod_dest_value', (a) => originatedLeg({ cod_dest_kind: 'pstn', cod_dest_value: a })],
    ['cod_dest_kind', (a) => originatedLeg({ cod_dest_kind: a, cod_dest_value: '2' })],
    ['cod_request_id', (a) => originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_request_id: a })],
    ['cod_domain', (a) => originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_domain: a })],
    ['cod_dest_calling_number', (a) => originatedLeg({ cod_dest_kind: 'pstn', cod_dest_value: '0311112222', cod_dest_calling_number: a })],
    ['cod_end_user (raw)', (a) => originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: a })],
    ['cod_group_id', (a) => originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_group_id: a })],
    ['directory user', (a) => fixture('01-sip-auth-register', { user: a })],
    ['directory domain', (a) => fixture('01-sip-auth-register', { key_value: a, domain: a })],
    ['section', (a) => fixture('01-sip-auth-register', { section: a })],
  ]
  for (const [field, make] of forms) {
    for (const attack of ATTACKS) {
      const answer = ask(make(attack))
      if (!answer.found) continue
      const name = `${field} = ${JSON.stringify(attack)}`
      parseDocument(answer.xml)
      t.notOk(answer.xml.includes(attack), `${name}: not in the document`)
      t.notMatch(answer.xml, /system|pwned|mallory|0900/, `${name}: nothing of it in the document`)
      assertNoPreprocessorTrigger(t, answer.xml)
    }
  }
  // The caller-id fields are not used: the call still routes, without them.
  t.ok(ask(phoneCall('1002', { 'Caller-Caller-ID-Name': ATTACKS[0] ?? '' })).found)
})

t.test('end_user free text is percent-encoded, whatever it holds', async (t) => {
  const endUser = { name: ATTACKS.join(' '), organization: '${system(id)}', avatar: 'https://x/"<>' }
  const xml = xmlOf(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: encodeURIComponent(JSON.stringify(endUser)) }))
  parseDocument(xml)
  const ours = xml.replaceAll('${originate_disposition}', '')
  t.notMatch(ours, /\$\{|<action application="system"/, 'the text is there, but only percent-encoded')
  const exports = actionsOf(xml).filter((a) => a.startsWith('export cod_end_user'))
  t.equal(exports.length, 4)
  for (const e of exports) t.match(e, /^export cod_end_user(_[a-z]+)?=[A-Za-z0-9%._~-]*$/)
  const blob = exports[0]?.slice('export cod_end_user='.length) ?? ''
  t.same(JSON.parse(decodeURIComponent(blob)), endUser, 'decodes to the same object')
})

import t from 'tap'
import type { IvrHandoff } from '../../src/xmlcurl/index.js'
import { answerFetch, FetchForm, huntPlan } from '../../src/xmlcurl/index.js'
import { actionsOf, findAll, fixture, makeRuntime, originatedLeg, overTheWire, parseDocument, phoneCall } from './helpers.js'

const runtime = makeRuntime()
/** Every form goes through FreeSWITCH's encoding first, as it would in production. */
const ask = (form: URLSearchParams, ivr?: IvrHandoff) =>
  answerFetch(new FetchForm(overTheWire(form)), runtime.directory, ivr === undefined ? undefined : (d, k) => ivr.has(d, k))
const xmlOf = (form: URLSearchParams, ivr?: IvrHandoff): string => {
  const a = ask(form, ivr)
  if (!a.found) throw new Error(`expected a document, got not found: ${a.reason}`)
  return a.xml
}
const refused = (form: URLSearchParams, ivr?: IvrHandoff): boolean => !ask(form, ivr).found

/** What every routed call starts with (originated leg of request req-0001, call_user). */
const ORIGINATED_PRELUDE = [
  'set hangup_after_bridge=true',
  'set continue_on_fail=true',
  'export cod_domain=example.test',
  'export cod_request_id=req-0001',
  'export cod_operation=call_user',
  'export nolocal:cod_role=destination',
]
const RINGBACK = 'set ringback=%(2000,4000,440,480)'
const HANGUP = 'hangup ${originate_disposition}'
/** Issue 13 D3: the domain's destination_timeout (default 60 s) bounds the ringing of a user or PSTN destination. */
const TIMEOUT = 'set call_timeout=60'

t.test('originated leg to a user: the whole document', async (t) => {
  const xml = xmlOf(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_user_id: '1' }))
  t.equal(
    xml,
    `<document type="freeswitch/xml">
  <section name="dialplan" description="cod">
    <context name="example.test">
      <extension name="cod_route">
        <condition field="destination_number" expression="^cod_route$">
          <action application="set" data="hangup_after_bridge=true"/>
          <action application="set" data="continue_on_fail=true"/>
          <action application="export" data="cod_domain=example.test"/>
          <action application="export" data="cod_request_id=req-0001"/>
          <action application="export" data="cod_operation=call_user"/>
          <action application="export" data="nolocal:cod_role=destination"/>
          <action application="export" data="nolocal:cod_user_id=2"/>
          <action application="set" data="ringback=%(2000,4000,440,480)"/>
          <action application="set" data="effective_caller_id_name=Alice"/>
          <action application="set" data="effective_caller_id_number=1001"/>
          <action application="set" data="call_timeout=60"/>
          <action application="bridge" data="user/bob@example.test"/>
          <action application="hangup" data="\${originate_disposition}"/>
        </condition>
      </extension>
    </context>
  </section>
</document>
`,
  )
})

t.test('the context is named exactly as the request\'s Hunt-Context (fixture xml_curl/11-dialplan-wrong-context)', async (t) => {
  const doc = parseDocument(xmlOf(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Hunt-Context': 'Example.TEST', variable_cod_domain: 'EXAMPLE.test' })))
  t.equal(findAll(doc, 'context')[0]?.attrs.name, 'Example.TEST')
  t.equal(findAll(doc, 'section')[0]?.attrs.name, 'dialplan')
})

t.test('originated leg to a group: members one by one within the answer_timeout budget', async (t) => {
  t.same(actionsOf(xmlOf(originatedLeg({ cod_dest_kind: 'group', cod_dest_value: '10' }))), [
    ...ORIGINATED_PRELUDE,
    'export nolocal:cod_group_id=10',
    'export nolocal:cod_group_name=sales',
    RINGBACK,
    'export nolocal:cod_user_id=3',
    'set call_timeout=15',
    'bridge [leg_timeout=15]user/carol@example.test',
    'export nolocal:cod_user_id=1',
    'set call_timeout=15',
    'bridge [leg_timeout=15]user/alice@example.test',
    'export nolocal:cod_user_id=2',
    // answer_timeout 40 leaves 10 s for the third member
    'set call_timeout=10',
    'bridge [leg_timeout=10]user/bob@example.test',
    HANGUP,
  ])
})

t.test('a group with no members hangs up with NO_ROUTE_DESTINATION', async (t) => {
  const actions = actionsOf(xmlOf(originatedLeg({ cod_dest_kind: 'group', cod_dest_value: '11' })))
  t.equal(actions.at(-1), 'hangup NO_ROUTE_DESTINATION')
  t.notOk(actions.some((a) => a.startsWith('bridge')))
})

t.test('huntPlan splits the budget and drops members left without time', async (t) => {
  const u = (name: string) => ({ id: name, name, password: 'xxxx' })
  const members = [u('a'), u('b'), u('c'), u('d')]
  t.same(huntPlan(members, 15, 60).map((p) => p.timeoutSec), [15, 15, 15, 15])
  t.same(huntPlan(members, 15, 40).map((p) => p.timeoutSec), [15, 15, 10])
  t.same(huntPlan(members, 20, 20).map((p) => p.user.name), ['a'])
  t.same(huntPlan(members, 30, 10).map((p) => p.timeoutSec), [10])
  t.same(huntPlan([], 15, 60), [])
})

t.test('originated leg to an extension bound to an XML URL: IVR variables, park (the runner answers)', async (t) => {
  t.same(actionsOf(xmlOf(originatedLeg({ cod_dest_kind: 'extension', cod_dest_value: '3001' }))), [
    ...ORIGINATED_PRELUDE,
    'set cod_ivr_url=https%3A%2F%2Fivr.example.test%2Fmenu%3Fa%3D1%26b%3D2',
    'set cod_ivr_extension=3001',
    'set cod_ivr_request=req-0001',
    'park',
  ])
})

t.test('originated leg to an xml_url: IVR', async (t) => {
  const expected = [...ORIGINATED_PRELUDE, 'set cod_ivr_request=req-0001', 'park']
  t.same(actionsOf(xmlOf(originatedLeg({ cod_dest_kind: 'ivr', cod_dest_value: 'req-0001' }))), expected, 'stateless: the key is the request id')
  t.ok(refused(originatedLeg({ cod_dest_kind: 'ivr', cod_dest_value: 'req-0002' })), 'another request id, no handoff to ask')

  const known = new Set(['example.test/ivr-7'])
  const ivr: IvrHandoff = { has: (d, k) => known.has(`${d}/${k}`) }
  const withHandoff = actionsOf(xmlOf(originatedLeg({ cod_dest_kind: 'ivr', cod_dest_value: 'ivr-7' }), ivr))
  t.same(withHandoff, [...ORIGINATED_PRELUDE, 'set cod_ivr_request=ivr-7', 'park'])
  t.ok(refused(originatedLeg({ cod_dest_kind: 'ivr', cod_dest_value: 'req-0001' }), ivr), 'the handoff does not know it')
  t.ok(refused(originatedLeg({ cod_dest_kind: 'ivr', cod_dest_value: 'ivr-7' }, { 'Hunt-Context': 'other.test', variable_cod_domain: 'other.test' }), ivr), 'known in another domain only')
})

t.test('originated leg to a PSTN number: gateway, calling number, end_user', async (t) => {
  const endUser = encodeURIComponent(JSON.stringify({ name: '山田 太郎', organization: "O'Neil & Co (HQ)" }))
  t.same(
    actionsOf(
      xmlOf(
        originatedLeg({
          cod_operation: 'call_external',
          cod_dest_kind: 'pstn',
          cod_dest_value: '+81312345678',
          cod_dest_calling_number: '0501230001',
          cod_end_user: endUser,
        }),
      ),
    ),
    [
      'set hangup_after_bridge=true',
      'set continue_on_fail=true',
      'export cod_domain=example.test',
      'export cod_request_id=req-0001',
      'export cod_operation=call_external',
      'export nolocal:cod_role=destination',
      'export cod_end_user=%7B%22name%22%3A%22%E5%B1%B1%E7%94%B0%20%E5%A4%AA%E9%83%8E%22%2C%22organization%22%3A%22O%27Neil%20%26%20Co%20%28HQ%29%22%7D',
      'export cod_end_user_name=%E5%B1%B1%E7%94%B0%20%E5%A4%AA%E9%83%8E',
      'export cod_end_user_organization=O%27Neil%20%26%20Co%20%28HQ%29',
      'set effective_caller_id_number=0501230001',
      RINGBACK,
      TIMEOUT,
      'bridge sofia/gateway/pstn/+81312345678',
      HANGUP,
    ],
  )
  const noCalling = actionsOf(xmlOf(originatedLeg({ cod_dest_kind: 'pstn', cod_dest_value: '0311112222' })))
  t.ok(noCalling.includes('set effective_caller_id_number=0501230000'), "without cod_dest_calling_number: the domain's first calling number")
})

t.test('end_user arrives as FreeSWITCH sends it (JSON after one decoding) or fully percent-encoded: same document', async (t) => {
  const channelValue = encodeURIComponent(JSON.stringify({ name: 'Yamada 100%', organization: 'A&B' }))
  const wire = overTheWire(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: channelValue }))
  t.equal(wire.get('variable_cod_end_user'), '{"name":"Yamada 100%","organization":"A&B"}', 'FreeSWITCH does not encode the %XX again')
  const viaFreeSwitch = answerFetch(new FetchForm(wire), runtime.directory)
  const doubleEncoded = answerFetch(new FetchForm(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: channelValue })), runtime.directory)
  t.ok(viaFreeSwitch.found && doubleEncoded.found)
  if (viaFreeSwitch.found && doubleEncoded.found) {
    t.equal(viaFreeSwitch.xml, doubleEncoded.xml)
    t.ok(actionsOf(viaFreeSwitch.xml).includes('export cod_end_user_name=Yamada%20100%25'))
  }
})

t.test('group context and end_user travel to the legs of a user destination', async (t) => {
  const actions = actionsOf(
    xmlOf(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '1', cod_group_id: '10', cod_end_user: encodeURIComponent('{"id":"c-1"}') })),
  )
  t.same(actions.slice(6, 10), [
    'export cod_group_id=10',
    'export cod_group_name=sales',
    'export cod_end_user=%7B%22id%22%3A%22c-1%22%7D',
    'export cod_end_user_id=c-1',
  ])
})

t.test('an originated leg whose variables are not what the directory allows gets "not found"', async (t) => {
  const cases: Array<[string, Record<string, string | null>, Record<string, string | null>?]> = [
    ["cod_dest_value is another domain's user", { cod_dest_kind: 'user', cod_dest_value: '9' }],
    ["cod_dest_value is another domain's group", { cod_dest_kind: 'group', cod_dest_value: '90' }],
    ["cod_dest_value is another domain's extension", { cod_dest_kind: 'extension', cod_dest_value: '3009' }],
    ['cod_dest_value is a user name, not an id', { cod_dest_kind: 'user', cod_dest_value: 'bob' }],
    ['cod_dest_value is a dial string', { cod_dest_kind: 'user', cod_dest_value: '2,sofia/gateway/pstn/0900' }],
    ['cod_dest_value injects a variable', { cod_dest_kind: 'pstn', cod_dest_value: '${system(touch /tmp/x)}' }],
    ['cod_dest_value is a PSTN number with a pipe', { cod_dest_kind: 'pstn', cod_dest_value: '0311112222|user/bob' }],
    ['cod_dest_value has a newline', { cod_dest_kind: 'pstn', cod_dest_value: '0311112222\nhangup' }],
    ['unknown cod_dest_kind', { cod_dest_kind: 'queue', cod_dest_value: '2' }],
    ['no cod_dest_kind', { cod_dest_kind: null, cod_dest_value: '2' }],
    ['no cod_dest_value', { cod_dest_kind: 'user', cod_dest_value: null }],
    ['cod_domain is another domain', { cod_dest_kind: 'user', cod_dest_value: '2', cod_domain: 'other.test' }],
    ['no cod_domain', { cod_dest_kind: 'user', cod_dest_value: '2', cod_domain: null }],
    ['no request id', { cod_dest_kind: 'user', cod_dest_value: '2', cod_request_id: null }],
    ['malformed request id', { cod_dest_kind: 'user', cod_dest_value: '2', cod_request_id: 'r1,hupall' }],
    ['cod_role destination (a leg of our bridge)', { cod_dest_kind: 'user', cod_dest_value: '2', cod_role: 'destination' }],
    ['unknown cod_role', { cod_dest_kind: 'user', cod_dest_value: '2', cod_role: 'admin' }],
    ['unknown operation', { cod_dest_kind: 'user', cod_dest_value: '2', cod_operation: 'call_everyone' }],
    ["cod_group_id of another domain", { cod_dest_kind: 'user', cod_dest_value: '2', cod_group_id: '90' }],
    ['calling number the domain may not present', { cod_dest_kind: 'pstn', cod_dest_value: '0311112222', cod_dest_calling_number: '0609990000' }],
    ['calling number that is not a number', { cod_dest_kind: 'pstn', cod_dest_value: '0311112222', cod_dest_calling_number: '${caller_id_number}' }],
    ['end_user neither JSON nor percent-encoded', { cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: 'name=x' }],
    ['end_user not JSON', { cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: 'abc%20def' }],
    ['end_user broken JSON', { cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: '{"name":' }],
    ['end_user with a bad escape', { cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: '%E5%B1' }],
    ['end_user with an unknown field', { cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: encodeURIComponent('{"name":"x","__proto__":{"a":1}}') }],
    ['end_user field not a string', { cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: encodeURIComponent('{"name":["x"]}') }],
    ['end_user an array', { cod_dest_kind: 'user', cod_dest_value: '2', cod_end_user: encodeURIComponent('["x"]') }],
  ]
  for (const [name, vars, more] of cases) t.ok(refused(originatedLeg(vars, more)), name)
})

t.test('cod_route only for channels FreeSWITCH originated', async (t) => {
  t.ok(refused(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Call-Direction': 'inbound', 'Caller-Direction': 'inbound' })), 'inbound leg')
  // a phone dialing "cod_route" with cod_* variables (say, from SIP headers) is not an originated leg
  t.ok(refused(phoneCall('cod_route', { variable_cod_request_id: 'req-0001', variable_cod_domain: 'example.test', variable_cod_dest_kind: 'user', variable_cod_dest_value: '2' })))
  t.ok(refused(phoneCall('cod_route')), 'a phone dialing cod_route')
})

t.test('contexts that are not ours get "not found"', async (t) => {
  t.ok(refused(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Hunt-Context': 'default' })), 'default context (fixture xml_curl/04-originate-1002-xml-default)')
  t.ok(refused(fixture('05-dialplan-phone')), 'fixture xml_curl/05-invite-1004-to-1002 as it was: context default')
  t.ok(refused(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Hunt-Context': 'public' })))
  t.ok(refused(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Hunt-Context': null })), 'no Hunt-Context')
  t.ok(refused(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Hunt-Destination-Number': null })), 'no Hunt-Destination-Number')
  t.ok(refused(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Hunt-Context': 'example.test"/><x a="' })), 'injected context')
})

t.test('a phone of the domain dialing the domain\'s numbers (fixture xml_curl/05-invite-1004-to-1002 in context example.test)', async (t) => {
  const phonePrelude = ['set hangup_after_bridge=true', 'set continue_on_fail=true', 'export cod_domain=example.test', 'export nolocal:cod_role=destination']
  const bob = [...phonePrelude, 'export nolocal:cod_user_id=2', RINGBACK, TIMEOUT, 'bridge user/bob@example.test', HANGUP]
  for (const dialed of ['1002', 'bob', 'BOB', '0501231002']) {
    const xml = xmlOf(phoneCall(dialed))
    t.same(actionsOf(xml), bob, `user by ${dialed}`)
    t.equal(findAll(parseDocument(xml), 'condition')[0]?.attrs.expression, `^${dialed}$`)
    t.equal(findAll(parseDocument(xml), 'extension')[0]?.attrs.name, 'cod_dial')
  }
  for (const dialed of ['2001', 'sales', '0501232001']) {
    const actions = actionsOf(xmlOf(phoneCall(dialed)))
    t.same(actions.slice(4, 7), ['export nolocal:cod_group_id=10', 'export nolocal:cod_group_name=sales', RINGBACK], `group by ${dialed}`)
  }
  t.same(actionsOf(xmlOf(phoneCall('3001'))), [
    ...phonePrelude,
    'set cod_ivr_url=https%3A%2F%2Fivr.example.test%2Fmenu%3Fa%3D1%26b%3D2',
    'set cod_ivr_extension=3001',
    'park',
  ])
})

t.test('a phone of the domain dialing the PSTN presents its DID when the domain may present it', async (t) => {
  const xml = xmlOf(phoneCall('+81312345678'))
  t.equal(findAll(parseDocument(xml), 'condition')[0]?.attrs.expression, '^\\+81312345678$')
  t.same(actionsOf(xml).slice(4), ['set effective_caller_id_number=0501230001', RINGBACK, TIMEOUT, 'bridge sofia/gateway/pstn/+81312345678', HANGUP])
  const bob = actionsOf(xmlOf(phoneCall('0311112222', { variable_user_name: 'bob' })))
  t.ok(bob.includes('set effective_caller_id_number=0501230000'), "bob's DID is not presentable: the domain's first number")
  const byAlias = actionsOf(xmlOf(phoneCall('*#31#0311', { variable_user_name: '1001' })))
  t.ok(byAlias.includes('bridge sofia/gateway/pstn/*#31#0311'), 'authenticated by extension')
})

t.test('the PSTN is refused to callers that are not phones of the domain', async (t) => {
  t.ok(refused(phoneCall('0311112222', { variable_sip_authorized: null })), 'not authenticated (e.g. from the gateway)')
  t.ok(refused(phoneCall('0311112222', { variable_sip_authorized: 'false' })))
  t.ok(refused(phoneCall('0311112222', { variable_domain_name: 'other.test' })), 'a phone of another domain')
  t.ok(refused(phoneCall('0311112222', { variable_user_name: 'mallory' })), 'a user of another domain')
  t.ok(refused(phoneCall('0311112222', { variable_user_name: null })))
  t.ok(refused(phoneCall('0311112222', { 'Call-Direction': 'outbound', 'Caller-Direction': 'outbound' })), 'outbound without request id')
  t.notOk(refused(phoneCall('1002', { variable_sip_authorized: null })), 'internal numbers stay reachable (DIDs from the gateway)')
})

t.test('an originated leg transferred to a number of the domain (not cod_route) keeps its request variables', async (t) => {
  const actions = actionsOf(xmlOf(originatedLeg({}, { 'Hunt-Destination-Number': '0311112222' })))
  t.same(actions.slice(0, 6), ORIGINATED_PRELUDE)
  t.ok(actions.includes('bridge sofia/gateway/pstn/0311112222'))
})

t.test('a destination leg of our bridge, transferred to a number of the domain, is routed', async (t) => {
  const actions = actionsOf(xmlOf(originatedLeg({ cod_role: 'destination' }, { 'Hunt-Destination-Number': '1003' })))
  t.same(actions.slice(0, 6), ORIGINATED_PRELUDE)
  t.ok(actions.includes('bridge user/carol@example.test'))
})

t.test('dialed numbers that are nothing of the domain get "not found"', async (t) => {
  for (const dialed of ['mallory', 'ops', '9', 'x', '12345678901234567890123456789012345', 'bob@other.test', '1002 XML default', '${system(id)}', '']) {
    t.ok(refused(phoneCall(dialed)), JSON.stringify(dialed))
  }
  for (const dialed of ['1009', '2009', '3009']) {
    t.ok(refused(phoneCall(dialed, { variable_sip_authorized: null })), `${dialed}: another domain's number, from the gateway`)
    // from a phone of the domain it is only a PSTN number, through example.test's own gateway
    t.same(actionsOf(xmlOf(phoneCall(dialed))).slice(-2), [`bridge sofia/gateway/pstn/${dialed}`, HANGUP])
  }
})

t.test('an extension number takes precedence order of the directory: users, groups, extensions, PSTN', async (t) => {
  // "2001" is the sales group's extension, not a PSTN number, even though it looks like one
  t.ok(actionsOf(xmlOf(phoneCall('2001', { variable_sip_authorized: null }))).includes('export nolocal:cod_group_id=10'))
})

t.test('issue 13 D2: the destination sees who calls it', async (t) => {
  const sets = (form: URLSearchParams) => actionsOf(xmlOf(form)).filter((a) => a.startsWith('set effective_caller_id'))
  t.same(sets(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_user_id: '1' })), [
    'set effective_caller_id_name=Alice',
    'set effective_caller_id_number=1001',
  ], 'a user\'s leg: label and extension')
  t.same(sets(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '1', cod_operation: 'call_external' }, { 'Channel-Name': 'sofia/internal/0399990000', 'Caller-Caller-ID-Number': '0501230000', 'Caller-Caller-ID-Name': 'Outbound Call' })), [
    'set effective_caller_id_name=0399990000',
    'set effective_caller_id_number=0399990000',
  ], 'a PSTN leg: its number, not "Outbound Call"')
  t.same(sets(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '1' }, { 'Channel-Name': 'sofia/internal/Outbound${x}' })), [], 'nothing when the name does not end with a number')
  t.notOk(sets(originatedLeg({ cod_dest_kind: 'pstn', cod_dest_value: '0399998888', cod_user_id: '1' })).some((a) => a.includes('_name=')), 'PSTN routes keep their own calling number')
})

/**
 * mod_xml_curl dialplan and directory requests against a small local HTTP server (the captures
 * in test/fixtures/freeswitch/: xml_curl/02, 04, 05, 08, 09, 11, 13; esl/19, 21).
 */
import t from 'tap'
import { names, startSim, type Ev, type RawEsl } from './helpers.js'
import { act, dialplan, field, NOT_FOUND, section, xmlServer, type Req } from './xml-server.js'

const A = 'aaaaaaaa-1111-4111-8111-0000000000a1'
const ALICE0 = 'sofia/internal/sip:alice@127.0.0.1:5070'
const destroyed = (c: RawEsl, uuid: string): Promise<Ev> => c.waitFor((e) => e['Event-Name'] === 'CHANNEL_DESTROY' && e['Unique-ID'] === uuid)
const of = (c: RawEsl, name: string, uuid: string, pred: (e: Ev) => boolean = () => true): Ev | undefined =>
  c.events().find((e) => e['Event-Name'] === name && e['Unique-ID'] === uuid && pred(e))

t.test('originate to `cod_route XML <domain>`: dialplan request, then a bridge to a user (fixtures xml_curl/04, esl/19, esl/21)', async (t) => {
  const srv = await xmlServer(t, (r) =>
    section(r) === 'dialplan' ? { body: dialplan('example.test', act('set', 'hangup_after_bridge=true') + act('bridge', '{cod_role=destination}user/bob@example.test')) } : { body: NOT_FOUND },
  )
  const { sim, connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'freeswitch', password: 'xml-secret' } })
  // One registered terminal for alice: user/alice would otherwise fork to both.
  sim.setTerminalBehaviour('example.test', 'alice', 1, { behaviour: 'unregistered' })
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=20,cod_request_id=r8,cod_domain=example.test}user/alice@example.test cod_route XML example.test\nJob-UUID: j1`)
  const bridge = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_BRIDGE')
  const B = String(bridge['Other-Leg-Unique-ID'])
  t.ok(sim.remoteHangup(B), 'B hangs up (BYE)')
  await destroyed(c, A)
  await destroyed(c, B)
  const seq = c.events().map((e) => `${String(e['Event-Name'])} ${e['Unique-ID'] === A ? 'A' : e['Unique-ID'] === B ? 'B' : 'J'}${e['Application'] !== undefined ? ` ${String(e['Application'])}` : ''}`)
  t.same(seq, [
    'CHANNEL_CREATE A',
    'CHANNEL_PROGRESS A',
    'CHANNEL_ANSWER A',
    'BACKGROUND_JOB J',
    'CHANNEL_EXECUTE_COMPLETE A set',
    'CHANNEL_CREATE B',
    'CHANNEL_PROGRESS B',
    'CHANNEL_ANSWER B',
    'CHANNEL_BRIDGE A',
    'CHANNEL_HANGUP B',
    'CHANNEL_UNBRIDGE A',
    'CHANNEL_HANGUP A',
    'CHANNEL_EXECUTE_COMPLETE A bridge',
    'CHANNEL_HANGUP_COMPLETE B',
    'CHANNEL_HANGUP_COMPLETE A',
    'CHANNEL_DESTROY B',
    'CHANNEL_DESTROY A',
  ])
  t.equal(c.events().find((e) => e['Job-UUID'] === 'j1')?.['_body'], `+OK ${A}\n`, 'the job answers right after ANSWER, before the dialplan')
  const bCreate = of(c, 'CHANNEL_CREATE', B) as Ev
  t.equal(bCreate['Other-Leg-Unique-ID'], A)
  t.equal(bCreate['Channel-Call-UUID'], A)
  t.equal(bCreate['Other-Type'], 'originator')
  t.equal(bCreate['variable_cod_role'], 'destination')
  t.equal(bCreate['variable_cod_request_id'], undefined, 'the A leg variables do not reach B (fixture esl/19-originate-xml-default)')
  t.equal(bridge['variable_originate_disposition'], 'SUCCESS')
  t.equal(bridge['Bridge-A-Unique-ID'], A)
  t.equal(bridge['Channel-State'], 'CS_EXECUTE')
  const unbridge = of(c, 'CHANNEL_UNBRIDGE', A) as Ev
  t.equal(unbridge['variable_last_bridge_hangup_cause'], 'NORMAL_CLEARING')
  t.equal(of(c, 'CHANNEL_HANGUP', B)?.['Channel-State'], 'CS_EXCHANGE_MEDIA')
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', B)?.['variable_sip_hangup_disposition'], 'recv_bye')
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', A)?.['variable_sip_hangup_disposition'], 'send_bye')
  const aExec = of(c, 'CHANNEL_EXECUTE_COMPLETE', A) as Ev
  t.equal(aExec['Caller-Destination-Number'], 'cod_route', 'the caller profile now has the routed destination')
  t.equal(aExec['Caller-Context'], 'example.test')
  t.equal(aExec['Caller-RDNIS'], 'alice')
  t.match(String(aExec['Caller-Transfer-Source']), /^\d+:[0-9a-f-]{36}:bl_xfer:cod_route\/example\.test\/XML$/)
  t.same(sim.executedApps(A).map((x) => `${x.app}(${x.arg})`), ['set(hangup_after_bridge=true)', 'bridge({cod_role=destination}user/bob@example.test)'])

  const dp = srv.requests.find((r) => section(r) === 'dialplan') as Req
  t.equal(dp.method, 'POST')
  t.equal(dp.url, '/freeswitch/xml_curl')
  t.equal(dp.headers['user-agent'], 'freeswitch-xml/1.0')
  t.equal(dp.headers['accept'], '*/*')
  t.equal(dp.headers['content-type'], 'application/x-www-form-urlencoded')
  t.equal(dp.headers['authorization'], `Basic ${Buffer.from('freeswitch:xml-secret').toString('base64')}`)
  t.same(
    dp.form.slice(0, 7).map(([k]) => k),
    ['hostname', 'section', 'tag_name', 'key_name', 'key_value', 'Event-Name', 'Core-UUID'],
  )
  t.equal(field(dp, 'Event-Name'), 'REQUEST_PARAMS')
  t.equal(field(dp, 'Event-Calling-Function'), 'dialplan_xml_locate')
  t.equal(field(dp, 'Channel-State'), 'CS_ROUTING')
  t.equal(field(dp, 'Unique-ID'), A)
  t.equal(field(dp, 'Caller-Destination-Number'), 'cod_route')
  t.equal(field(dp, 'Hunt-Context'), 'example.test')
  t.equal(field(dp, 'Hunt-Destination-Number'), 'cod_route')
  t.equal(field(dp, 'variable_cod_request_id'), 'r8')
  t.equal(field(dp, 'Core-UUID'), sim.coreUuid)

  const dirs = srv.requests.filter((r) => section(r) === 'directory')
  t.equal(dirs.length, 2, 'user/alice (originate) and user/bob (bridge)')
  const d0 = dirs[0] as Req
  t.same(
    d0.form.slice(0, 5),
    [
      ['hostname', d0.form[0]?.[1] ?? ''],
      ['section', 'directory'],
      ['tag_name', 'domain'],
      ['key_name', 'name'],
      ['key_value', 'example.test'],
    ],
  )
  t.equal(field(d0, 'action'), 'user_call')
  t.equal(field(d0, 'as_channel'), 'true')
  t.equal(field(d0, 'user'), 'alice')
  t.equal(field(d0, 'domain'), 'example.test')
  t.equal(field(d0, 'cod_request_id'), 'r8', 'the originate variables go with the request (fixture xml_curl/02-originate-user-1001)')
  t.equal(field(d0, 'Event-Calling-Function'), 'user_outgoing_channel')
})

t.test('a phone dials out: inbound channel, dialplan in the user context, bridge to a user (fixtures xml_curl/05, xml_curl/09)', async (t) => {
  const srv = await xmlServer(t, (r) => (section(r) === 'dialplan' ? { body: dialplan('example.test', act('bridge', 'user/alice@example.test'), '^5555$') } : { body: NOT_FOUND }))
  const { sim, connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'u', password: 'p' } })
  sim.setTerminalBehaviour('example.test', 'alice', 1, { behaviour: 'unregistered' })
  const c = await connect()
  await c.login()
  const uuid = await sim.placeInboundCall({ domain: 'example.test', fromUser: 'bob', destination: '5555' })
  const bridge = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_BRIDGE')
  t.equal(bridge['Unique-ID'], uuid)
  const B = String(bridge['Other-Leg-Unique-ID'])
  const create = of(c, 'CHANNEL_CREATE', uuid) as Ev
  t.equal(create['Call-Direction'], 'inbound')
  t.equal(create['Channel-Name'], 'sofia/internal/bob@example.test')
  t.equal(create['Caller-Destination-Number'], '5555')
  t.equal(create['variable_user_context'], 'example.test')
  const order = names(c.events()).slice(0, 6)
  // As a real 1.10.12 does (test/realfs/): the ring back to the phone fires no CHANNEL_PROGRESS on A,
  // and A's answer comes with CHANNEL_PROGRESS_MEDIA just before CHANNEL_ANSWER.
  t.same(order, ['CHANNEL_CREATE', 'CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_ANSWER', 'CHANNEL_PROGRESS_MEDIA', 'CHANNEL_ANSWER'], 'B rings and answers, then A is answered')
  t.equal(c.events()[5]?.['Unique-ID'], uuid, 'A is answered after B')
  const dp = srv.requests.find((r) => section(r) === 'dialplan') as Req
  t.equal(field(dp, 'Call-Direction'), 'inbound')
  t.equal(field(dp, 'Hunt-Context'), 'example.test')
  t.equal(field(dp, 'Caller-Username'), 'bob')
  t.equal(field(dp, 'Answer-State'), 'ringing')
  t.ok(sim.remoteHangup(uuid), 'the caller hangs up')
  await destroyed(c, B)
  t.equal(of(c, 'CHANNEL_HANGUP', B)?.['Hangup-Cause'], 'NORMAL_CLEARING', 'the B leg is hung up with it')
  t.equal(c.events().filter((e) => e['Event-Name'] === 'CHANNEL_UNBRIDGE').length, 1)
  await destroyed(c, uuid)
})

t.test('no route: wrong context, HTTP 500, "not found", no binding → NO_ROUTE_DESTINATION (fixtures xml_curl/11, xml_curl/13)', async (t) => {
  let mode: 'wrong' | 'error' | 'notfound' | 'broken' = 'wrong'
  const srv = await xmlServer(t, (r) => {
    if (section(r) !== 'dialplan') return { body: NOT_FOUND }
    if (mode === 'wrong') return { body: dialplan('default', act('park')) }
    if (mode === 'error') return { status: 500, body: 'oops' }
    if (mode === 'broken') return { body: '<document type="freeswitch/xml"><section name="dialplan">' }
    return { body: NOT_FOUND }
  })
  const { connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'u', password: 'p' } })
  const c = await connect()
  await c.login()
  for (const [i, m] of (['wrong', 'error', 'notfound', 'broken'] as const).entries()) {
    mode = m
    const uuid = `aaaaaaaa-1111-4111-8111-00000000000${i}`
    await c.command(`bgapi originate {origination_uuid=${uuid}}${ALICE0} cod_route XML example.test\nJob-UUID: j${i}`)
    await destroyed(c, uuid)
    t.equal(c.events().find((e) => e['Job-UUID'] === `j${i}`)?.['_body'], `+OK ${uuid}\n`, `${m}: the originate itself succeeded`)
    t.equal(of(c, 'CHANNEL_HANGUP', uuid)?.['Hangup-Cause'], 'NO_ROUTE_DESTINATION', `${m}: no route`)
  }
  const bare = await startSim(t)
  const c2 = await bare.connect()
  await c2.login()
  await c2.command(`bgapi originate {origination_uuid=${A}}${ALICE0} 1002 XML default`)
  await destroyed(c2, A)
  t.equal(of(c2, 'CHANNEL_HANGUP', A)?.['Hangup-Cause'], 'NO_ROUTE_DESTINATION', 'no binding: no route')
})

t.test('bridge failure: hang up with the cause, or go on with continue_on_fail; NO_ANSWER always goes on', async (t) => {
  let actions = ''
  const srv = await xmlServer(t, (r) => (section(r) === 'dialplan' ? { body: dialplan('example.test', actions) } : { body: NOT_FOUND }))
  const { sim, connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'u', password: 'p' } })
  const c = await connect()
  await c.login()

  actions = act('bridge', 'user/carol@example.test') + act('set', 'not_reached=1')
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} cod_route XML example.test`)
  await destroyed(c, A)
  const hup = of(c, 'CHANNEL_HANGUP', A) as Ev
  t.equal(hup['Hangup-Cause'], 'USER_BUSY', 'A hangs up with the B cause')
  t.equal(hup['variable_originate_disposition'], 'USER_BUSY')
  t.equal(hup['variable_DIALSTATUS'], 'BUSY')
  t.equal(hup['variable_originate_failed_cause'], 'USER_BUSY')
  t.notOk(sim.executedApps(A).some((x) => x.app === 'set'), 'the next action did not run')

  const A2 = 'aaaaaaaa-1111-4111-8111-0000000000a2'
  actions = act('set', 'continue_on_fail=true') + act('bridge', 'user/carol@example.test') + act('set', 'after_fail=yes') + act('hangup', 'CALL_REJECTED')
  await c.command(`bgapi originate {origination_uuid=${A2}}${ALICE0} cod_route XML example.test`)
  await destroyed(c, A2)
  t.equal(of(c, 'CHANNEL_HANGUP', A2)?.['Hangup-Cause'], 'CALL_REJECTED', 'continue_on_fail: the following actions ran')
  t.equal(of(c, 'CHANNEL_HANGUP', A2)?.['variable_after_fail'], 'yes')

  const A3 = 'aaaaaaaa-1111-4111-8111-0000000000a3'
  actions = act('bridge', '{originate_timeout=1}sofia/internal/sip:alice@127.0.0.1:5071') + act('set', 'after_noanswer=yes')
  await c.command(`bgapi originate {origination_uuid=${A3}}${ALICE0} cod_route XML example.test`)
  await destroyed(c, A3)
  const h3 = of(c, 'CHANNEL_HANGUP', A3) as Ev
  t.equal(h3['variable_after_noanswer'], 'yes', 'NO_ANSWER is always a reason to continue')
  t.equal(h3['Hangup-Cause'], 'NORMAL_CLEARING', 'the last dialplan instruction done: NORMAL_CLEARING')
  t.equal(h3['variable_DIALSTATUS'], 'NOANSWER')
})

t.test('uuid_transfer of a parked leg: EXECUTE_COMPLETE(park) first, then the dialplan (fixture esl/21-uuid-transfer)', async (t) => {
  const srv = await xmlServer(t, (r) => (section(r) === 'dialplan' ? { body: dialplan('default', act('export', 'dialed_extension=1002') + act('set', 'x=${destination_number}') + act('park'), '^1002$') } : { body: NOT_FOUND }))
  const { connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'u', password: 'p' } })
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  const from = c.events().length
  t.equal(await c.api(`uuid_transfer ${A} 1002 XML default`), '+OK\n')
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Caller-Destination-Number'] === '1002')
  const after = c.events().slice(from)
  t.same(
    after.map((e) => `${String(e['Event-Name'])}${e['Application'] !== undefined ? ` ${String(e['Application'])}` : ''}`),
    ['CHANNEL_EXECUTE_COMPLETE park', 'CHANNEL_EXECUTE_COMPLETE export', 'CHANNEL_EXECUTE_COMPLETE set', 'CHANNEL_PARK'],
  )
  t.equal(after[0]?.['Caller-Destination-Number'], '1002', 'park ends with the new profile already set (fixture esl/21-uuid-transfer: dest=1002)')
  t.equal(after[2]?.['variable_x'], '1002', '${} is expanded in application data')
  t.equal(after[1]?.['variable_export_vars'], 'dialed_extension')
  await c.api(`uuid_kill ${A}`)
  await destroyed(c, A)
})

t.test('a served directory: dial-string, number-alias and variables (fixtures xml_curl/07, xml_curl/08)', async (t) => {
  const directory =
    '<document type="freeswitch/xml"><section name="directory"><domain name="example.test"><params>' +
    '<param name="dial-string" value="{presence_id=${dialed_user}@${dialed_domain}}${sofia_contact(*/${dialed_user}@${dialed_domain})}"/>' +
    '</params><groups><group name="default"><users><user id="alice" number-alias="8001"><params><param name="password" value="x"/></params>' +
    '<variables><variable name="served_by" value="xml_curl"/><variable name="user_context" value="example.test"/></variables></user></users></group></groups></domain></section></document>'
  const srv = await xmlServer(t, (r) => (section(r) === 'directory' ? { body: directory } : { body: NOT_FOUND }))
  const { connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'u', password: 'p' } })
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=1}user/8001@example.test &park()\nJob-UUID: j1`)
  await c.waitFor((e) => e['Job-UUID'] === 'j1')
  const create = of(c, 'CHANNEL_CREATE', A) as Ev
  t.equal(create['variable_dialed_user'], 'alice', 'number-alias 8001 reaches id alice')
  t.equal(create['variable_presence_id'], 'alice@example.test')
  t.equal(create['variable_served_by'], 'xml_curl')
  t.equal(create['Channel-Presence-ID'], 'alice@example.test')
  t.equal(field(srv.requests[0] as Req, 'user'), '8001')
  await c.command('bgapi originate user/bob@example.test &park()\nJob-UUID: j2')
  t.equal((await c.waitFor((e) => e['Job-UUID'] === 'j2'))['_body'], '-ERR SUBSCRIBER_ABSENT\n', 'a served domain without the user: unknown')
  await c.api(`uuid_kill ${A}`)
})

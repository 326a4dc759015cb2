/**
 * Channel control and simulator controls: uuid_park/uuid_setvar/uuid_answer, show calls of a
 * bridged call, nixevent, DTMF, configuration reload, close().
 */
import t from 'tap'
import { Simulator } from '../../src/sim/index.js'
import { RawEsl, startSim, testDomain, type Ev } from './helpers.js'
import { domainSchema } from '../../src/config/schema.js'

const A = 'aaaaaaaa-5555-4555-8555-000000000001'
const B = 'bbbbbbbb-5555-4555-8555-000000000002'
const ALICE0 = 'sofia/internal/sip:alice@127.0.0.1:5070'
const ALICE1 = 'sofia/internal/sip:alice@127.0.0.1:5071'
const BOB = 'sofia/internal/sip:bob@127.0.0.1:5072'

t.test('uuid_setvar, uuid_park, uuid_answer, show calls of a bridged pair', async (t) => {
  const { connect, sim } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} &park()`)
  await c.command(`bgapi originate {origination_uuid=${B}}${BOB} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === A)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === B)
  t.equal(await c.api(`uuid_setvar ${A} cod_x 42`), '+OK\n')
  t.equal(await c.api(`uuid_getvar ${A} cod_x`), '42')
  t.equal(await c.api(`uuid_setvar ${A} cod_x`), '+OK\n', 'no value unsets')
  t.equal(await c.api(`uuid_getvar ${A} cod_x`), '_undef_')
  t.equal(await c.api(`uuid_answer ${A}`), '+OK\n')
  t.equal(await c.api('uuid_answer nope'), '-ERROR\n')
  t.equal(await c.api('uuid_park nope'), '-ERR No such channel!\n')
  t.equal(await c.api(`uuid_bridge ${A} ${B}`), `+OK ${B}\n`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_BRIDGE')
  const calls = JSON.parse(await c.api('show calls as json')) as { row_count: number; rows: Array<Record<string, string>> }
  t.equal(calls.row_count, 1, 'one call for the bridged pair')
  t.equal(calls.rows[0]?.['uuid'], A)
  t.equal(calls.rows[0]?.['b_uuid'], B)
  const chans = JSON.parse(await c.api('show channels as json')) as { row_count: number }
  t.equal(chans.row_count, 2)
  t.match(await c.api('show channels'), /^uuid,direction,created,created_epoch,name,state,.*\n\n2 total\.\n$/s)
  t.equal(sim.liveChannels().find((x) => x.uuid === A)?.bridgedTo, B)
  const from = c.events().length
  t.equal(await c.api(`uuid_park ${B}`), '+OK\n', 'B leaves the bridge and parks')
  await c.waitFor(() => c.events().slice(from).some((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === B))
  t.ok(c.events().slice(from).some((e) => e['Event-Name'] === 'CHANNEL_UNBRIDGE'), 'unbridged')
  const hupA = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === A)
  t.equal(hupA['Hangup-Cause'], 'NORMAL_CLEARING', 'the uuid_bridge partner has nothing left to run: it hangs up')
  await c.api(`hupall NORMAL_CLEARING`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_DESTROY' && e['Unique-ID'] === B)
})

t.test('nixevent and event ALL', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login('ClueCon', 'CHANNEL_CREATE BACKGROUND_JOB')
  t.equal((await c.command('nixevent CHANNEL_CREATE')).headers['Reply-Text'], '+OK events nixed')
  t.equal((await c.command('nixevent NOT_AN_EVENT')).headers['Reply-Text'], '-ERR no keywords supplied')
  await c.command('bgapi originate sofia/internal/sip:carol@127.0.0.1:5073 &park()\nJob-UUID: j1')
  await c.waitFor((e) => e['Job-UUID'] === 'j1')
  t.notOk(c.events().some((e) => e['Event-Name'] === 'CHANNEL_CREATE'), 'CHANNEL_CREATE was removed')
  await c.command('event json ALL')
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} &park()`)
  const exec = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_EXECUTE' && e['Unique-ID'] === A)
  t.equal(exec['Application'], 'park', 'ALL brings CHANNEL_EXECUTE too')
  t.type(exec['Application-UUID'], 'string')
  await c.api(`uuid_kill ${A}`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_UNPARK')
})

t.test('DTMF: events and play_and_get_digits', async (t) => {
  const { connect, sim } = await startSim(t)
  const c = await connect()
  await c.login('ClueCon', 'DTMF CHANNEL_EXECUTE_COMPLETE CHANNEL_PARK BACKGROUND_JOB')
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  c.send(`sendmsg ${A}\ncall-command: execute\nexecute-app-name: play_and_get_digits\nexecute-app-arg: 1 4 1 5000 # prompt.wav invalid.wav pin \\d+\nevent-uuid: pagd\n\n`)
  await c.next((m) => m.headers['Content-Type'] === 'command/reply')
  sim.sendDtmf(A, '12#')
  const done = await c.waitFor((e) => e['Application-UUID'] === 'pagd')
  t.equal(done['variable_pin'], '12', 'digits up to the terminator')
  const dtmf = c.events().filter((e) => e['Event-Name'] === 'DTMF')
  t.same(dtmf.map((e) => e['DTMF-Digit']), ['1', '2', '#'])
  await c.api(`uuid_kill ${A}`)
})

t.test('configuration reload: a new terminal registers, a removed one is gone', async (t) => {
  const { connect, sim } = await startSim(t)
  const c = await connect()
  await c.login()
  t.equal(await c.api('sofia_contact */zed@example.test'), 'error/user_not_registered')
  const d = testDomain()
  sim.setDomains([
    domainSchema.parse({
      ...d,
      users: [...d.users.filter((u) => u.name !== 'bob'), { id: '9', name: 'zed', password: 'secret9', sim: { terminals: [{ answer_after: 1 }] } }],
    }),
  ])
  t.match(await c.api('sofia_contact */zed@example.test'), /^sofia\/internal\/sip:zed@127\.0\.0\.1:\d+$/)
  t.equal(await c.api('sofia_contact */bob@example.test'), 'error/user_not_registered')
  t.equal(await c.api('sofia_contact */alice@example.test'), `${ALICE0},${ALICE1}`, 'ports stay the same across reloads')
  t.throws(() => sim.setTerminalBehaviour('example.test', 'nobody', 0, { answer_after: 1 }), /no user/)
  t.throws(() => sim.setTerminalBehaviour('example.test', 'alice', 5, { answer_after: 1 }), /no terminal 5/)
})

t.test('a phone call with no xml_curl binding has no route; close() hangs up what is left', async (t) => {
  const sim = new Simulator({ domains: [testDomain()], password: 'ClueCon', timeScale: 0.05 })
  const port = await sim.listen(0)
  const c = await RawEsl.connect(port)
  t.teardown(() => c.close())
  await c.login()
  const uuid = await sim.placeInboundCall({ domain: 'example.test', fromUser: '1001', destination: '1002' })
  const h = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === uuid)
  t.equal(h['Hangup-Cause'], 'NO_ROUTE_DESTINATION')
  t.equal(h['Caller-Username'], 'alice', 'the extension names the user')
  await t.rejects(sim.placeInboundCall({ domain: 'example.test', fromUser: 'nobody', destination: '1' }), /no user/)
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  await sim.close()
  const hup = c.events().find((e: Ev) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === A)
  t.equal(hup?.['Hangup-Cause'], 'SYSTEM_SHUTDOWN')
  t.same(sim.liveChannels(), [])
})

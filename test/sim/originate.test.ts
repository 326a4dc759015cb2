/**
 * originate and channel control against the captured FreeSWITCH behaviour (esl/00-event-sequences
 * and the raw files named in each test).
 */
import t from 'tap'
import { names, startSim, type Ev, type RawEsl } from './helpers.js'

const A = 'aaaaaaaa-1111-4111-8111-000000000001'
const B = 'bbbbbbbb-2222-4222-8222-000000000002'
const ALICE0 = 'sofia/internal/sip:alice@127.0.0.1:5070' // answer_after 1
const ALICE1 = 'sofia/internal/sip:alice@127.0.0.1:5071' // no_answer
const BOB = 'sofia/internal/sip:bob@127.0.0.1:5072' // answer_after 2

const triple = (e: Ev): string => `${String(e['Channel-State'])}/${String(e['Channel-Call-State'])}/${String(e['Answer-State'])}`
const destroyed = (c: RawEsl, uuid: string): Promise<Ev> => c.waitFor((e) => e['Event-Name'] === 'CHANNEL_DESTROY' && e['Unique-ID'] === uuid)
const job = (c: RawEsl, id: string): Promise<Ev> => c.waitFor((e) => e['Event-Name'] === 'BACKGROUND_JOB' && e['Job-UUID'] === id)
const of = (c: RawEsl, name: string, uuid: string): Ev | undefined => c.events().find((e) => e['Event-Name'] === name && e['Unique-ID'] === uuid)

t.test('answered leg: CREATE, PROGRESS, ANSWER, JOB +OK, PARK; uuid_kill answers before the HANGUP (fixture esl/06-originate-sofia-contact)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const cmd = `originate {origination_uuid=${A},originate_timeout=20,ignore_early_media=true,my_request_id=r1,my_domain=example.test}[origination_uuid=${A}]${ALICE0} &park()`
  await c.command(`bgapi ${cmd}\nJob-UUID: j1`)
  const j = await job(c, 'j1')
  t.equal(j['_body'], `+OK ${A}\n`)
  t.equal(j['Job-Command'], 'originate')
  t.equal(j['Job-Command-Arg'], cmd.slice('originate '.length))
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  const killAt = c.raw.length
  t.equal(await c.api(`uuid_kill ${A}`), '+OK\n')
  await destroyed(c, A)
  const after = c.raw.subarray(killAt).toString()
  t.ok(after.indexOf('api/response') < after.indexOf('"CHANNEL_HANGUP"'), 'the api/response comes before CHANNEL_HANGUP')
  const evs = c.events()
  t.same(names(evs, A), [
    'CHANNEL_CREATE',
    'CHANNEL_PROGRESS',
    'CHANNEL_ANSWER',
    'BACKGROUND_JOB',
    'CHANNEL_PARK',
    'CHANNEL_HANGUP',
    'CHANNEL_EXECUTE_COMPLETE',
    'CHANNEL_HANGUP_COMPLETE',
    'CHANNEL_DESTROY',
  ])
  t.same(
    evs.filter((e) => e['Unique-ID'] === A).map(triple),
    [
      'CS_INIT/DOWN/ringing',
      'CS_CONSUME_MEDIA/DOWN/ringing',
      'CS_CONSUME_MEDIA/RINGING/answered',
      'CS_EXECUTE/ACTIVE/answered',
      'CS_EXECUTE/ACTIVE/hangup',
      'CS_EXECUTE/ACTIVE/hangup',
      'CS_REPORTING/HANGUP/hangup',
      'CS_REPORTING/HANGUP/hangup',
    ],
    'state triples of README.md',
  )
  const create = of(c, 'CHANNEL_CREATE', A) as Ev
  for (const h of ['Core-UUID', 'FreeSWITCH-Hostname', 'FreeSWITCH-Switchname', 'FreeSWITCH-IPv4', 'FreeSWITCH-IPv6', 'Event-Date-Local', 'Event-Date-GMT', 'Event-Calling-File', 'Event-Calling-Function', 'Event-Calling-Line-Number']) {
    t.type(create[h], 'string', `${h} present`)
  }
  t.match(String(create['Event-Date-Timestamp']), /^\d{16}$/, 'epoch microseconds')
  t.equal(create['Channel-Name'], 'sofia/internal/alice@127.0.0.1:5070')
  t.equal(create['Call-Direction'], 'outbound')
  t.equal(create['Channel-Call-UUID'], A)
  t.equal(create['Caller-Destination-Number'], 'alice')
  t.equal(create['variable_my_request_id'], 'r1', 'originate variables from CHANNEL_CREATE on')
  t.equal(create['variable_origination_uuid'], A)
  t.equal(create['Channel-State-Number'], '2')
  const seqs = evs.map((e) => Number(e['Event-Sequence']))
  t.ok(seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number)), 'Event-Sequence increases')
  t.equal(new Set(evs.map((e) => e['Core-UUID'])).size, 1, 'one Core-UUID')
  const done = of(c, 'CHANNEL_EXECUTE_COMPLETE', A) as Ev
  t.equal(done['Application'], 'park')
  t.notOk('Application-Data' in done, 'park() has no data')
  const hc = of(c, 'CHANNEL_HANGUP_COMPLETE', A) as Ev
  t.equal(hc['Hangup-Cause'], 'NORMAL_CLEARING')
  t.equal(hc['variable_hangup_cause'], 'NORMAL_CLEARING')
  t.equal(hc['variable_hangup_cause_q850'], '16')
  t.equal(hc['variable_sip_hangup_disposition'], 'send_bye')
  t.equal(of(c, 'CHANNEL_PARK', A)?.['Caller-Caller-ID-Name'], 'Outbound Call', 'caller id flipped on answer')
})

t.test('no answer: HANGUP NO_ANSWER, then -ERR NO_ANSWER before HANGUP_COMPLETE (fixture esl/10-no-answer)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=3,ignore_early_media=true}${ALICE1} &park()\nJob-UUID: j1`)
  await destroyed(c, A)
  t.same(names(c.events(), A), ['CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_HANGUP', 'BACKGROUND_JOB', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY'])
  const h = of(c, 'CHANNEL_HANGUP', A) as Ev
  t.equal(triple(h), 'CS_CONSUME_MEDIA/RINGING/hangup')
  t.equal(h['Hangup-Cause'], 'NO_ANSWER')
  t.equal(c.events().find((e) => e['Job-UUID'] === 'j1')?.['_body'], '-ERR NO_ANSWER\n')
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', A)?.['variable_sip_hangup_disposition'], 'send_cancel')
})

t.test('busy: no PROGRESS, USER_BUSY 486 recv_refuse, job after HANGUP_COMPLETE (fixture esl/11-busy-486)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const carol = await c.api('sofia_contact */carol@example.test')
  await c.command(`bgapi originate {origination_uuid=${A}}${carol} &park()\nJob-UUID: j1`)
  await destroyed(c, A)
  t.same(names(c.events(), A), ['CHANNEL_CREATE', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'BACKGROUND_JOB', 'CHANNEL_DESTROY'])
  const h = of(c, 'CHANNEL_HANGUP', A) as Ev
  t.equal(triple(h), 'CS_CONSUME_MEDIA/DOWN/hangup')
  t.equal(h['Hangup-Cause'], 'USER_BUSY')
  t.equal(h['variable_sip_term_status'], '486')
  t.equal(h['variable_sip_hangup_disposition'], 'recv_refuse')
  t.equal(c.events().find((e) => e['Job-UUID'] === 'j1')?.['_body'], '-ERR USER_BUSY\n')
})

t.test('reject: CALL_REJECTED 603 (fixture esl/12-reject-603)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A}}user/erin@example.test &park()\nJob-UUID: j1`)
  await destroyed(c, A)
  t.same(names(c.events(), A), ['CHANNEL_CREATE', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'BACKGROUND_JOB', 'CHANNEL_DESTROY'])
  const hc = of(c, 'CHANNEL_HANGUP_COMPLETE', A) as Ev
  t.equal(hc['Hangup-Cause'], 'CALL_REJECTED')
  t.equal(hc['variable_sip_term_status'], '603')
  t.equal(hc['variable_hangup_cause_q850'], '21')
  t.equal(hc['variable_dialed_user'], 'erin', 'user/ legs carry dialed_user')
  t.equal(c.events().find((e) => e['Job-UUID'] === 'j1')?.['_body'], '-ERR CALL_REJECTED\n')
})

t.test('not registered / unknown user / unknown gateway: -ERR and no channel event (fixtures esl/14-user-not-registered-1003, 15-unknown-user-9999)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const cases: Array<[string, string]> = [
    [`[origination_uuid=${A}]user/dave@example.test`, '-ERR USER_NOT_REGISTERED\n'],
    [`[origination_uuid=${A}]user/1004@example.test`, '-ERR USER_NOT_REGISTERED\n'],
    [`[origination_uuid=${A}]user/nobody@example.test`, '-ERR SUBSCRIBER_ABSENT\n'],
    [`[origination_uuid=${A}]error/user_not_registered`, '-ERR USER_NOT_REGISTERED\n'],
    [`[origination_uuid=${A}]sofia/gateway/nogw/0312345678`, '-ERR INVALID_GATEWAY\n'],
    [`[origination_uuid=${A}]sofia/external/sip:alice@127.0.0.1:5070`, '-ERR INVALID_PROFILE\n'],
    [`[origination_uuid=${A}]loopback/1000`, '-ERR CHAN_NOT_IMPLEMENTED\n'],
  ]
  for (const [i, [dial, want]] of cases.entries()) {
    await c.command(`bgapi originate {originate_timeout=20}${dial} &park()\nJob-UUID: j${i}`)
    t.equal((await job(c, `j${i}`))['_body'], want, dial)
  }
  t.same(names(c.events()).filter((n) => n !== 'BACKGROUND_JOB'), [], 'no channel events at all')
})

t.test('two legs rung together: the loser gets LOSE_RACE, JOB +OK winner, then PARK (fixture esl/17-two-legs-race)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {originate_timeout=20,ignore_early_media=true,my_request_id=r6}[origination_uuid=${A}]${ALICE0},[origination_uuid=${B}]${ALICE1} &park()\nJob-UUID: j1`)
  await destroyed(c, B)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  const seq = c.events().map((e) => `${String(e['Event-Name'])} ${e['Unique-ID'] === A ? 'A' : e['Unique-ID'] === B ? 'B' : 'J'}`)
  t.same(seq, [
    'CHANNEL_CREATE A',
    'CHANNEL_CREATE B',
    'CHANNEL_PROGRESS A',
    'CHANNEL_PROGRESS B',
    'CHANNEL_ANSWER A',
    'CHANNEL_HANGUP B',
    'BACKGROUND_JOB J',
    'CHANNEL_PARK A',
    'CHANNEL_HANGUP_COMPLETE B',
    'CHANNEL_DESTROY B',
  ])
  const lost = of(c, 'CHANNEL_HANGUP', B) as Ev
  t.equal(lost['Hangup-Cause'], 'LOSE_RACE')
  t.equal(lost['variable_group_dial_status'], 'loser')
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', B)?.['variable_sip_hangup_disposition'], 'send_cancel')
  t.equal(c.events().find((e) => e['Job-UUID'] === 'j1')?.['_body'], `+OK ${A}\n`)
  t.equal(of(c, 'CHANNEL_CREATE', B)?.['variable_my_request_id'], 'r6', 'the {} variables reach every leg')
})

t.test('hupall by request id: same reply text, both ringing legs end NORMAL_CLEARING, both jobs -ERR (fixture esl/20-hupall-request-id)', async (t) => {
  const { sim, connect } = await startSim(t)
  sim.setTerminalBehaviour('example.test', 'bob', 0, { behaviour: 'no_answer' })
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=30,my_request_id=r9}${ALICE1} &park()\nJob-UUID: j1`)
  await c.command(`bgapi originate {origination_uuid=${B},originate_timeout=30,my_request_id=r9}${BOB} &park()\nJob-UUID: j2`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PROGRESS' && e['Unique-ID'] === A)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PROGRESS' && e['Unique-ID'] === B)
  t.equal(await c.api('hupall NORMAL_CLEARING my_request_id r9'), '+OK hangup all channels matching [my_request_id]=[r9] with cause: NORMAL_CLEARING\n')
  await destroyed(c, A)
  await destroyed(c, B)
  const evs = c.events()
  for (const [uuid, id] of [
    [A, 'j1'],
    [B, 'j2'],
  ] as const) {
    const idx = (pred: (e: Ev) => boolean): number => evs.findIndex(pred)
    const hc = idx((e) => e['Event-Name'] === 'CHANNEL_HANGUP_COMPLETE' && e['Unique-ID'] === uuid)
    const jb = idx((e) => e['Job-UUID'] === id)
    const ds = idx((e) => e['Event-Name'] === 'CHANNEL_DESTROY' && e['Unique-ID'] === uuid)
    t.ok(hc < jb && jb < ds, `${id} lands between HANGUP_COMPLETE and DESTROY`)
    t.equal(evs[jb]?.['_body'], '-ERR NORMAL_CLEARING\n')
    t.equal(of(c, 'CHANNEL_HANGUP', uuid)?.['Hangup-Cause'], 'NORMAL_CLEARING')
  }
  t.equal(await c.api('hupall NORMAL_CLEARING my_request_id r9'), '+OK hangup all channels matching [my_request_id]=[r9] with cause: NORMAL_CLEARING\n', 'same text when nothing matches')
})

t.test('uuid_kill of a ringing leg, with and without a cause (fixture esl/24-uuid-kill-ringing-leg)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=30}${ALICE1} &park()\nJob-UUID: j1`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PROGRESS')
  t.equal(await c.api(`uuid_kill ${A}`), '+OK\n')
  await destroyed(c, A)
  t.same(names(c.events(), A), ['CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'BACKGROUND_JOB', 'CHANNEL_DESTROY'])
  t.equal(triple(of(c, 'CHANNEL_HANGUP', A) as Ev), 'CS_CONSUME_MEDIA/RINGING/hangup')
  t.equal((await job(c, 'j1'))['_body'], '-ERR NORMAL_CLEARING\n')
  await c.command(`bgapi originate {origination_uuid=${B},originate_timeout=30}${ALICE1} &park()\nJob-UUID: j2`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PROGRESS' && e['Unique-ID'] === B)
  t.equal(await c.api(`uuid_kill ${B} USER_BUSY`), '+OK\n')
  t.equal((await job(c, 'j2'))['_body'], '-ERR USER_BUSY\n')
  t.equal(of(c, 'CHANNEL_HANGUP', B)?.['Hangup-Cause'], 'USER_BUSY')
  await destroyed(c, B)
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', B)?.['variable_sip_hangup_disposition'], 'send_cancel')
})

t.test('uuid_bridge of two parked legs, then A hangs up (fixture esl/18-uuid-bridge)', async (t) => {
  const { sim, connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} &park()`)
  await c.command(`bgapi originate {origination_uuid=${B}}${BOB} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === A)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === B)
  const from = c.events().length
  t.equal(await c.api(`uuid_bridge ${A} ${B}`), `+OK ${B}\n`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_BRIDGE')
  t.ok(sim.remoteHangup(A), 'A sends BYE')
  await destroyed(c, A)
  const seq = c
    .events()
    .slice(from)
    .map((e) => `${String(e['Event-Name'])} ${e['Unique-ID'] === A ? 'A' : 'B'}`)
  t.same(seq, [
    'CHANNEL_EXECUTE_COMPLETE B',
    'CHANNEL_EXECUTE_COMPLETE A',
    'CHANNEL_BRIDGE A',
    'CHANNEL_HANGUP A',
    'CHANNEL_HANGUP B',
    'CHANNEL_UNBRIDGE A',
    'CHANNEL_HANGUP_COMPLETE B',
    'CHANNEL_DESTROY B',
    'CHANNEL_HANGUP_COMPLETE A',
    'CHANNEL_DESTROY A',
  ])
  const br = of(c, 'CHANNEL_BRIDGE', A) as Ev
  t.equal(br['Other-Leg-Unique-ID'], B)
  t.equal(br['Bridge-A-Unique-ID'], A)
  t.equal(br['Bridge-B-Unique-ID'], B)
  t.equal(br['Channel-State'], 'CS_SOFT_EXECUTE')
  t.equal(of(c, 'CHANNEL_EXECUTE_COMPLETE', B)?.['Other-Leg-Unique-ID'], A)
  const ha = of(c, 'CHANNEL_HANGUP', A) as Ev
  t.equal(ha['variable_sip_term_status'], '200')
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', A)?.['variable_sip_hangup_disposition'], 'recv_bye')
  t.equal(of(c, 'CHANNEL_HANGUP', B)?.['Channel-Call-UUID'], A, 'B carries A as Channel-Call-UUID while bridged')
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', B)?.['variable_sip_hangup_disposition'], 'send_bye')
  t.equal(c.events().filter((e) => e['Event-Name'] === 'CHANNEL_UNBRIDGE').length, 1, 'one UNBRIDGE')
})

t.test('uuid_bridge needs an answered leg', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=30}${ALICE1} &park()`)
  await c.command(`bgapi originate {origination_uuid=${B},originate_timeout=30}${ALICE1} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PROGRESS' && e['Unique-ID'] === B)
  t.equal(await c.api(`uuid_bridge ${A} ${B}`), '-ERR Invalid uuid\n')
  await c.api(`hupall NORMAL_CLEARING origination_uuid ${A}`)
  await c.api(`uuid_kill ${B}`)
  await destroyed(c, B)
})

t.test('a duplicate origination_uuid: -ERR DESTINATION_OUT_OF_ORDER, no events, the call untouched (fixture esl/23-duplicate-origination-uuid)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},my_request_id=r11a}${ALICE0} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  const n = c.events().length
  await c.command(`bgapi originate {origination_uuid=${A},my_request_id=r11b}${BOB} &park()\nJob-UUID: j2`)
  t.equal((await job(c, 'j2'))['_body'], '-ERR DESTINATION_OUT_OF_ORDER\n')
  t.equal(c.events().length, n + 1, 'only the BACKGROUND_JOB')
  const rows = JSON.parse(await c.api('show channels as json')) as { row_count: number; rows: Array<Record<string, string>> }
  t.equal(rows.row_count, 1)
  t.equal(rows.rows[0]?.['uuid'], A)
  t.equal(rows.rows[0]?.['state'], 'CS_EXECUTE')
  t.equal(rows.rows[0]?.['application'], 'park')
})

t.test('blocking api originate: the api/response first, every event after it (fixture esl/22-misc-replies)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const before = c.raw.length
  t.equal(await c.api(`originate {origination_uuid=${B},originate_timeout=20}${ALICE0} &park()`), `+OK ${B}\n`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  const bytes = c.raw.subarray(before).toString()
  t.ok(bytes.indexOf('api/response') < bytes.indexOf('CHANNEL_CREATE'), 'CREATE arrives after the response')
  t.equal(await c.api(`uuid_exists ${B}`), 'true')
  t.equal(await c.api(`originate {originate_timeout=1}${ALICE1} &park()`), '-ERR NO_ANSWER\n')
})

t.test('a dead contact: CREATE then 503 NORMAL_TEMPORARY_FAILURE recv_refuse (fixture esl/22-misc-replies)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=2}sofia/internal/sip:1009@127.0.0.1:5099 &park()\nJob-UUID: j3`)
  await destroyed(c, A)
  t.same(names(c.events(), A), ['CHANNEL_CREATE', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE', 'BACKGROUND_JOB', 'CHANNEL_DESTROY'])
  const h = of(c, 'CHANNEL_HANGUP', A) as Ev
  t.equal(h['Hangup-Cause'], 'NORMAL_TEMPORARY_FAILURE')
  t.equal(h['variable_sip_term_status'], '503')
  t.equal(h['variable_sip_hangup_disposition'], 'recv_refuse')
})

t.test('the far end hangs up a parked call: recv_bye, 200 (fixture esl/25-remote-bye-parked-leg); hangup_after', async (t) => {
  const { sim, connect } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A}}${ALICE0} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK')
  t.ok(sim.remoteHangup(A))
  await destroyed(c, A)
  t.same(names(c.events(), A).slice(-4), ['CHANNEL_HANGUP', 'CHANNEL_EXECUTE_COMPLETE', 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_DESTROY'])
  t.equal(of(c, 'CHANNEL_HANGUP', A)?.['variable_sip_term_status'], '200')
  t.equal(of(c, 'CHANNEL_EXECUTE_COMPLETE', A)?.['variable_sip_hangup_disposition'], 'recv_bye')
  t.notOk(sim.remoteHangup(A), 'gone')

  sim.setTerminalBehaviour('example.test', 'bob', 0, { answer_after: 0.5, hangup_after: 1 })
  await c.command(`bgapi originate {origination_uuid=${B}}${BOB} &park()`)
  await destroyed(c, B)
  t.equal(of(c, 'CHANNEL_HANGUP_COMPLETE', B)?.['variable_sip_hangup_disposition'], 'recv_bye', 'hangup_after: the phone sends BYE')
})

t.test('failover groups, leg_timeout and origination_uuid in {} reaching one leg only', async (t) => {
  const { connect, sim } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {originate_timeout=20}error/user_busy|[origination_uuid=${A}]${ALICE0} &park()\nJob-UUID: j1`)
  t.equal((await job(c, 'j1'))['_body'], `+OK ${A}\n`, 'the second group answers')
  await c.api(`uuid_kill ${A}`)
  await destroyed(c, A)

  await c.command(`bgapi originate {originate_timeout=20}[leg_timeout=1,origination_uuid=${B}]${ALICE1} &park()\nJob-UUID: j2`)
  t.equal((await job(c, 'j2'))['_body'], '-ERR ALLOTTED_TIMEOUT\n', 'leg_timeout ends the leg with ALLOTTED_TIMEOUT')

  const G = 'cccccccc-3333-4333-8333-000000000003'
  await c.command(`bgapi originate {origination_uuid=${G},originate_timeout=1}${ALICE1},${ALICE1} &park()\nJob-UUID: j3`)
  await job(c, 'j3')
  const creates = c.events().filter((e) => e['Event-Name'] === 'CHANNEL_CREATE').slice(-2)
  t.equal(creates[0]?.['Unique-ID'], G, 'the first leg gets the {} uuid')
  t.not(creates[1]?.['Unique-ID'], G, 'the second gets its own')
  t.equal(creates[1]?.['variable_origination_uuid'], undefined)
  t.equal(sim.executedApps().filter((x) => x.app === 'park').length, 1, 'only the answered leg of the first originate ran park')
})

t.test('PSTN legs through the domain gateway', async (t) => {
  const { connect, sim } = await startSim(t)
  const c = await connect()
  await c.login()
  await c.command(`bgapi originate {origination_uuid=${A},origination_caller_id_number=0501230000}sofia/gateway/pstn/0399998888 &park()\nJob-UUID: j1`)
  t.equal((await job(c, 'j1'))['_body'], `+OK ${A}\n`, 'sim.pstn.default answers')
  const create = of(c, 'CHANNEL_CREATE', A) as Ev
  t.equal(create['Channel-Name'], 'sofia/internal/0399998888')
  t.equal(create['Caller-Caller-ID-Number'], '0501230000')
  t.equal(create['variable_sip_gateway_name'], 'pstn')
  await c.command(`bgapi originate {origination_uuid=${B}}sofia/gateway/pstn/0311112222 &park()\nJob-UUID: j2`)
  t.equal((await job(c, 'j2'))['_body'], '-ERR USER_BUSY\n', 'sim.pstn[number]')
  sim.setPstnBehaviour('example.test', '0377776666', { behaviour: 'reject' })
  await c.command('bgapi originate sofia/gateway/pstn/0377776666 &park()\nJob-UUID: j3')
  t.equal((await job(c, 'j3'))['_body'], '-ERR CALL_REJECTED\n', 'setPstnBehaviour')
  t.equal(sim.liveChannels().find((ch) => ch.uuid === A)?.answered, true)
})

t.test('a `{}` or `[]` value holding `${` is refused unless origination_nested_vars=true is in the dial string (check_vars; seen on FreeSWITCH 1.10.12)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const vars = async (dial: string, uuid: string, names: readonly string[]): Promise<string[]> => {
    await c.command(`bgapi originate ${dial} &park()\nJob-UUID: j-${uuid}`)
    await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === uuid)
    const out: string[] = []
    for (const name of names) out.push(await c.api(`uuid_getvar ${uuid} ${name}`))
    await c.api(`uuid_kill ${uuid}`)
    await destroyed(c, uuid)
    return out
  }
  const names = ['g', 'l', 'gg', 'plain']
  t.same(
    await vars(`{g='a\${x}b',gg=a$\${x}}[origination_uuid=${A},l='\${hangup_cause}:\${answer_epoch}',plain=p]${ALICE0}`, A, names),
    ['_undef_', '_undef_', '_undef_', 'p'],
    'refused, `$${` too ("Invalid data (${<name>} contains a variable)"); the rest is set',
  )
  t.same(
    await vars(`{Origination_Nested_Vars=TRUE,g='a\${x}b',gg=a$\${x}}[origination_uuid=${B},l='\${hangup_cause}:\${answer_epoch}',plain=p]${ALICE0}`, B, names),
    ['a${x}b', '${hangup_cause}:${answer_epoch}', 'a$${x}', 'p'],
    'with the text anywhere, in any case (switch_stristr): set as written, not expanded',
  )
})

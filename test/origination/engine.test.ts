import t from 'tap'
import { createChannelModel } from '../../src/channels/index.js'
import { createEngine, type Engine, type EngineDeps } from '../../src/origination/engine.js'
import { silentLogger } from '../../src/util/logger.js'
import { FakePbx, flush } from '../support/fake-pbx.js'
import { DOMAIN, RecordingSink, domainConfig, groupOf, plan, runtimeWith, userOf } from './helpers.js'
import { withoutOwnRecords } from '../pbx/fs-model.js'

const C1 = 'sofia/internal/sip:alice@127.0.0.1:5071'
const C2 = 'sofia/internal/sip:alice@127.0.0.1:5072'

function setup(over: Record<string, unknown> = {}, engineOver: Pick<EngineDeps, 'graceMs' | 'intents'> = {}) {
  const pbx = new FakePbx()
  const rt = runtimeWith([domainConfig(over)])
  const sink = new RecordingSink()
  const engine: Engine = createEngine({
    pbx,
    channels: createChannelModel({ pbx, logger: silentLogger(), directory: () => rt.directory }),
    runtime: () => rt,
    callbacks: sink,
    logger: silentLogger(),
    sipProfile: 'internal',
    huntConcurrency: 4,
    ...engineOver,
  })
  return { pbx, rt, sink, engine }
}

t.test('call_user: one originate, one leg per terminal, winner from the job result', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1, C2])
  const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: true }, { callingName: 'Front desk' })
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const [job, ...more] = pbx.originates()
  if (job === undefined) return t.fail('no originate')
  t.equal(more.length, 0, 'a single originate')
  t.same(r.value.uuids, job.legs, 'the reply lists the legs of the originate, in order')
  t.equal(job.legs.length, 2)
  t.equal(job.globals.get('cod_request_id'), p.requestId)
  t.equal(job.globals.get('cod_role'), 'originator')
  t.equal(job.globals.get('origination_caller_id_name'), 'Front desk')
  t.equal(job.globals.get('originate_timeout'), '30')
  t.equal(job.globals.get('cod_auto_answer'), 'true')
  t.equal(job.legVars[0]?.get('sip_h_Call-Info'), `<sip:${DOMAIN}>;answer-after=0`)
  t.equal(job.legVars[1]?.get('cod_user_id'), '1')
  t.match(job.command, / cod_route XML example\.test$/)
  t.equal(sink.results.length, 0, 'no result before the job ends')

  const [a, b] = job.legs as [string, string]
  pbx.create(job, a)
  pbx.create(job, b)
  t.equal(engine.inUse(DOMAIN), 3, 'created legs count as live, their reservations are gone; the destination leg stays held')
  pbx.answer(a)
  pbx.answer(b) // a losing leg may answer too (test/fixtures/freeswitch/esl/17-two-legs-race.txt)
  job.resolve({ ok: true, value: `+OK ${a}\n` })
  await flush()
  t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 0, uuid: a }])
  t.ok(pbx.commands.includes(`uuid_kill ${b} ORIGINATOR_CANCEL`), 'the loser is cancelled')
  t.notOk(pbx.commands.some((c) => c.startsWith(`uuid_kill ${a}`)), 'the winner is left alone')
})

t.test('call_user: not registered anywhere → user_not_registered, nothing originated', async (t) => {
  const { pbx, rt, engine } = setup()
  t.teardown(() => engine.close())
  const r = await engine.originate(plan({ kind: 'user', user: userOf(rt, 'dave'), autoAnswer: false }))
  t.equal(r.ok ? 'ok' : r.error.reason, 'user_not_registered')
  t.equal(pbx.originates().length, 0)
  t.equal(engine.inUse(DOMAIN), 0, 'no reservation left behind')
})

t.test('failures carry the raw cause and the mapped id', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1])
  for (const [body, id, cause] of [
    ['-ERR NO_ANSWER\n', 'no_answer', 'NO_ANSWER'],
    ['-ERR NO_USER_RESPONSE\n', 'no_answer', 'NO_USER_RESPONSE'],
    ['-ERR USER_BUSY\n', 'busy', 'USER_BUSY'],
    ['-ERR CALL_REJECTED\n', 'rejected', 'CALL_REJECTED'],
    ['-ERR USER_NOT_REGISTERED\n', 'not_registered', 'USER_NOT_REGISTERED'],
    ['-ERR SUBSCRIBER_ABSENT\n', 'not_registered', 'SUBSCRIBER_ABSENT'],
    ['-ERR ORIGINATOR_CANCEL\n', 'cancelled', 'ORIGINATOR_CANCEL'],
    ['-ERR NORMAL_TEMPORARY_FAILURE\n', 'failed', 'NORMAL_TEMPORARY_FAILURE'],
  ] as const) {
    const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false })
    const r = await engine.originate(p)
    if (!r.ok) return t.fail(r.error.description)
    pbx.originates().at(-1)?.resolve({ ok: true, value: body })
    await flush()
    t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 500, error: { id, cause } }], body.trim())
  }
  t.equal(engine.inUse(DOMAIN), 0, 'failed legs release their reservation')
})

t.test('call_external: one gateway leg presenting the calling number', async (t) => {
  const { pbx, sink, engine } = setup()
  t.teardown(() => engine.close())
  const p = plan(
    { kind: 'pstn', number: '0312345678', callingNumber: '0501230000', endUser: { name: "O'Brien ${x}" } },
    { destination: { kind: 'extension', extension: { number: '3001', xml_url: 'https://ivr.example.test/' } } },
  )
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const job = pbx.originates()[0]
  t.match(job?.command, /\]sofia\/gateway\/pstn\/0312345678 cod_route XML example\.test$/)
  t.equal(job?.globals.get('origination_caller_id_number'), '0501230000')
  t.equal(job?.globals.get('cod_dest_kind'), 'extension')
  t.equal(job?.globals.get('cod_dest_value'), '3001')
  t.match(job?.globals.get('cod_end_user'), /^[A-Za-z0-9%._-]+$/)
  t.notOk(withoutOwnRecords(job?.command ?? '').includes('$'), 'no $ but the leg\'s own hangup record')
  job?.resolve({ ok: true, value: `+OK ${r.value.uuids[0]}\n` })
  await flush()
  t.same(sink.of(p.requestId)[0]?.result, { result_code: 0, uuid: r.value.uuids[0] })
})

t.test('group context variables on call_user legs', async (t) => {
  const { pbx, rt, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1])
  const r = await engine.originate(plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false }, { groupContext: groupOf(rt, 'sales') }))
  t.ok(r.ok)
  t.equal(pbx.originates()[0]?.globals.get('cod_group_id'), '10')
  t.equal(pbx.originates()[0]?.globals.get('cod_group_name'), 'sales')
})

t.test('channel limit: exact under concurrency, nothing originated when refused, released when calls end', async (t) => {
  // Each request: bob's one leg and its destination's leg (a PSTN number): two channels.
  const { pbx, rt, sink, engine } = setup({ channel_limit: 9 })
  t.teardown(() => engine.close())
  pbx.contacts.set(`bob@${DOMAIN}`, ['sofia/internal/sip:bob@127.0.0.1:5080'])
  // A call not made through the API counts too.
  pbx.inbound('99999999-9999-4999-8999-999999999999', DOMAIN)
  await flush()
  t.equal(engine.inUse(DOMAIN), 1)
  const plans = Array.from({ length: 12 }, () => plan({ kind: 'user', user: userOf(rt, 'bob'), autoAnswer: false }))
  const replies = await Promise.all(plans.map((p) => engine.originate(p)))
  const admitted = replies.filter((r) => r.ok)
  const refused = replies.filter((r) => !r.ok)
  t.equal(admitted.length, 4, 'exactly the free slots')
  t.same(
    refused.map((r) => (r.ok ? '' : r.error.reason)),
    Array(8).fill('channel_limit_reached'),
  )
  t.equal(pbx.originates().length, 4, 'refused requests originated nothing')
  t.equal(engine.inUse(DOMAIN), 9)

  // One call ends unanswered: its leg's slot and its destination's come back.
  const first = pbx.originates()[0]
  if (first === undefined) return t.fail()
  pbx.create(first, first.legs[0] ?? '')
  first.resolve({ ok: true, value: '-ERR NO_ANSWER\n' })
  pbx.hangup(first.legs[0] ?? '', 'NO_ANSWER')
  await flush()
  t.equal(engine.inUse(DOMAIN), 7)
  const again = await Promise.all([engine.originate(plan({ kind: 'pstn', number: '0311' })), engine.originate(plan({ kind: 'pstn', number: '0312' }))])
  t.same(
    again.map((r) => (r.ok ? 'ok' : r.error.reason)),
    ['ok', 'channel_limit_reached'],
  )
  t.equal(sink.results.length, 1)
})

t.test('pbx_unavailable while disconnected, and when the originate is not accepted', async (t) => {
  const { pbx, rt, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1])
  pbx.connected = false
  const r1 = await engine.originate(plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false }))
  t.equal(r1.ok ? 'ok' : r1.error.reason, 'pbx_unavailable')
  pbx.connected = true
  pbx.refuseSubmit = { kind: 'timeout' }
  const r2 = await engine.originate(plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false }))
  t.equal(r2.ok ? 'ok' : r2.error.reason, 'pbx_unavailable')
  t.equal(engine.inUse(DOMAIN), 0, 'reservation released')
  // Should esl-lite send that originate after all, its legs are cancelled.
  pbx.refuseSubmit = undefined
  const late = '77777777-7777-4777-8777-777777777777'
  const lateUuid = pbx.commands.filter((c) => c.startsWith('originate ')).at(-1)?.match(/origination_uuid=([0-9a-f-]{36})/)?.[1] ?? late
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': lateUuid, variable_cod_domain: DOMAIN })
  pbx.live.set(lateUuid, { answered: false, vars: {} })
  await flush()
  t.ok(pbx.commands.includes(`uuid_kill ${lateUuid} ORIGINATOR_CANCEL`))
})

t.test('job result lost in a reconnection: outcome read from channel state, exactly once', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1, C2])
  const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false })
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const job = pbx.originates()[0]
  if (job === undefined) return t.fail()
  const [a, b] = job.legs as [string, string]
  pbx.create(job, a)
  pbx.create(job, b)
  // The socket drops: the job is failed, events of the gap are lost.
  pbx.connected = false
  job.resolve({ ok: false, error: { kind: 'disconnected' } })
  await flush()
  pbx.live.delete(a) // a ended in the gap (LOSE_RACE)
  const bLive = pbx.live.get(b)
  if (bLive !== undefined) bLive.answered = true // b answered in the gap
  t.equal(sink.results.length, 0, 'nothing decided before the re-read')
  pbx.reconnect()
  await flush(10)
  t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 0, uuid: b }])
  // A duplicate job result (esl-lite re-sent the originate) changes nothing.
  job.resolve({ ok: true, value: '-ERR DESTINATION_OUT_OF_ORDER\n' })
  pbx.hangup(b, 'NORMAL_CLEARING')
  await flush()
  t.equal(sink.of(p.requestId).length, 1)
})

t.test('DESTINATION_OUT_OF_ORDER from a re-sent originate while the legs ring: wait for them', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1])
  const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false })
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const job = pbx.originates()[0]
  const a = job?.legs[0] ?? ''
  if (job === undefined) return t.fail()
  pbx.create(job, a)
  job.resolve({ ok: true, value: '-ERR DESTINATION_OUT_OF_ORDER\n' })
  await flush(10)
  t.equal(sink.results.length, 0, 'not a failure: the leg still rings')
  pbx.hangup(a, 'NO_ANSWER')
  await flush()
  t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 500, error: { id: 'no_answer', cause: 'NO_ANSWER' } }])
})

t.test('DESTINATION_OUT_OF_ORDER with no leg anywhere is the failure it says', async (t) => {
  const { pbx, sink, engine } = setup()
  t.teardown(() => engine.close())
  const p = plan({ kind: 'pstn', number: '0312345678' })
  const r = await engine.originate(p)
  t.ok(r.ok)
  pbx.originates()[0]?.resolve({ ok: true, value: '-ERR DESTINATION_OUT_OF_ORDER\n' })
  await flush(10)
  t.same(sink.of(p.requestId)[0]?.result, { result_code: 500, error: { id: 'failed', cause: 'DESTINATION_OUT_OF_ORDER' } })
})

t.test('watchdog: FreeSWITCH never reports → one failure result, ringing legs cancelled', async (t) => {
  const { pbx, rt, sink, engine } = setup({}, { graceMs: 20 })
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1])
  const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false }, { answerTimeoutSec: 1 })
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const job = pbx.originates()[0]
  if (job === undefined) return t.fail()
  pbx.create(job, job.legs[0] ?? '')
  const result = await sink.waitFor(p.requestId, 3000)
  t.same(result, { result_code: 500, error: { id: 'cancelled', cause: 'ORIGINATOR_CANCEL' } })
  t.ok(pbx.commands.includes(`uuid_kill ${job.legs[0]} ORIGINATOR_CANCEL`))
  t.equal(sink.of(p.requestId).length, 1)
})

t.test('close(): calls still ringing are cancelled and reported once', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  pbx.contacts.set(`alice@${DOMAIN}`, [C1])
  const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false })
  const r = await engine.originate(p)
  t.ok(r.ok)
  await engine.close()
  t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 500, error: { id: 'cancelled', cause: 'ORIGINATOR_CANCEL' } }])
  const again = await engine.originate(plan({ kind: 'pstn', number: '0312345678' }))
  t.equal(again.ok ? 'ok' : again.error.reason, 'pbx_unavailable')
})

t.test('close() while FreeSWITCH is accepting: the API gets an error and no result is ever sent', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  pbx.contacts.set(`alice@${DOMAIN}`, [C1])
  let release!: () => void
  pbx.holdSubmit = new Promise<void>((r) => (release = r))
  const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false })
  const pending = engine.originate(p)
  await flush()
  const closing = engine.close()
  release()
  const r = await pending
  await closing
  t.equal(r.ok ? 'ok' : r.error.reason, 'pbx_unavailable')
  t.equal(sink.of(p.requestId).length, 0)
  // Whatever that originate creates is hung up by request id.
  t.ok(pbx.commands.includes(`hupall ORIGINATOR_CANCEL cod_request_id ${p.requestId}`))
})

t.test('no callback_url: no delivery, but the outcome stream still reports', async (t) => {
  const { pbx, sink, engine } = setup()
  t.teardown(() => engine.close())
  const outcomes: string[] = []
  engine.onOutcome((o) => outcomes.push(o.requestId))
  const p = plan({ kind: 'pstn', number: '0312345678' }, { callbackUrl: undefined })
  const r = await engine.originate(p)
  t.ok(r.ok)
  pbx.originates()[0]?.resolve({ ok: true, value: '-ERR USER_BUSY\n' })
  await flush()
  t.equal(sink.results.length, 0)
  t.same(outcomes, [p.requestId])
})

t.test('call_group: hunt order, reply lists every leg, one member reserved at a time', async (t) => {
  const { pbx, rt, sink, engine } = setup({ channel_limit: 4 })
  t.teardown(() => engine.close())
  pbx.contacts.set(`carol@${DOMAIN}`, ['sofia/internal/sip:carol@127.0.0.1:5090'])
  pbx.contacts.set(`alice@${DOMAIN}`, [C1, C2])
  pbx.contacts.set(`bob@${DOMAIN}`, ['sofia/internal/sip:bob@127.0.0.1:5080'])
  const group = groupOf(rt, 'sales')
  const members = rt.directory.domain(DOMAIN)?.members(group) ?? []
  const p = plan({ kind: 'group', group, members, memberAnswerTimeoutSec: 15 }, { answerTimeoutSec: 60, callingName: 'Sales line' })
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.equal(r.value.uuids.length, 4, 'one uuid per terminal of every member')
  t.equal(engine.inUse(DOMAIN), 2, 'only the first member is reserved, with the destination leg')
  const first = pbx.originates()[0]
  t.same(first?.legs, r.value.uuids.slice(0, 1))
  t.equal(first?.globals.get('originate_timeout'), '15')
  t.equal(first?.globals.get('cod_group_id'), '10')
  t.equal(first?.globals.get('origination_caller_id_name'), 'Sales line')
  first?.resolve({ ok: true, value: '-ERR USER_BUSY\n' })
  await flush(10)
  const second = pbx.originates()[1]
  t.same(second?.legs, r.value.uuids.slice(1, 3), 'the next member at once, all its terminals')
  t.equal(second?.legVars[0]?.get('cod_user_id'), '1')
  t.equal(engine.inUse(DOMAIN), 3)
  second?.resolve({ ok: true, value: `+OK ${r.value.uuids[2]}\n` })
  await flush(10)
  t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 0, uuid: r.value.uuids[2] }])
  t.equal(pbx.originates().length, 2, 'members after the answer are never rung')
})

t.test('call_group: no member registered → no_member_available, nothing originated', async (t) => {
  const { pbx, rt, engine } = setup()
  t.teardown(() => engine.close())
  const group = groupOf(rt, 'sales')
  const members = rt.directory.domain(DOMAIN)?.members(group) ?? []
  const r = await engine.originate(plan({ kind: 'group', group, members, memberAnswerTimeoutSec: 15 }))
  t.equal(r.ok ? 'ok' : r.error.reason, 'no_member_available')
  t.equal(pbx.originates().length, 0)
})

t.test("write-ahead: a request's intent is durable before its originate is written; a refusal unplaces it", async (t) => {
  const log: string[] = []
  let durable!: () => void
  const intentWritten = new Promise<void>((r) => (durable = r))
  const { pbx, rt, engine } = setup(
    {},
    {
      intents: {
        intended: async (p, uuids) => {
          log.push(`intended ${p.requestId} ${uuids.length}`)
          await intentWritten
          log.push('durable')
        },
        unplaced: (p) => log.push(`unplaced ${p.requestId}`),
      },
    },
  )
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [C1, C2])
  const p = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: true })
  const placed = engine.originate(p)
  await flush()
  t.same(log, [`intended ${p.requestId} 2`], 'the intent names both legs of the first originate')
  t.equal(pbx.originates().length, 0, 'nothing written to FreeSWITCH while the intent is not durable')
  durable()
  const r = await placed
  t.ok(r.ok)
  t.equal(pbx.originates().length, 1)
  t.same(log, [`intended ${p.requestId} 2`, 'durable'], 'placed: no unplaced record')

  // FreeSWITCH refuses the next originate: the request placed nothing.
  pbx.refuseSubmit = { kind: 'disconnected' }
  const refused = plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: true })
  const rr = await engine.originate(refused)
  t.notOk(rr.ok)
  t.same(log.slice(2), [`intended ${refused.requestId} 2`, 'durable', `unplaced ${refused.requestId}`])
})

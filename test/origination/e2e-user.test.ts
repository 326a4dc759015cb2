/** call_user, call_external and initiate_call through the simulator over a real ESL socket. */
import t from 'tap'
import { harness, waitFor } from './e2e-harness.js'
import { DOMAIN, plan, userOf } from './helpers.js'

t.test('call_user: several terminals ring together, one answers, the others are cancelled', async (t) => {
  const h = await harness(t)
  const alice = userOf(h.rt, 'alice') // terminals: answers after 1 s, never answers
  const p = plan({ kind: 'user', user: alice, autoAnswer: false }, { answerTimeoutSec: 10 })
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.equal(r.value.uuids.length, 2, 'one leg per registered terminal')
  const [orig, ...more] = h.originates()
  t.equal(more.length, 0, 'one originate')
  t.same(
    orig?.groups.flatMap((g) => g.map((l) => l.vars.get('origination_uuid'))),
    r.value.uuids,
  )
  const result = await h.sink.waitFor(p.requestId)
  t.same(result, { result_code: 0, uuid: r.value.uuids[0] }, 'the terminal that answers wins')
  const loser = r.value.uuids[1] ?? ''
  await waitFor('loser gone', () => !h.sim.liveChannels().some((c) => c.uuid === loser))
  t.equal(h.sink.of(p.requestId).length, 1)
})

t.test('call_user: nobody answers → no_answer with NO_ANSWER', async (t) => {
  const h = await harness(t)
  const p = plan({ kind: 'user', user: userOf(h.rt, 'erin'), autoAnswer: false }, { answerTimeoutSec: 2 })
  const r = await h.engine.originate(p)
  t.ok(r.ok)
  t.same(await h.sink.waitFor(p.requestId), { result_code: 500, error: { id: 'no_answer', cause: 'NO_ANSWER' } })
  t.equal(h.originates()[0]?.globals.get('originate_timeout'), '2')
})

t.test('call_user: busy and reject', async (t) => {
  const h = await harness(t)
  const busy = plan({ kind: 'user', user: userOf(h.rt, 'carol'), autoAnswer: false })
  const reject = plan({ kind: 'user', user: userOf(h.rt, 'frank'), autoAnswer: false })
  t.ok((await h.engine.originate(busy)).ok)
  t.ok((await h.engine.originate(reject)).ok)
  t.same(await h.sink.waitFor(busy.requestId), { result_code: 500, error: { id: 'busy', cause: 'USER_BUSY' } })
  t.same(await h.sink.waitFor(reject.requestId), { result_code: 500, error: { id: 'rejected', cause: 'CALL_REJECTED' } })
})

t.test('call_user: not registered → user_not_registered, no originate sent', async (t) => {
  const h = await harness(t)
  const r = await h.engine.originate(plan({ kind: 'user', user: userOf(h.rt, 'dave'), autoAnswer: false }))
  t.equal(r.ok ? 'ok' : r.error.reason, 'user_not_registered')
  t.equal(h.originates().length, 0)
  t.ok(h.sim.commands.some((c) => c.text.startsWith(`api sofia_contact */dave@${DOMAIN}`)))
})

t.test('call_user: auto_answer headers on the user legs, caller name and group context', async (t) => {
  const h = await harness(t)
  const group = h.rt.directory.domain(DOMAIN)?.groupsBy('group_name', 'sales')[0]
  const p = plan(
    { kind: 'user', user: userOf(h.rt, 'bob'), autoAnswer: true },
    { callingName: "Support, O'Neil ${x}", ...(group !== undefined ? { groupContext: group } : {}) },
  )
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const orig = h.originates()[0]
  const leg = orig?.groups[0]?.[0]
  t.equal(leg?.vars.get('sip_h_Call-Info'), `<sip:${DOMAIN}>;answer-after=0`)
  t.equal(leg?.vars.get('sip_h_Alert-Info'), `<sip:${DOMAIN}>;info=alert-autoanswer;delay=0`)
  t.equal(orig?.globals.get('origination_caller_id_name'), 'Support O Neil x')
  t.equal(orig?.globals.get('cod_group_id'), '10')
  t.equal(orig?.globals.get('cod_group_name'), 'sales')
  const live = h.sim.liveChannels().find((c) => c.uuid === r.value.uuids[0])
  t.equal(live?.variables['sip_h_Call-Info'], `<sip:${DOMAIN}>;answer-after=0`, 'the simulated channel carries the header')
  t.equal(live?.variables.cod_group_name, 'sales')
  t.same(await h.sink.waitFor(p.requestId), { result_code: 0, uuid: r.value.uuids[0] })
})

t.test('call_external: answers; busy; calling_number presented', async (t) => {
  const h = await harness(t)
  const ok = plan({ kind: 'pstn', number: '0312345678', callingNumber: '0501230000' })
  const busy = plan({ kind: 'pstn', number: '0311112222' })
  const r = await h.engine.originate(ok)
  if (!r.ok) return t.fail(r.error.description)
  t.equal(r.value.uuids.length, 1)
  t.ok((await h.engine.originate(busy)).ok)
  t.same(await h.sink.waitFor(ok.requestId), { result_code: 0, uuid: r.value.uuids[0] })
  t.same(await h.sink.waitFor(busy.requestId), { result_code: 500, error: { id: 'busy', cause: 'USER_BUSY' } })
  const [o1] = h.originates()
  t.equal(o1?.groups[0]?.[0]?.endpoint, 'sofia/gateway/pstn/0312345678')
  t.equal(o1?.globals.get('origination_caller_id_number'), '0501230000')
})

t.test('initiate_call: to a user, and to a PSTN number (ani presented)', async (t) => {
  const h = await harness(t)
  const toUser = plan({ kind: 'user', user: userOf(h.rt, 'bob'), autoAnswer: false }, { operation: 'initiate_call' })
  const toPstn = plan({ kind: 'pstn', number: '0398765432', callingNumber: '0501230000' }, { operation: 'initiate_call' })
  const r1 = await h.engine.originate(toUser)
  const r2 = await h.engine.originate(toPstn)
  if (!r1.ok || !r2.ok) return t.fail('refused')
  t.same(await h.sink.waitFor(toUser.requestId), { result_code: 0, uuid: r1.value.uuids[0] })
  t.same(await h.sink.waitFor(toPstn.requestId), { result_code: 0, uuid: r2.value.uuids[0] })
  const [o1, o2] = h.originates()
  t.equal(o1?.globals.get('cod_operation'), 'initiate_call')
  t.match(o1?.groups[0]?.[0]?.endpoint, /^sofia\/internal\/sip:bob@/)
  t.equal(o2?.groups[0]?.[0]?.endpoint, 'sofia/gateway/pstn/0398765432')
  t.equal(o2?.globals.get('origination_caller_id_number'), '0501230000')
})

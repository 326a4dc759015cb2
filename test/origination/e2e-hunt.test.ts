/** call_group hunting (issue 5) through the simulator over a real ESL socket. */
import t from 'tap'
import type { Group } from '../../src/directory/directory.js'
import type { OriginationPlan } from '../../src/origination/plan.js'
import { harness, waitFor, type Harness } from './e2e-harness.js'
import { DOMAIN, plan, userOf } from './helpers.js'

const users = [
  { id: '1', name: 'alice', password: 'secret-1', sim: { terminals: [{ answer_after: 1 }, { behaviour: 'no_answer' }] } },
  { id: '2', name: 'bob', password: 'secret-2', sim: { terminals: [{ answer_after: 1 }] } },
  { id: '3', name: 'carol', password: 'secret-3', sim: { terminals: [{ behaviour: 'busy' }] } },
  { id: '4', name: 'dave', password: 'secret-4', sim: { terminals: [{ behaviour: 'unregistered' }] } },
  { id: '5', name: 'erin', password: 'secret-5', sim: { terminals: [{ behaviour: 'no_answer' }] } },
  { id: '6', name: 'frank', password: 'secret-6', sim: { terminals: [{ behaviour: 'reject' }] } },
  { id: '7', name: 'gina', password: 'secret-7', sim: { terminals: [{ behaviour: 'no_answer' }] } },
  { id: '8', name: 'hank', password: 'secret-8', sim: { terminals: [{ behaviour: 'no_answer' }] } },
]
const g = (id: string, name: string, members: string[], answer_timeout = 60, member_answer_timeout = 15) => ({
  id,
  name,
  label: `Group ${name}`,
  extension: `20${id}`,
  did: `05012320${id}`,
  members,
  answer_timeout,
  member_answer_timeout,
})
const groups = [
  g('10', 'first', ['bob', 'alice']),
  g('11', 'second', ['erin', 'bob'], 60, 2),
  g('12', 'busy', ['carol', 'frank', 'bob'], 60, 4),
  g('13', 'unreg', ['dave', 'bob']),
  g('14', 'slow', ['erin', 'gina', 'hank'], 5, 3),
  g('15', 'none', ['dave']),
  g('16', 'pair', ['erin', 'alice'], 60, 2),
]

const setup = (t: Parameters<typeof harness>[0], over: Record<string, unknown> = {}) => harness(t, { users, groups, ...over })

const groupNamed = (h: Harness, name: string): Group => {
  const group = h.rt.directory.domain(DOMAIN)?.groupsBy('group_name', name)[0]
  if (group === undefined) throw new Error(`no group ${name}`)
  return group
}

/** A call_group plan as the API builds it: request values, else the group's. */
const huntPlan = (h: Harness, name: string, over: { answer?: number; member?: number } & Partial<OriginationPlan> = {}): OriginationPlan => {
  const group = groupNamed(h, name)
  const members = h.rt.directory.domain(DOMAIN)?.members(group) ?? []
  const { answer, member, ...rest } = over
  return plan(
    { kind: 'group', group, members, memberAnswerTimeoutSec: member ?? group.member_answer_timeout },
    { answerTimeoutSec: answer ?? group.answer_timeout, callingName: 'Hunt Line', ...rest },
  )
}

const legsOf = (h: Harness) => h.originates().map((o) => o.groups.flatMap((x) => x.map((l) => l.vars.get('origination_uuid'))))

t.test('first member answers: only that member rung, callback names its leg', async (t) => {
  const h = await setup(t)
  const p = huntPlan(h, 'first')
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.equal(r.value.uuids.length, 3, 'bob 1 terminal + alice 2 terminals, in hunt order')
  t.same(await h.sink.waitFor(p.requestId), { result_code: 0, uuid: r.value.uuids[0] })
  t.same(legsOf(h), [r.value.uuids.slice(0, 1)], 'alice was never rung')
  const o = h.originates()[0]
  t.equal(o?.globals.get('cod_group_id'), '10')
  t.equal(o?.globals.get('cod_group_name'), 'first')
  t.equal(o?.globals.get('cod_operation'), 'call_group')
  t.equal(o?.globals.get('origination_caller_id_name'), 'Hunt Line')
  t.equal(o?.groups[0]?.[0]?.vars.get('cod_user_id'), '2')
})

t.test('first member does not answer, the second does; member timeout honoured', async (t) => {
  const h = await setup(t)
  const p = huntPlan(h, 'second')
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.same(await h.sink.waitFor(p.requestId), { result_code: 0, uuid: r.value.uuids[1] })
  t.same(legsOf(h), [[r.value.uuids[0]], [r.value.uuids[1]]])
  t.same(
    h.originates().map((o) => o.globals.get('originate_timeout')),
    ['2', '2'],
  )
  t.same(
    h.originates().map((o) => o.globals.get('origination_caller_id_name')),
    ['Hunt Line', 'Hunt Line'],
    'calling_name on every member',
  )
})

t.test('busy and rejecting members are skipped at once', async (t) => {
  const h = await setup(t)
  const p = huntPlan(h, 'busy')
  const started = Date.now()
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.same(await h.sink.waitFor(p.requestId), { result_code: 0, uuid: r.value.uuids[2] })
  t.same(legsOf(h), [[r.value.uuids[0]], [r.value.uuids[1]], [r.value.uuids[2]]])
  // No member timeout was used up: each originate got the full member timeout.
  t.same(
    h.originates().map((o) => o.globals.get('originate_timeout')),
    ['4', '4', '4'],
  )
  t.ok(Date.now() - started < 3000)
})

t.test('unregistered member skipped: not in the reply, never rung', async (t) => {
  const h = await setup(t)
  const p = huntPlan(h, 'unreg')
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.equal(r.value.uuids.length, 1)
  t.same(await h.sink.waitFor(p.requestId), { result_code: 0, uuid: r.value.uuids[0] })
  t.equal(h.originates()[0]?.groups[0]?.[0]?.vars.get('cod_user_id'), '2')
})

t.test('the overall answer_timeout cuts the hunt short', async (t) => {
  const h = await setup(t)
  const p = huntPlan(h, 'slow') // answer 5 s, member 3 s, three members who never answer
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.same(await h.sink.waitFor(p.requestId), { result_code: 500, error: { id: 'no_answer', cause: 'NO_ANSWER' } })
  const timeouts = h.originates().map((o) => Number(o.globals.get('originate_timeout')))
  t.equal(timeouts.length, 2, 'the third member is never rung')
  t.equal(timeouts[0], 3)
  t.ok((timeouts[1] ?? 99) <= 2, `the second member only gets what is left (${timeouts[1]})`)
})

t.test('group defaults apply, request values override them', async (t) => {
  const h = await setup(t)
  const byDefault = huntPlan(h, 'slow')
  const overridden = huntPlan(h, 'slow', { answer: 2, member: 1 })
  t.ok((await h.engine.originate(byDefault)).ok)
  t.ok((await h.engine.originate(overridden)).ok)
  await h.sink.waitFor(byDefault.requestId)
  await h.sink.waitFor(overridden.requestId)
  const timeoutsOf = (requestId: string) =>
    h
      .originates()
      .filter((o) => o.globals.get('cod_request_id') === requestId)
      .map((o) => Number(o.globals.get('originate_timeout')))
  t.equal(timeoutsOf(byDefault.requestId)[0], 3, "the group's member_answer_timeout")
  t.same(timeoutsOf(overridden.requestId).slice(0, 1), [1], 'the request value')
  t.ok(timeoutsOf(overridden.requestId).length <= 2, 'the request answer_timeout bounds the hunt')
})

t.test('no member registered → no_member_available, nothing originated', async (t) => {
  const h = await setup(t)
  const r = await h.engine.originate(huntPlan(h, 'none'))
  t.equal(r.ok ? 'ok' : r.error.reason, 'no_member_available')
  t.equal(h.originates().length, 0)
  t.equal(h.engine.inUse(DOMAIN), 0)
})

t.test('reservations while hunting: one member at a time; a member that no longer fits is skipped', async (t) => {
  const h = await setup(t, { channel_limit: 4 })
  const p = huntPlan(h, 'pair') // erin (1 terminal, no answer, 2 s) then alice (2 terminals)
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  t.equal(r.value.uuids.length, 3)
  t.equal(h.engine.inUse(DOMAIN), 2, 'only the ringing member counts, with the destination leg for after the answer')
  // Another call (its leg and its destination leg) takes the two slots the hunt does not hold while erin rings.
  const other = plan({ kind: 'pstn', number: '0322223333' }, { answerTimeoutSec: 10 }) // never answers
  const o = await h.engine.originate(other)
  t.ok(o.ok, 'the slots the hunt does not hold are free')
  t.same(await h.sink.waitFor(p.requestId), { result_code: 500, error: { id: 'no_answer', cause: 'NO_ANSWER' } })
  t.equal(legsOf(h).filter((l) => l.includes(r.value.uuids[1])).length, 0, "alice's two legs did not fit and were not rung")
  await h.sink.waitFor(other.requestId)
  await waitFor('all channels gone', () => h.engine.inUse(DOMAIN) === 0)
})

t.test('group context on call_user and initiate_call legs', async (t) => {
  const h = await setup(t)
  const group = groupNamed(h, 'busy')
  const a = plan({ kind: 'user', user: userOf(h.rt, 'bob'), autoAnswer: false }, { groupContext: group })
  const b = plan({ kind: 'pstn', number: '0398765432' }, { operation: 'initiate_call', groupContext: group })
  const seen = new Map<string, Readonly<Record<string, string>>>()
  h.channels.onChange((c) => {
    if (c.kind === 'created') seen.set(c.channel.uuid, c.channel.vars)
  })
  const ra = await h.engine.originate(a)
  const rb = await h.engine.originate(b)
  if (!ra.ok || !rb.ok) return t.fail('refused')
  await h.sink.waitFor(a.requestId)
  await h.sink.waitFor(b.requestId)
  for (const o of h.originates()) {
    t.equal(o.globals.get('cod_group_id'), '12')
    t.equal(o.globals.get('cod_group_name'), 'busy')
  }
  for (const uuid of [ra.value.uuids[0] ?? '', rb.value.uuids[0] ?? '']) {
    t.same(
      { id: seen.get(uuid)?.cod_group_id, name: seen.get(uuid)?.cod_group_name },
      { id: '12', name: 'busy' },
      'in the channel events FreeSWITCH sends',
    )
  }
})

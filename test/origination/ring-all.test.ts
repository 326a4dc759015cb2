/**
 * call_group with strategy ring_all (issue 31, src/origination/ring-all.ts) on the fake
 * FreeSWITCH: one originate of every registered terminal of every member, members without one
 * skipped, every leg and the destination reserved before anything rings, answer_timeout as the
 * originate's timeout, the job's winner as the result.
 */
import t from 'tap'
import { createChannelModel } from '../../src/channels/index.js'
import type { GroupStrategy } from '../../src/config/schema.js'
import { createEngine, type Engine } from '../../src/origination/engine.js'
import type { Runtime } from '../../src/runtime/store.js'
import { silentLogger } from '../../src/util/logger.js'
import { FakePbx, flush } from '../support/fake-pbx.js'
import { DOMAIN, RecordingSink, domainConfig, groupOf, plan, runtimeWith } from './helpers.js'

const CAROL = 'sofia/internal/sip:carol@127.0.0.1:5090'
const ALICE_1 = 'sofia/internal/sip:alice@127.0.0.1:5071'
const ALICE_2 = 'sofia/internal/sip:alice@127.0.0.1:5072'
const BOB = 'sofia/internal/sip:bob@127.0.0.1:5080'

function setup(over: Record<string, unknown> = {}) {
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
  })
  return { pbx, rt, sink, engine }
}

/** sales: carol, alice, bob (helpers.ts), rung as `strategy` says; answer_timeout 40, member 15. */
const salesPlan = (rt: Runtime, strategy: GroupStrategy) => {
  const group = groupOf(rt, 'sales')
  const members = rt.directory.domain(DOMAIN)?.members(group) ?? []
  return plan({ kind: 'group', group, members, memberAnswerTimeoutSec: 15, strategy }, { answerTimeoutSec: 40 })
}

t.test('one originate of every terminal of every member, in member order; the winner is the result', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`carol@${DOMAIN}`, [CAROL])
  pbx.contacts.set(`alice@${DOMAIN}`, [ALICE_1, ALICE_2])
  pbx.contacts.set(`bob@${DOMAIN}`, [BOB])
  const p = salesPlan(rt, 'ring_all')
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const [job, ...more] = pbx.originates()
  if (job === undefined) return t.fail('no originate')
  t.equal(more.length, 0, 'a single originate')
  t.equal(r.value.uuids.length, 4, 'one UUID per terminal leg')
  t.same(r.value.uuids, job.legs, 'the reply lists the legs of the originate, in order')
  t.match(job.command, /sip:carol@.*,.*sip:alice@127\.0\.0\.1:5071.*,.*sip:alice@127\.0\.0\.1:5072.*,.*sip:bob@/, "FreeSWITCH's simultaneous dial string, in the group's member order")
  t.same(
    job.legVars.map((v) => v.get('cod_user_id')),
    ['3', '1', '1', '2'],
    "each leg carries its member's user id",
  )
  t.equal(job.globals.get('originate_timeout'), '40', 'answer_timeout bounds the ring, not member_answer_timeout (15)')
  t.equal(job.globals.get('cod_group_id'), '10', 'the group context is on every leg')
  t.equal(job.globals.get('cod_group_name'), 'sales')
  t.equal(job.globals.get('cod_operation'), 'call_group')

  const [carol, alice1, alice2, bob] = job.legs as [string, string, string, string]
  for (const uuid of job.legs) pbx.create(job, uuid)
  pbx.answer(alice2)
  job.resolve({ ok: true, value: `+OK ${alice2}\n` })
  await flush(10)
  t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 0, uuid: alice2 }], 'the callback names the answering leg')
  for (const loser of [carol, alice1, bob]) t.ok(pbx.commands.includes(`uuid_kill ${loser} ORIGINATOR_CANCEL`), `loser ${loser.slice(0, 8)} is cancelled`)
  t.notOk(pbx.commands.some((c) => c.startsWith(`uuid_kill ${alice2}`)), 'the winner is left alone')
})

t.test('members without a registered terminal are skipped: not rung, not in the reply', async (t) => {
  const { pbx, rt, sink, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`alice@${DOMAIN}`, [ALICE_1])
  const p = salesPlan(rt, 'ring_all')
  const r = await engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const [job] = pbx.originates()
  t.equal(r.value.uuids.length, 1, "only alice's terminal")
  t.same(job?.legVars.map((v) => v.get('cod_user_id')), ['1'])
  t.notMatch(job?.command ?? '', /carol|bob@/, 'carol and bob (unregistered) are not in the dial string')
  job?.resolve({ ok: true, value: '-ERR NO_ANSWER\n' })
  await flush(10)
  t.same(sink.of(p.requestId).map((x) => x.result), [{ result_code: 500, error: { id: 'no_answer', cause: 'NO_ANSWER' } }], 'nobody answered: one result, the cause')
  t.equal(pbx.originates().length, 1, 'no member is tried afterwards: there are no turns')
})

t.test('no member registered → no_member_available, nothing originated, nothing held', async (t) => {
  const { pbx, rt, engine } = setup()
  t.teardown(() => engine.close())
  const r = await engine.originate(salesPlan(rt, 'ring_all'))
  t.equal(r.ok ? 'ok' : r.error.reason, 'no_member_available')
  if (!r.ok) t.match(r.error.description, /group sales/)
  t.equal(pbx.originates().length, 0)
  t.equal(engine.inUse(DOMAIN), 0)
})

t.test('every leg and the destination are reserved before anything rings, all or nothing', async (t) => {
  // carol 1 + alice 2 + bob 1 terminals, and the PSTN destination's one leg: 5 channels.
  const register = (pbx: FakePbx) => {
    pbx.contacts.set(`carol@${DOMAIN}`, [CAROL])
    pbx.contacts.set(`alice@${DOMAIN}`, [ALICE_1, ALICE_2])
    pbx.contacts.set(`bob@${DOMAIN}`, [BOB])
  }
  const under = setup({ channel_limit: 4 })
  t.teardown(() => under.engine.close())
  register(under.pbx)
  const refused = await under.engine.originate(salesPlan(under.rt, 'ring_all'))
  t.equal(refused.ok ? 'ok' : refused.error.reason, 'channel_limit_reached', 'four channels cannot hold four legs and the destination')
  t.equal(under.pbx.originates().length, 0, 'nothing rang')
  t.equal(under.engine.inUse(DOMAIN), 0, 'and nothing stays reserved')
  // The same group hunted needs its first member's legs only (carol's 1 + the destination's 1).
  const hunted = await under.engine.originate(salesPlan(under.rt, 'hunt'))
  t.ok(hunted.ok, 'hunted, the group fits under the same limit')
  t.equal(under.engine.inUse(DOMAIN), 2)

  const at = setup({ channel_limit: 5 })
  t.teardown(() => at.engine.close())
  register(at.pbx)
  const r = await at.engine.originate(salesPlan(at.rt, 'ring_all'))
  t.ok(r.ok, 'five channels hold them')
  t.equal(at.engine.inUse(DOMAIN), 5, 'every leg and the destination are held while it rings')
  const job = at.pbx.originates()[0]
  job?.resolve({ ok: true, value: '-ERR NO_ANSWER\n' })
  await flush(10)
  t.equal(at.engine.inUse(DOMAIN), 0, 'all released once the ring ended unanswered')
})

t.test('a plan without a strategy, or with hunt, is hunted as before', async (t) => {
  const { pbx, rt, engine } = setup()
  t.teardown(() => engine.close())
  pbx.contacts.set(`carol@${DOMAIN}`, [CAROL])
  pbx.contacts.set(`alice@${DOMAIN}`, [ALICE_1, ALICE_2])
  const group = groupOf(rt, 'sales')
  const members = rt.directory.domain(DOMAIN)?.members(group) ?? []
  for (const p of [plan({ kind: 'group', group, members, memberAnswerTimeoutSec: 15 }), salesPlan(rt, 'hunt')]) {
    const before = pbx.originates().length
    const r = await engine.originate(p)
    if (!r.ok) return t.fail(r.error.description)
    const job = pbx.originates()[before]
    t.equal(r.value.uuids.length, 3, 'the reply lists every leg the hunt may create')
    t.equal(job?.legs.length, 1, 'but only the first member (carol) rings')
    t.equal(job?.globals.get('originate_timeout'), '15', 'for member_answer_timeout')
    job?.resolve({ ok: true, value: '-ERR USER_BUSY\n' })
    await flush(10)
    t.equal(pbx.originates()[before + 1]?.legs.length, 2, 'then alice, both terminals')
    pbx.originates()[before + 1]?.resolve({ ok: true, value: '-ERR NO_ANSWER\n' })
    await flush(10)
  }
})

/**
 * call_group's `strategy` (issue 31): the group's own by default, a request's choice only among
 * the group's configured `strategies`, refused otherwise naming what the group allows; and the
 * configuration's rules for the two group fields.
 */
import t from 'tap'
import { domainSchema } from '../../src/config/schema.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(() => h.close())
const { good, bad } = operation(h, 'call_group')

/** The running configuration with sales (carol, alice, bob) given these strategy fields (none: the defaults). */
function salesWith(fields: Record<string, unknown>): void {
  const domains = h.runtime.config.domains.map((d) =>
    d.name !== 'example.test'
      ? d
      : domainSchema.parse({ ...d, groups: d.groups.map((g) => (g.name === 'sales' ? { ...g, strategy: undefined, strategies: undefined, ...fields } : g)) }),
  )
  h.runtime = runtimeOf({ ...h.runtime.config, domains })
}

t.test("without strategy: the group's own; a group that lists only its own refuses the other, naming it", async (t) => {
  const plan = await good(t, { group_name: 'sales', destination: 'bob' })
  t.match(plan?.originator, { kind: 'group', strategy: 'hunt' }, 'groups hunt unless configured otherwise')
  t.match((await good(t, { group_name: 'sales', destination: 'bob', strategy: 'hunt' }))?.originator, { strategy: 'hunt' }, 'asking for its own is fine')
  await bad(t, { group_name: 'sales', destination: 'bob', strategy: 'ring_all' }, 400, 'invalid_parameter', 'strategy: group sales allows only hunt')
})

t.test('a group that allows both: the request chooses; its default is its own strategy', async (t) => {
  salesWith({ strategy: 'ring_all', strategies: ['ring_all', 'hunt'] })
  t.teardown(() => salesWith({}))
  t.match((await good(t, { group_name: 'sales', destination: 'bob' }))?.originator, { strategy: 'ring_all' }, "the group's own")
  t.match((await good(t, { group_name: 'sales', destination: 'bob', strategy: 'hunt' }))?.originator, { strategy: 'hunt' }, 'chosen by the request')
  t.match((await good(t, { group_name: 'sales', destination: 'bob', strategy: 'ring_all' }))?.originator, { strategy: 'ring_all' })
})

t.test('a ring_all group that allows only ring_all refuses hunt', async (t) => {
  salesWith({ strategy: 'ring_all' })
  t.teardown(() => salesWith({}))
  await bad(t, { group_name: 'sales', destination: 'bob', strategy: 'hunt' }, 400, 'invalid_parameter', 'allows only ring_all')
})

t.test('the shape of strategy: one of the two names, a string', async (t) => {
  for (const v of ['RING_ALL', 'ringall', '', 1, null, ['hunt']]) {
    await bad(t, { group_name: 'sales', destination: 'bob', strategy: v }, 400, 'invalid_parameter', 'strategy')
  }
})

t.test("the configuration: strategies default to the group's own, must include it, once each", async (t) => {
  const group = (fields: Record<string, unknown>) =>
    domainSchema.safeParse({ name: 'x.test', api_tokens: ['plain-token-for-tests-0001'], channel_limit: 1, gateway: 'pstn', groups: [{ id: '1', name: 'g', members: [], ...fields }] })
  t.same(group({}).data?.groups[0]?.strategies, ['hunt'])
  t.same(group({}).data?.groups[0]?.strategy, 'hunt')
  t.same(group({ strategy: 'ring_all' }).data?.groups[0]?.strategies, ['ring_all'])
  t.same(group({ strategies: ['hunt', 'ring_all'] }).data?.groups[0]?.strategies, ['hunt', 'ring_all'])
  t.match(group({ strategy: 'ring_all', strategies: ['hunt'] }).error?.issues[0], { path: ['groups', 0, 'strategies'], message: "must include the group's own strategy (ring_all)" })
  t.match(group({ strategies: ['hunt', 'hunt'] }).error?.issues[0], { message: 'must not list a strategy twice' })
  t.equal(group({ strategies: [] }).success, false, 'an empty list')
  t.equal(group({ strategy: 'round_robin' }).success, false, 'an unknown strategy')
})

/**
 * call_group: group identifiers, members in hunt order, the group's timeouts as defaults,
 * destinations, unknown parameters.
 */
import t from 'tap'
import { AUTH_B, operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(() => h.close())
const { good, bad } = operation(h, 'call_group')

t.test('a minimal call and its plan: members in order, the group timeouts', async (t) => {
  const plan = await good(t, { group_name: 'sales', destination: '0311112222' })
  t.match(plan, {
    domain: 'example.test',
    operation: 'call_group',
    originator: { kind: 'group', group: { id: '10', name: 'sales' }, memberAnswerTimeoutSec: 15 },
    destination: { kind: 'pstn', number: '0311112222' },
    answerTimeoutSec: 60,
  })
  t.same(
    plan?.originator.kind === 'group' && plan.originator.members.map((m) => m.name),
    ['carol', 'alice', 'bob'],
    'members in the configured hunt order',
  )
  const other = await good(t, { group_name: 'support', destination: 'carol' })
  t.match(other, { answerTimeoutSec: 45, originator: { memberAnswerTimeoutSec: 10 } })
  t.same(other?.originator.kind === 'group' && other.originator.members.map((m) => m.name), ['bob', 'alice'])
})

t.test('every group identifier kind', async (t) => {
  for (const [key, value] of [
    ['group_id', '10'],
    ['group_name', 'sales'],
    ['group_name', 'Sales'],
    ['group_label', 'Sales'],
    ['group_extension', '2001'],
    ['group_did', '0501232001'],
  ] as const) {
    t.match((await good(t, { [key]: value, destination: 'bob' }))?.originator, { kind: 'group', group: { id: '10' } }, `${key}=${value}`)
  }
  t.match((await good(t, { group_id: '10', group_name: 'sales', group_extension: '2001', destination: 'bob' }))?.originator, { group: { id: '10' } })
})

t.test('missing, unknown, ambiguous and ill-typed group identifiers', async (t) => {
  await bad(t, { destination: 'bob' }, 400, 'missing_parameter', 'group_id')
  await bad(t, { group_name: 'nogroup', destination: 'bob' }, 404, 'group_not_found', 'group_name')
  await bad(t, { group_id: '99', destination: 'bob' }, 404, 'group_not_found')
  await bad(t, { group_label: 'Nobody', destination: 'bob' }, 404, 'group_not_found')
  await bad(t, { group_extension: '2999', destination: 'bob' }, 404, 'group_not_found')
  await bad(t, { group_did: '0501239999', destination: 'bob' }, 404, 'group_not_found')
  await bad(t, { group_name: 'sales', group_id: '11', destination: 'bob' }, 400, 'ambiguous_group', 'group_id')
  await bad(t, { group_label: 'Desk', destination: 'xena' }, 400, 'ambiguous_group', 'group_label', AUTH_B)
  await bad(t, { group_id: 10, destination: 'bob' }, 400, 'invalid_parameter', 'group_id')
  await bad(t, { group_name: '', destination: 'bob' }, 400, 'invalid_parameter', 'group_name')
  await bad(t, { group_name: 'sales\n', destination: 'bob' }, 400, 'invalid_parameter', 'group_name')
  await bad(t, { group_extension: '20 01', destination: 'bob' }, 400, 'invalid_parameter', 'group_extension')
  // A user is not a group.
  await bad(t, { group_name: 'alice', destination: 'bob' }, 404, 'group_not_found')
})

t.test('parameters of other operations are unknown here', async (t) => {
  for (const key of ['group_resolver', 'user_name', 'auto_answer', 'target', 'ani', 'answer_timeuot']) {
    await bad(t, { group_name: 'sales', destination: 'bob', [key]: 'x' }, 400, 'invalid_parameter', key)
  }
})

t.test('timeouts override the group values', async (t) => {
  t.match(await good(t, { group_name: 'sales', destination: 'bob', answer_timeout: 120, member_answer_timeout: '20' }), {
    answerTimeoutSec: 120,
    originator: { memberAnswerTimeoutSec: 20 },
  })
  t.match(await good(t, { group_name: 'sales', destination: 'bob', member_answer_timeout: 5 }), { answerTimeoutSec: 60, originator: { memberAnswerTimeoutSec: 5 } })
  for (const key of ['answer_timeout', 'member_answer_timeout']) {
    for (const v of [0, 3601, 2.5, 'ten', null, false]) {
      await bad(t, { group_name: 'sales', destination: 'bob', [key]: v }, 400, 'invalid_parameter', key)
    }
  }
})

t.test('destinations', async (t) => {
  t.match((await good(t, { group_name: 'sales', destination: 'support' }))?.destination, { kind: 'group', group: { id: '11' } })
  t.match((await good(t, { group_name: 'sales', destination: '3001' }))?.destination, { kind: 'extension' })
  const plan = await good(t, { group_name: 'sales', destination: { called_number: '0311112222', end_user: { prefecture: 'Osaka', avatar: 'https://img.example/a.png' } } })
  t.same(plan?.destination, { kind: 'pstn', number: '0311112222', endUser: { prefecture: 'Osaka', avatar: 'https://img.example/a.png' } })
  t.same(plan?.endUser, { prefecture: 'Osaka', avatar: 'https://img.example/a.png' })
  await bad(t, { group_name: 'sales' }, 400, 'missing_parameter', 'destination')
  await bad(t, { group_name: 'sales', destination: 'nowhere' }, 404, 'destination_not_found')
  await bad(t, { group_name: 'sales', destination: 'xml_url:https://ivr.example/x' }, 400, 'destination_not_allowed')
  await bad(t, { group_name: 'sales', destination: { called_number: '0311112222', calling_number: '0399999999' } }, 400, 'invalid_parameter', 'destination.calling_number')
})

t.test('calling_name and callback_url', async (t) => {
  t.match(await good(t, { group_name: 'sales', destination: 'bob', calling_name: 'Sales line', callback_url: 'https://app.example/cb' }), {
    callingName: 'Sales line',
    callbackUrl: 'https://app.example/cb',
  })
  await bad(t, { group_name: 'sales', destination: 'bob', calling_name: 'Ventes à Paris' }, 400, 'invalid_parameter', 'calling_name')
  await bad(t, { group_name: 'sales', destination: 'bob', callback_url: 'mailto:x@example.test' }, 400, 'invalid_parameter', 'callback_url')
})

/**
 * initiate_call (deprecated): user_name or pstn_number (the number wins), ani, group_name,
 * string destinations.
 */
import t from 'tap'
import { operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(() => h.close())
const { good, bad } = operation(h, 'initiate_call')

t.test('user_name: the user is the originating leg', async (t) => {
  const plan = await good(t, { user_name: 'alice', destination: '0311112222' })
  t.match(plan, {
    operation: 'initiate_call',
    originator: { kind: 'user', user: { id: '1' }, autoAnswer: false },
    destination: { kind: 'pstn', number: '0311112222' },
    answerTimeoutSec: 180,
  })
  t.notOk(plan && 'groupContext' in plan)
  // ani is the number presented on the PSTN leg, here the destination.
  t.same((await good(t, { user_name: 'alice', destination: '0311112222', ani: '0501230001' }))?.destination, {
    kind: 'pstn',
    number: '0311112222',
    callingNumber: '0501230001',
  })
  t.match((await good(t, { user_name: 'alice', destination: 'bob', ani: '0501230001' }))?.destination, { kind: 'user' })
  await bad(t, { user_name: 'nobody', destination: 'bob' }, 404, 'user_not_found', 'user_name')
  await bad(t, { user_name: 'ALICE\n', destination: 'bob' }, 400, 'invalid_parameter', 'user_name')
})

t.test('pstn_number: a PSTN leg, and it wins over user_name', async (t) => {
  t.same((await good(t, { pstn_number: '0311112222', destination: 'alice', ani: '0501230000' }))?.originator, {
    kind: 'pstn',
    number: '0311112222',
    callingNumber: '0501230000',
  })
  const both = await good(t, { user_name: 'bob', pstn_number: '0311112222', destination: 'alice' })
  t.same(both?.originator, { kind: 'pstn', number: '0311112222' })
  // With pstn_number given, user_name is not looked up (legacy clients send both), but must be well-formed.
  t.same((await good(t, { user_name: 'somebody-else', pstn_number: '0311112222', destination: 'alice' }))?.originator, { kind: 'pstn', number: '0311112222' })
  await bad(t, { user_name: 'bob bob', pstn_number: '0311112222', destination: 'alice' }, 400, 'invalid_parameter', 'user_name')
  await bad(t, { user_name: 7, pstn_number: '0311112222', destination: 'alice' }, 400, 'invalid_parameter', 'user_name')

  const prefixed = await good(t, { pstn_number: '{name=Jane%20Doe}0311112222', destination: 'sales', ani: '0501230000' })
  t.same(prefixed?.originator, { kind: 'pstn', number: '0311112222', callingNumber: '0501230000', endUser: { name: 'Jane Doe' } })
  t.same(prefixed?.endUser, { name: 'Jane Doe' })

  for (const pstn_number of ['alice', '03-1111-2222', '0311112222\r\n', '', 311112222, { called_number: '0311112222' }, '{nick=x}0311112222']) {
    await bad(t, { pstn_number, destination: 'alice' }, 400, 'invalid_parameter', 'pstn_number')
  }
})

t.test('one of user_name and pstn_number is required', async (t) => {
  const r = await bad(t, { destination: 'alice' }, 400, 'missing_parameter')
  t.match(String((r.body.error as { description: string }).description), /user_name.*pstn_number/)
  await bad(t, { user_name: 'alice' }, 400, 'missing_parameter', 'destination')
})

t.test('ani must be a number the domain may present', async (t) => {
  for (const ani of ['0399999999', 'abc', '', 501230000, '0501230000,0311112222']) {
    await bad(t, { pstn_number: '0311112222', destination: 'alice', ani }, 400, 'invalid_parameter', 'ani')
  }
})

t.test('group_name gives the group context', async (t) => {
  t.match((await good(t, { user_name: 'alice', destination: '0311112222', group_name: 'support' }))?.groupContext, { id: '11' })
  t.match((await good(t, { pstn_number: '0311112222', destination: 'alice', group_name: 'SALES' }))?.groupContext, { id: '10' })
  await bad(t, { user_name: 'alice', destination: 'bob', group_name: 'nogroup' }, 404, 'group_not_found', 'group_name')
  await bad(t, { user_name: 'alice', destination: 'bob', group_name: '' }, 400, 'invalid_parameter', 'group_name')
})

t.test('destination: a string, any PBX destination except xml_url', async (t) => {
  for (const [destination, kind] of [
    ['bob', 'user'],
    ['sales', 'group'],
    ['3001', 'extension'],
    ['0311112222', 'pstn'],
  ] as const) {
    t.equal((await good(t, { user_name: 'alice', destination }))?.destination.kind, kind)
  }
  t.same((await good(t, { user_name: 'alice', destination: '{organization=ACME}0311112222' }))?.endUser, { organization: 'ACME' })
  await bad(t, { user_name: 'alice', destination: { called_number: '0311112222' } }, 400, 'invalid_parameter', 'destination')
  await bad(t, { user_name: 'alice', destination: 'xml_url:https://ivr.example/m' }, 400, 'destination_not_allowed')
  await bad(t, { user_name: 'alice', destination: 'nowhere' }, 404, 'destination_not_found')
})

t.test('parameters of the newer operations are unknown here', async (t) => {
  for (const key of ['user_id', 'user_extension', 'group_id', 'answer_timeout', 'callback_url', 'calling_name', 'auto_answer', 'target']) {
    await bad(t, { user_name: 'alice', destination: 'bob', [key]: '1' }, 400, 'invalid_parameter', key)
  }
})

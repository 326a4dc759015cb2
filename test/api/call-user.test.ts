/**
 * call_user: user identifiers, destinations, timeouts, booleans, calling_name, callback_url,
 * group context, unknown parameters; the plan handed to the engine.
 */
import t from 'tap'
import { AUTH_B, operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(() => h.close())
const { good, bad } = operation(h, 'call_user')

t.test('a minimal call and its plan', async (t) => {
  const plan = await good(t, { user_name: 'alice', destination: 'bob' })
  t.match(plan, {
    domain: 'example.test',
    operation: 'call_user',
    originator: { kind: 'user', user: { id: '1', name: 'alice' }, autoAnswer: false },
    destination: { kind: 'user', user: { name: 'bob' } },
    answerTimeoutSec: 180,
  })
  t.notOk(plan && 'groupContext' in plan, 'no group context')
  t.notOk(plan && 'callbackUrl' in plan)
  t.notOk(plan && 'callingName' in plan)
  t.notOk(plan && 'endUser' in plan)
})

t.test('every user identifier kind', async (t) => {
  for (const [key, value] of [
    ['user_id', '1'],
    ['user_name', 'alice'],
    ['user_name', 'ALICE'],
    ['user_label', 'Alice'],
    ['user_extension', '1001'],
    ['user_did', '0501231001'],
    ['user_email', 'alice@example.test'],
  ] as const) {
    const plan = await good(t, { [key]: value, destination: 'bob' })
    t.match(plan?.originator, { kind: 'user', user: { id: '1' } }, `${key}=${value}`)
  }
})

t.test('several identifiers: the same user passes, different users are ambiguous', async (t) => {
  const plan = await good(t, { user_id: '1', user_name: 'alice', user_extension: '1001', user_email: 'alice@example.test', destination: 'bob' })
  t.match(plan?.originator, { user: { id: '1' } })
  await bad(t, { user_id: '1', user_name: 'bob', destination: 'carol' }, 400, 'ambiguous_user', 'user_name')
  await bad(t, { user_extension: '1001', user_did: '0501231002', destination: 'carol' }, 400, 'ambiguous_user')
  // A label shared by two users of domain B.
  await bad(t, { user_label: 'Twin', destination: 'xena' }, 400, 'ambiguous_user', 'user_label', AUTH_B)
  // The label with another identifier is still ambiguous: the label itself names two users.
  await bad(t, { user_label: 'Twin', user_name: 'zara', destination: 'xena' }, 400, 'ambiguous_user', 'user_label', AUTH_B)
})

t.test('missing, unknown and ill-typed user identifiers', async (t) => {
  await bad(t, { destination: 'bob' }, 400, 'missing_parameter', 'user_id')
  await bad(t, { user_name: 'nobody', destination: 'bob' }, 404, 'user_not_found', 'user_name')
  await bad(t, { user_id: '999', destination: 'bob' }, 404, 'user_not_found', 'user_id')
  await bad(t, { user_label: 'Nobody', destination: 'bob' }, 404, 'user_not_found')
  await bad(t, { user_extension: '1999', destination: 'bob' }, 404, 'user_not_found')
  await bad(t, { user_did: '0501239999', destination: 'bob' }, 404, 'user_not_found')
  await bad(t, { user_email: 'nobody@example.test', destination: 'bob' }, 404, 'user_not_found')
  await bad(t, { user_name: 'alice', user_id: '999', destination: 'bob' }, 404, 'user_not_found', 'user_id')
  await bad(t, { user_id: 1, destination: 'bob' }, 400, 'invalid_parameter', 'user_id')
  await bad(t, { user_name: '', destination: 'bob' }, 400, 'invalid_parameter', 'user_name')
  await bad(t, { user_name: null, destination: 'bob' }, 400, 'invalid_parameter', 'user_name')
  await bad(t, { user_name: ['alice'], destination: 'bob' }, 400, 'invalid_parameter', 'user_name')
  await bad(t, { user_extension: 'abc', destination: 'bob' }, 400, 'invalid_parameter', 'user_extension')
  await bad(t, { user_did: '05-0123-1001', destination: 'bob' }, 400, 'invalid_parameter', 'user_did')
  await bad(t, { user_label: 'Al\nice', destination: 'bob' }, 400, 'invalid_parameter', 'user_label')
})

t.test('unknown parameters are refused by name', async (t) => {
  await bad(t, { user_name: 'alice', destination: 'bob', user_nmae: 'x' }, 400, 'invalid_parameter', 'user_nmae')
  await bad(t, { user_name: 'alice', destination: 'bob', member_answer_timeout: 10 }, 400, 'invalid_parameter', 'member_answer_timeout')
  await bad(t, { user_name: 'alice', destination: 'bob', ani: '0501230000' }, 400, 'invalid_parameter', 'ani')
  await bad(t, { user_name: 'alice', destination: 'bob', constructor: 'x' }, 400, 'invalid_parameter', 'constructor')
})

t.test('destination kinds and errors', async (t) => {
  const kinds: Array<[unknown, object]> = [
    ['bob', { kind: 'user', user: { id: '2' } }],
    ['1002', { kind: 'user', user: { id: '2' } }],
    ['0501231002', { kind: 'user', user: { id: '2' } }],
    ['sales', { kind: 'group', group: { id: '10' } }],
    ['2001', { kind: 'group', group: { id: '10' } }],
    ['0501232001', { kind: 'group', group: { id: '10' } }],
    ['3001', { kind: 'extension', extension: { number: '3001', xml_url: 'https://ivr.example.test/menu' } }],
    ['0311112222', { kind: 'pstn', number: '0311112222' }],
    ['+81311112222', { kind: 'pstn', number: '+81311112222' }],
    [{ called_number: '0311112222' }, { kind: 'pstn', number: '0311112222' }],
  ]
  for (const [destination, want] of kinds) {
    const plan = await good(t, { user_name: 'alice', destination })
    t.match(plan?.destination, want, JSON.stringify(destination))
  }
  await bad(t, { user_name: 'alice' }, 400, 'missing_parameter', 'destination')
  await bad(t, { user_name: 'alice', destination: '' }, 400, 'invalid_parameter', 'destination')
  await bad(t, { user_name: 'alice', destination: 42 }, 400, 'invalid_parameter', 'destination')
  await bad(t, { user_name: 'alice', destination: ['bob'] }, 400, 'invalid_parameter', 'destination')
  await bad(t, { user_name: 'alice', destination: 'nobody' }, 404, 'destination_not_found', 'destination')
  await bad(t, { user_name: 'alice', destination: '9' }, 404, 'destination_not_found')
  await bad(t, { user_name: 'alice', destination: 'xml_url:https://ivr.example/x' }, 400, 'destination_not_allowed', 'call_external')
})

t.test('answer_timeout', async (t) => {
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', answer_timeout: 30 }))?.answerTimeoutSec, 30)
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', answer_timeout: '45' }))?.answerTimeoutSec, 45)
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', answer_timeout: 3600 }))?.answerTimeoutSec, 3600)
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', answer_timeout: 1 }))?.answerTimeoutSec, 1)
  for (const v of [0, -1, 3601, 1.5, '1.5', '1e3', '', ' 30', 'abc', true, null, [30], { s: 30 }, '0']) {
    await bad(t, { user_name: 'alice', destination: 'bob', answer_timeout: v }, 400, 'invalid_parameter', 'answer_timeout')
  }
})

t.test('auto_answer', async (t) => {
  for (const [v, want] of [
    [true, true],
    ['true', true],
    [false, false],
    ['false', false],
  ] as const) {
    t.match((await good(t, { user_name: 'alice', destination: 'bob', auto_answer: v }))?.originator, { autoAnswer: want }, String(v))
  }
  for (const v of ['yes', 'TRUE', 1, 0, null, '']) {
    await bad(t, { user_name: 'alice', destination: 'bob', auto_answer: v }, 400, 'invalid_parameter', 'auto_answer')
  }
})

t.test('calling_name: printable ASCII, 1 to 64', async (t) => {
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', calling_name: 'Front Desk #2' }))?.callingName, 'Front Desk #2')
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', calling_name: 'x'.repeat(64) }))?.callingName, 'x'.repeat(64))
  for (const v of ['', 'x'.repeat(65), 'Tōkyō', '受付', 'a\nb', 'a\rb', 'a\tb', 'a\u0000b', 'a\u007fb', 42, null]) {
    await bad(t, { user_name: 'alice', destination: 'bob', calling_name: v }, 400, 'invalid_parameter', 'calling_name')
  }
})

t.test('callback_url: absolute http/https, at most 2048', async (t) => {
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', callback_url: 'https://app.example/cb?x=1' }))?.callbackUrl, 'https://app.example/cb?x=1')
  t.equal((await good(t, { user_name: 'alice', destination: 'bob', callback_url: 'http://cb.example.test:8080/cb' }))?.callbackUrl, 'http://cb.example.test:8080/cb')
  // A literal private address is refused by the outbound policy (test/api/callback-url.test.ts).
  const long = `https://app.example/${'a'.repeat(2048 - 20)}`
  t.equal(long.length, 2048)
  await good(t, { user_name: 'alice', destination: 'bob', callback_url: long })
  for (const v of [`${long}a`, 'ftp://app.example/cb', '/cb', 'app.example/cb', 'https://', 'https://user@', 'javascript:alert(1)', 'https://app.example/a b', 'https://app.example/\n', '', 7, null]) {
    await bad(t, { user_name: 'alice', destination: 'bob', callback_url: v }, 400, 'invalid_parameter', 'callback_url')
  }
})

t.test('group context: group_* identifiers and group_resolver', async (t) => {
  t.match((await good(t, { user_name: 'alice', destination: 'bob', group_name: 'support' }))?.groupContext, { id: '11' })
  t.match((await good(t, { user_name: 'alice', destination: 'bob', group_id: '10' }))?.groupContext, { id: '10' })
  t.match((await good(t, { user_name: 'alice', destination: 'bob', group_label: 'Support' }))?.groupContext, { id: '11' })
  t.match((await good(t, { user_name: 'alice', destination: 'bob', group_extension: '2002' }))?.groupContext, { id: '11' })
  t.match((await good(t, { user_name: 'alice', destination: 'bob', group_did: '0501232001' }))?.groupContext, { id: '10' })
  // "*": the first group of the user in configuration order; "any:CALL_CENTER": the first call-center one.
  t.match((await good(t, { user_name: 'bob', destination: 'alice', group_resolver: '*' }))?.groupContext, { id: '10' })
  t.match((await good(t, { user_name: 'alice', destination: 'bob', group_resolver: 'any:CALL_CENTER' }))?.groupContext, { id: '10', type: 'CALL_CENTER' })
  t.match((await good(t, { user_name: 'zara', destination: 'yuri', group_resolver: '*' }, AUTH_B))?.groupContext, { id: '80' })
  t.match((await good(t, { user_name: 'alice', destination: 'bob', group_name: 'sales', group_resolver: 'any:CALL_CENTER' }))?.groupContext, { id: '10' })

  await bad(t, { user_name: 'dave', destination: 'bob', group_resolver: '*' }, 404, 'group_not_found', 'group_resolver')
  await bad(t, { user_name: 'zara', destination: 'yuri', group_resolver: 'any:CALL_CENTER' }, 404, 'group_not_found', 'group_resolver', AUTH_B)
  for (const v of ['all', 'any:HUNT', 'any:call_center', '', 1, null]) {
    await bad(t, { user_name: 'alice', destination: 'bob', group_resolver: v }, 400, 'invalid_parameter', 'group_resolver')
  }
  await bad(t, { user_name: 'alice', destination: 'bob', group_name: 'support', group_resolver: 'any:CALL_CENTER' }, 400, 'ambiguous_group')
  await bad(t, { user_name: 'alice', destination: 'bob', group_name: 'sales', group_id: '11' }, 400, 'ambiguous_group')
  await bad(t, { user_name: 'zara', destination: 'yuri', group_label: 'Desk' }, 400, 'ambiguous_group', 'group_label', AUTH_B)
  await bad(t, { user_name: 'alice', destination: 'bob', group_name: 'nogroup' }, 404, 'group_not_found', 'group_name')
  await bad(t, { user_name: 'alice', destination: 'bob', group_id: 10 }, 400, 'invalid_parameter', 'group_id')
})

t.test('PSTN destination details reach the plan', async (t) => {
  const plan = await good(t, {
    user_name: 'alice',
    destination: { called_number: '0311112222', calling_number: '0501230001', end_user: { name: 'Jane Doe', organization: 'ACME' } },
  })
  t.same(plan?.destination, {
    kind: 'pstn',
    number: '0311112222',
    callingNumber: '0501230001',
    endUser: { name: 'Jane Doe', organization: 'ACME' },
  })
  t.same(plan?.endUser, { name: 'Jane Doe', organization: 'ACME' })
  const prefixed = await good(t, { user_name: 'alice', destination: '{name=Jane%20Doe,id=42}0311112222' })
  t.same(prefixed?.destination, { kind: 'pstn', number: '0311112222', endUser: { name: 'Jane Doe', id: '42' } })
  t.same(prefixed?.endUser, { name: 'Jane Doe', id: '42' })
})

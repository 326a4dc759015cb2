/**
 * `record` and `recording_callback_url` on the four operations (issue 28): the policy's answer
 * reaches the plan as `recording` (a fresh id, the callback URL, the retention), a refusal is
 * 403 recording_not_allowed with nothing originated, bad values are 400 invalid_parameter.
 * The shipped example: domain example.test `on_request`, its group `sales` `always`; the second
 * domain of the harness (other.test) has no policy (never).
 */
import t from 'tap'
import { domainSchema } from '../../src/config/schema.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { RECORDING_ID_RE } from '../../src/recording/id.js'
import { AUTH_B, domainB, operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(() => h.close())
const callUser = operation(h, 'call_user')
const callGroup = operation(h, 'call_group')
const callExternal = operation(h, 'call_external')
const initiateCall = operation(h, 'initiate_call')

const USER = { user_name: 'alice', destination: 'bob' }
const GROUP = { group_name: 'sales', destination: 'bob' }
const EXTERNAL = { target: '0311112222', destination: 'bob' }
const INITIATE = { user_name: 'alice', destination: 'bob' }

t.test('on_request domain: recorded when asked, with a fresh id each time; not otherwise', async (t) => {
  const asked = await callUser.good(t, { ...USER, record: true })
  t.match(asked?.recording, { id: RECORDING_ID_RE, retentionDays: 30 })
  t.equal(asked?.recording?.callbackUrl, undefined, 'no callback named: none')
  const again = await callUser.good(t, { ...USER, record: 'true' })
  t.not(again?.recording?.id, asked?.recording?.id, 'a fresh id per call')
  t.equal((await callUser.good(t, USER))?.recording, undefined, 'absent: not recorded')
  t.equal((await callUser.good(t, { ...USER, record: false }))?.recording, undefined, 'false: not recorded')
  t.match((await callExternal.good(t, { ...EXTERNAL, record: true }))?.recording, { id: RECORDING_ID_RE })
  t.match((await callGroup.good(t, { group_name: 'support', destination: 'bob', record: true }))?.recording, { id: RECORDING_ID_RE }, 'a group without a policy: the domain\'s')
})

t.test('a call made for an always group is recorded, the three ways of marking it; false is refused', async (t) => {
  t.match((await callGroup.good(t, GROUP))?.recording, { id: RECORDING_ID_RE }, 'call_group sales')
  t.match((await callUser.good(t, { ...USER, group_name: 'sales' }))?.recording, { id: RECORDING_ID_RE }, 'call_user with group_name')
  t.match((await callUser.good(t, { user_name: 'carol', destination: 'bob', group_resolver: '*' }))?.recording, { id: RECORDING_ID_RE }, "call_user with group_resolver (carol's first group is sales)")
  t.match((await initiateCall.good(t, { ...INITIATE, group_name: 'sales' }))?.recording, { id: RECORDING_ID_RE }, 'initiate_call with group_name')
  await callGroup.bad(t, { ...GROUP, record: false }, 403, 'recording_not_allowed', 'group sales is always')
  await callUser.bad(t, { ...USER, group_name: 'sales', record: 'false' }, 403, 'recording_not_allowed')
  await initiateCall.bad(t, { ...INITIATE, group_name: 'sales', record: false }, 403, 'recording_not_allowed')
})

t.test('a never domain refuses record: true on every operation', async (t) => {
  const zara = { user_name: 'zara', destination: 'yuri' }
  await callUser.bad(t, { ...zara, record: true }, 403, 'recording_not_allowed', 'domain other.test is never', AUTH_B)
  await callGroup.bad(t, { group_name: 'desk', destination: 'yuri', record: true }, 403, 'recording_not_allowed', undefined, AUTH_B)
  await callExternal.bad(t, { target: '0311112222', destination: 'zara', record: true }, 403, 'recording_not_allowed', undefined, AUTH_B)
  await initiateCall.bad(t, { ...zara, record: true }, 403, 'recording_not_allowed', undefined, AUTH_B)
  t.equal((await callUser.good(t, { ...zara, record: false }, AUTH_B))?.recording, undefined)
})

t.test("a user's own policy wins over the domain's; a group's over the user's", async (t) => {
  const before = h.runtime
  t.teardown(() => (h.runtime = before))
  const b = domainSchema.parse({
    ...domainB,
    recording: { mode: 'never', retention_days: 7, callback_url: 'https://recordings.example.com/hook' },
    users: domainB.users.map((u) => (u.name === 'zara' ? { ...u, recording: { mode: 'always', retention_days: 90 } } : u)),
    groups: domainB.groups.map((g) => (g.name === 'desk' ? { ...g, recording: { mode: 'never' } } : g)),
  })
  h.runtime = runtimeOf({ ...before.config, domains: before.config.domains.map((d) => (d.name === domainB.name ? b : d)) })
  t.match((await callUser.good(t, { user_name: 'zara', destination: 'yuri' }, AUTH_B))?.recording, { retentionDays: 90, callbackUrl: 'https://recordings.example.com/hook' }, "zara's always, the domain's callback")
  await callUser.bad(t, { user_name: 'zara', destination: 'yuri', group_name: 'desk', record: true }, 403, 'recording_not_allowed', 'group desk is never', AUTH_B)
  t.equal((await callUser.good(t, { user_name: 'zara', destination: 'yuri', group_name: 'desk' }, AUTH_B))?.recording, undefined, "for the never group desk: the group's wins")
  t.equal((await callUser.good(t, { user_name: 'yuri', destination: 'zara' }, AUTH_B))?.recording, undefined, "yuri has none: the domain's never")
})

t.test('recording_callback_url: callback_url\'s rules, the request\'s wins over the domain\'s', async (t) => {
  t.match((await callUser.good(t, { ...USER, record: true, recording_callback_url: 'https://app.example.com/rec' }))?.recording, { callbackUrl: 'https://app.example.com/rec' })
  t.match((await callUser.good(t, { ...USER, record: true, recording_callback_url: 'HTTPS://App.Example.com' }))?.recording, { callbackUrl: 'https://app.example.com/' }, 'as the URL parser serialises it')
  for (const bad of ['ftp://x.example.com/', 'not a url', '', 'https://', `https://x.example.com/${'a'.repeat(2100)}`, 42, null]) {
    await callUser.bad(t, { ...USER, record: true, recording_callback_url: bad }, 400, 'invalid_parameter', 'recording_callback_url')
  }
  // (127.0.0.1/32 is in the example's callbacks.allow, for the demo's receiver.)
  for (const refused of ['http://127.0.0.2/cb', 'http://10.0.0.1/', 'http://[::1]/', 'http://localhost/', 'http://169.254.169.254/']) {
    await callUser.bad(t, { ...USER, record: true, recording_callback_url: refused }, 400, 'invalid_parameter', 'recording_callback_url: must not name a')
  }
})

t.test('record: bad values are 400 invalid_parameter naming it', async (t) => {
  for (const bad of [1, 0, 'yes', 'TRUE', null, [], {}, '']) {
    await callUser.bad(t, { ...USER, record: bad }, 400, 'invalid_parameter', 'record')
    await callGroup.bad(t, { ...GROUP, record: bad }, 400, 'invalid_parameter', 'record')
  }
})

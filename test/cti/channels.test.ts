/** The channel model (src/channels) on its own, and what CTI shows of it: headers read as FreeSWITCH sends them (see fixtures.ts). */
import t from 'tap'
import { ChannelStore, endUserOf } from '../../src/channels/index.js'
import { viewOf } from '../../src/cti/view.js'
import { ev, T0_MS } from './fixtures.js'
import { DOMAIN_A, makeRuntime } from './helpers.js'

const A = '835251f4-929b-4585-8bc1-3b1ceaacf129'
const B = '72c5be64-90da-471a-a2bf-d65f939bd84b'

const newStore = (now = () => T0_MS + 60_000) => {
  const runtime = makeRuntime()
  return new ChannelStore({ directory: () => runtime.directory, now })
}

t.test('domain: cod_domain, else the domain part of the SIP variables, only when it is a domain we know', async (t) => {
  const s = newStore()
  s.apply(ev('CHANNEL_CREATE', A, T0_MS, { variable_sip_to_host: '127.0.0.1:5071', variable_presence_id: '1001@Example.Test' }))
  t.equal(s.get(A)?.domain, DOMAIN_A, 'from presence_id (case-insensitive), the IP host skipped')
  s.apply(ev('CHANNEL_CREATE', B, T0_MS, { variable_sip_to_host: '127.0.0.1:5071', variable_dialed_domain: 'unknown.test' }))
  t.equal(s.get(B)?.domain, undefined, 'no known domain: visible to no one')
  s.apply(ev('CHANNEL_PROGRESS', B, T0_MS + 1, { variable_cod_domain: DOMAIN_A }))
  t.equal(s.get(B)?.domain, DOMAIN_A, 'a later event can name it')
  s.apply(ev('CHANNEL_ANSWER', B, T0_MS + 2, { variable_cod_domain: 'other.test' }))
  t.equal(s.get(B)?.domain, DOMAIN_A, 'and the domain never changes afterwards')
})

t.test("the user's SIP identity is read from the first event only", async (t) => {
  const s = newStore()
  // test/fixtures/freeswitch/esl/19-originate-xml-default.txt: after the dialplan bridge, the A
  // leg's variable_dialed_user names the B leg's user.
  s.apply(ev('CHANNEL_CREATE', A, T0_MS, { variable_dialed_user: '1001', variable_dialed_domain: DOMAIN_A }))
  s.apply(ev('CHANNEL_BRIDGE', A, T0_MS + 5, { variable_dialed_user: '1002', variable_dialed_domain: DOMAIN_A, 'Bridge-A-Unique-ID': A, 'Bridge-B-Unique-ID': B }))
  t.equal(s.get(A)?.userId, '1', 'still alice (extension 1001)')
  t.same([...(s.get(A)?.parties ?? [])], ['1'])
  // cod_user_id wins whenever it appears.
  s.apply(ev('CHANNEL_PARK', A, T0_MS + 6, { variable_cod_user_id: '2' }))
  t.equal(s.get(A)?.userId, '2')
})

t.test('uuid_bridge of two parked legs: one CHANNEL_BRIDGE on A updates both (fixture esl/18-uuid-bridge)', async (t) => {
  const s = newStore()
  const va = { variable_cod_domain: DOMAIN_A, variable_cod_user_id: '1' }
  const vb = { variable_cod_domain: DOMAIN_A, variable_cod_user_id: '2' }
  s.apply(ev('CHANNEL_CREATE', A, T0_MS, va))
  s.apply(ev('CHANNEL_CREATE', B, T0_MS, vb))
  s.apply(ev('CHANNEL_PARK', A, T0_MS + 1, va))
  s.apply(ev('CHANNEL_PARK', B, T0_MS + 1, vb))
  const changes = s.apply(ev('CHANNEL_BRIDGE', A, T0_MS + 9, { ...va, 'Other-Leg-Unique-ID': B, 'Bridge-A-Unique-ID': A, 'Bridge-B-Unique-ID': B }))
  t.same(
    changes.map((c) => c.channel.uuid),
    [A, B],
  )
  t.match(viewOf(s.get(A)!), { state: 'bridged', other_uuid: B, state_at: T0_MS + 9 })
  t.match(viewOf(s.get(B)!), { state: 'bridged', other_uuid: A })
  t.same([...s.get(A)!.parties].sort(), ['1', '2'], 'each user is a party of both legs')
  s.apply(ev('CHANNEL_UNBRIDGE', A, T0_MS + 20, { ...va, 'Other-Leg-Unique-ID': B, 'Bridge-A-Unique-ID': A, 'Bridge-B-Unique-ID': B }))
  t.match(viewOf(s.get(B)!), { state: 'answered', other_uuid: null })
  // Later events still carry Other-Leg-Unique-ID (test/fixtures/freeswitch/esl/18-uuid-bridge.txt):
  // it does not re-link them.
  s.apply(ev('CHANNEL_HANGUP', A, T0_MS + 21, { ...va, 'Other-Leg-Unique-ID': B }))
  t.match(viewOf(s.get(A)!), { state: 'hangup', other_uuid: null, hangup_cause: 'NORMAL_CLEARING', hangup_at: T0_MS + 21 })
  t.same([...s.get(A)!.parties].sort(), ['1', '2'], 'having been a party stays')
})

t.test('states', async (t) => {
  const s = newStore()
  const v = { variable_cod_domain: DOMAIN_A, variable_cod_role: 'originator', variable_cod_dest_kind: 'ivr' }
  s.apply(ev('CHANNEL_CREATE', A, T0_MS, v))
  t.equal(s.get(A)?.state, 'calling')
  s.apply(ev('CHANNEL_PROGRESS', A, T0_MS + 1, v))
  t.equal(s.get(A)?.state, 'ringing')
  s.apply(ev('CHANNEL_ANSWER', A, T0_MS + 2, v))
  t.equal(s.get(A)?.state, 'ivr', 'an answered leg whose destination is an IVR document runs it')
  s.apply(ev('CHANNEL_PROGRESS', A, T0_MS + 3, v))
  t.equal(s.get(A)?.state, 'ivr', 'never back to ringing')
  s.apply(ev('CHANNEL_PARK', A, T0_MS + 4, v))
  t.equal(s.get(A)?.state, 'park')
  s.apply(ev('CHANNEL_HANGUP', A, T0_MS + 5, { ...v, 'Hangup-Cause': 'USER_BUSY' }))
  s.apply(ev('CHANNEL_PARK', A, T0_MS + 6, v))
  t.match(viewOf(s.get(A)!), { state: 'hangup', hangup_cause: 'USER_BUSY', state_at: T0_MS + 5 })
  const destroyed = s.apply(ev('CHANNEL_DESTROY', A, T0_MS + 7, v))
  t.same(
    destroyed.map((c) => [c.channel.uuid, c.kind === 'destroyed']),
    [[A, true]],
  )
  t.equal(s.size, 0)
  t.same(s.apply(ev('CHANNEL_DESTROY', A, T0_MS + 8, v)), [], 'an end of a channel never seen is ignored')
  t.same(s.apply(ev('BACKGROUND_JOB', A, T0_MS + 8)), [], 'non-channel events are ignored')
})

t.test('end_user: decoded from cod_end_user; anything else is ignored', async (t) => {
  t.same(endUserOf('%7B%22name%22%3A%22Jane%22%2C%22x%22%3A1%7D'), { name: 'Jane' })
  t.equal(endUserOf('%7Bbroken'), undefined)
  t.equal(endUserOf('%5B1%5D'), undefined)
  t.equal(endUserOf('%7B%22name%22%3A%22%22%7D'), undefined, 'only empty fields')
  const s = newStore()
  s.apply(ev('CHANNEL_CREATE', A, T0_MS, { variable_cod_domain: DOMAIN_A, variable_cod_end_user: '%ZZ' }))
  t.equal(viewOf(s.get(A)!).end_user, null)
})

t.test('hung-up channels whose DESTROY never came are swept', async (t) => {
  let now = T0_MS
  const s = newStore(() => now)
  s.apply(ev('CHANNEL_CREATE', A, T0_MS, { variable_cod_domain: DOMAIN_A }))
  s.apply(ev('CHANNEL_CREATE', B, T0_MS, { variable_cod_domain: DOMAIN_A }))
  s.apply(ev('CHANNEL_HANGUP', A, T0_MS + 1, { variable_cod_domain: DOMAIN_A }))
  now = T0_MS + 1 + 59_999
  t.same(s.sweep(60_000), [])
  now += 1
  t.same(
    s.sweep(60_000).map((c) => [c.channel.uuid, c.kind === 'destroyed']),
    [[A, true]],
  )
  t.equal(s.size, 1, 'a live channel is never swept')
})

t.test('a newer resync supersedes an older one', async (t) => {
  const s = newStore()
  s.apply(ev('CHANNEL_CREATE', A, T0_MS, { variable_cod_domain: DOMAIN_A }))
  const first = s.beginResync()
  const second = s.beginResync()
  t.equal(s.finishResync(first, []), undefined, 'the older list is not applied')
  t.equal(s.size, 1)
  t.same(
    s.finishResync(second, [])?.map((c) => [c.channel.uuid, c.kind === 'destroyed']),
    [[A, true]],
  )
})

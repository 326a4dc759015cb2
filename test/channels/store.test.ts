/** The channel store's indexes and changes: what origination and CTI look channels up by. */
import t from 'tap'
import { ChannelStore, type ChannelChange, type ChannelDirectory, type ChannelRecord } from '../../src/channels/index.js'
import { MultiMap } from '../../src/channels/multi-map.js'
import type { FsEvent } from '../../src/pbx/types.js'

const U = (n: number) => `${String(n).repeat(8)}-0000-4000-8000-000000000000`.slice(0, 36)
const DOMAIN = 'example.test'

/** One configured domain with two users, alice (id 1, extension 1001) and bob (id 2). */
const directory: ChannelDirectory = {
  domain: (name) =>
    name.toLowerCase() === DOMAIN
      ? { name: 'Example.Test', userBySipName: (sip) => ({ alice: { id: '1' }, '1001': { id: '1' }, bob: { id: '2' } })[sip] }
      : undefined,
}

const newStore = () => new ChannelStore({ directory: () => directory, now: () => 1_000_000 })
const ev = (name: string, uuid: string, extra: Record<string, string> = {}): FsEvent => ({ 'Event-Name': name, 'Unique-ID': uuid, ...extra })
const uuids = (records: Iterable<ChannelRecord>) => [...records].map((c) => c.uuid).sort()
const kinds = (changes: readonly ChannelChange[]) => changes.map((c) => [c.kind, c.channel.uuid])

t.test('a leg originated by another: its user becomes a party of both, the request is handed down', async (t) => {
  const s = newStore()
  s.apply(ev('CHANNEL_CREATE', U(1), { variable_cod_domain: DOMAIN, variable_cod_request_id: 'r1', variable_sip_gateway_name: 'pstn' }))
  const changes = s.apply(
    ev('CHANNEL_CREATE', U(2), { 'Other-Leg-Unique-ID': U(1), variable_dialed_user: 'bob', variable_dialed_domain: 'Example.Test', 'Call-Direction': 'outbound' }),
  )
  t.same(kinds(changes), [
    ['created', U(2)],
    ['relayed', U(1)],
  ])
  t.equal(s.get(U(2))?.domain, DOMAIN, 'placed by its SIP variables, lower-cased')
  t.equal(s.get(U(2))?.userId, '2')
  t.same(uuids(s.ofUser(DOMAIN, '2')), [U(1), U(2)], 'bob is a party to both legs')
  t.same(uuids(s.ofRequest('r1')), [U(1), U(2)], 'both legs belong to the request')
  t.same(uuids(s.ofDomain(DOMAIN)), [U(1), U(2)])
  t.equal(s.liveCount(DOMAIN), 2)

  s.apply(ev('CHANNEL_HANGUP', U(2), { 'Hangup-Cause': 'NORMAL_CLEARING' }))
  t.equal(s.liveCount(DOMAIN), 1, 'a hung-up channel no longer counts')
  t.same(uuids(s.ofDomain(DOMAIN)), [U(1), U(2)], 'but is still shown until destroyed')
  s.apply(ev('CHANNEL_DESTROY', U(2)))
  t.same(uuids(s.ofUser(DOMAIN, '2')), [U(1)])
  t.same(uuids(s.ofRequest('r1')), [U(1)])
  t.same(s.get(U(1))?.peers, [], 'the destroyed leg is no longer a peer')
  s.apply(ev('CHANNEL_DESTROY', U(1)))
  t.same([s.size, s.liveCount(DOMAIN), uuids(s.ofDomain(DOMAIN)), uuids(s.ofUser(DOMAIN, '2')), uuids(s.ofRequest('r1'))], [0, 0, [], [], []])
})

t.test('with a directory, only a configured domain places a channel; without one, any name', async (t) => {
  const s = newStore()
  s.apply(ev('CHANNEL_CREATE', U(1), { variable_sip_to_host: '192.0.2.1:5060', variable_domain_name: 'elsewhere.test' }))
  t.equal(s.get(U(1))?.domain, undefined)
  t.equal(s.liveCount('elsewhere.test'), 0)
  s.apply(ev('CHANNEL_CREATE', U(3), { variable_presence_id: 'alice@example.test' }))
  t.equal(s.get(U(3))?.userId, '1', 'the user of an outbound leg: its presence')
  const open = new ChannelStore()
  open.apply(ev('CHANNEL_CREATE', U(1), { variable_domain_name: 'Elsewhere.Test' }))
  t.equal(open.get(U(1))?.domain, 'elsewhere.test')
  t.equal(open.get(U(1))?.userId, undefined, 'users are known only from cod_user_id without a directory')
})

t.test('a channel first seen at its end: created, then hung up once, never counted', async (t) => {
  const s = newStore()
  const first = s.apply(ev('CHANNEL_HANGUP_COMPLETE', U(1), { variable_cod_domain: DOMAIN, 'Hangup-Cause': 'USER_BUSY' }))
  t.same(kinds(first), [
    ['created', U(1)],
    ['hangup', U(1)],
  ])
  t.equal(s.get(U(1))?.hangupCause, 'USER_BUSY')
  t.equal(s.liveCount(DOMAIN), 0)
  t.same(kinds(s.apply(ev('CHANNEL_HANGUP', U(1), { 'Hangup-Cause': 'USER_BUSY' }))), [], 'a repeated end says nothing new')
  t.same(kinds(s.apply(ev('CHANNEL_DESTROY', U(1)))), [['destroyed', U(1)]])
  t.same(kinds(s.apply(ev('CHANNEL_ANSWER', U(1)))), [], 'nor does anything after it')
})

t.test('an answer whose CHANNEL_ANSWER was lost: the next event saying Answer-State answered reports it, once', async (t) => {
  // Found by test/faults/esl-drop.test.ts: a leg answered while the ESL link was down and bridged
  // after the reconnection's re-read began stayed ringing for the engine until its watchdog.
  const s = newStore()
  s.apply(ev('CHANNEL_CREATE', U(1), { variable_cod_domain: DOMAIN, 'Answer-State': 'ringing' }))
  s.apply(ev('CHANNEL_PROGRESS', U(1), { 'Answer-State': 'ringing' }))
  const changes = s.apply(ev('CHANNEL_BRIDGE', U(1), { 'Answer-State': 'answered', 'Bridge-A-Unique-ID': U(1), 'Bridge-B-Unique-ID': U(2) }))
  t.same(kinds(changes).slice(0, 2), [
    ['answered', U(1)],
    ['bridged', U(1)],
  ])
  t.equal(s.get(U(1))?.answered, true)
  t.equal(s.get(U(1))?.state, 'bridged')
  t.same(kinds(s.apply(ev('CHANNEL_UNBRIDGE', U(1), { 'Answer-State': 'answered', 'Bridge-A-Unique-ID': U(1), 'Bridge-B-Unique-ID': U(2) }))), [['unbridged', U(1)]], 'said once')
  // Early media is no answer; nor is the end of a channel that never answered.
  s.apply(ev('CHANNEL_CREATE', U(3), { variable_cod_domain: DOMAIN, 'Answer-State': 'ringing' }))
  t.same(kinds(s.apply(ev('CHANNEL_PROGRESS_MEDIA', U(3), { 'Answer-State': 'early' }))), [['progress', U(3)]])
  t.same(kinds(s.apply(ev('CHANNEL_HANGUP', U(3), { 'Answer-State': 'hangup', 'Hangup-Cause': 'NO_ANSWER' }))), [['hangup', U(3)]])
  t.equal(s.get(U(3))?.answered, false)
})

t.test('a re-read: rows of channels heard of since it began are ignored; adopted channels are indexed', async (t) => {
  const s = newStore()
  s.apply(ev('CHANNEL_CREATE', U(1), { variable_cod_domain: DOMAIN }))
  const token = s.beginResync()
  s.apply(ev('CHANNEL_CREATE', U(2), { variable_cod_domain: DOMAIN }))
  const changes = s.finishResync(token, [
    { row: { uuid: U(3), callstate: 'ACTIVE', application: 'park', presence_id: 'alice@example.test' }, vars: { domain: undefined, requestId: 'r3', role: 'originator' } },
  ])
  t.same(kinds(changes ?? []), [
    ['destroyed', U(1)],
    ['created', U(3)],
  ])
  t.match(s.get(U(3)), { domain: DOMAIN, userId: '1', state: 'park', answered: true, requestId: 'r3', role: 'originator' })
  t.same(uuids(s.ofUser(DOMAIN, '1')), [U(3)])
  t.same(uuids(s.ofRequest('r3')), [U(3)])
  t.equal(s.liveCount(DOMAIN), 2, 'the channel created during the re-read stays')
  t.equal(s.finishResync(token, []), undefined, 'a re-read is applied once')
})

t.test('MultiMap: one record alone, a set from the second on', async (t) => {
  const m = new MultiMap<string, { n: number }>()
  const [a, b] = [{ n: 1 }, { n: 2 }]
  m.add('k', a)
  m.add('k', a)
  t.same([...m.get('k')], [a])
  m.add('k', b)
  t.same([...m.get('k')], [a, b])
  m.delete('k', a)
  m.delete('k', a)
  t.same([...m.get('k')], [b])
  m.delete('k', b)
  t.same([...m.get('k')], [])
  m.delete('nothing', a)
  t.same([...m.get('nothing')], [])
})

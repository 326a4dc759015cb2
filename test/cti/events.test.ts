/**
 * What subscribers receive: the snapshot, then numbered info_events; end_user relayed to the
 * user's bridged leg; user scoping; isolation between domains; resynchronisation after an ESL
 * reconnection; one serialisation per event whatever the number of subscribers.
 */
import t from 'tap'
import { callExternalHangup, callExternalUntilBridged, ev, phoneCallCreated, T0_MS, userLegParked, type CallExternal } from './fixtures.js'
import { AUTH_A, AUTH_B, DOMAIN_A, DOMAIN_B, channelOf, open, startHarness, tick, type Client, type Message } from './helpers.js'

const WS = '/api/ws_cti'
const A = '835251f4-929b-4585-8bc1-3b1ceaacf129'
const B = '72c5be64-90da-471a-a2bf-d65f939bd84b'
const C = '5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f'
const D = '0b6a2c1e-4a5f-4d0e-9c8b-1f2e3d4c5b6a'

const END_USER = { id: 'c-42', name: 'Jane Doe', organization: 'ACME, Inc.', avatar: 'https://img.example/j.png', prefecture: '東京都' }
const call: CallExternal = { a: A, b: B, domain: DOMAIN_A, userId: '1', sipUser: 'alice', requestId: 'req-ext-1', endUser: END_USER }

/** Reads messages until `n` info_events arrived; returns them. */
async function events(client: Client, n: number): Promise<Message[]> {
  const out: Message[] = []
  while (out.length < n) {
    const m = await client.next()
    if (m.type === 'info_event') out.push(m)
  }
  return out
}

t.test('call_external with end_user: snapshot, then events; the user bridged to it sees end_user too', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  const [createA, progressA, answerA, ...rest] = callExternalUntilBridged(call)
  // A exists before anyone connects: it is in the full_events snapshot.
  h.pbx.emit(createA!, progressA!)
  const wall = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  t.equal(wall.initial.type, 'initial_info')
  const snap = wall.initial.channels as Array<Record<string, unknown>>
  t.equal(snap.length, 1, 'the live channel is in the snapshot')
  t.same(snap[0], {
    uuid: A,
    direction: 'outbound',
    peer_location: 'external',
    calling_name: 'Example Corp',
    calling_number: '0501230000',
    called_number: '0311112222',
    offer_at: T0_MS,
    answer_at: null,
    hangup_at: null,
    other_uuid: null,
    user_id: null,
    group_id: null,
    state: 'ringing',
    state_at: T0_MS + 100,
    operation: 'call_external',
    request_id: 'req-ext-1',
    end_user: END_USER,
    tags: ['originator'],
    hangup_cause: null,
    recording: false,
  })
  // alice sees nothing yet: she is not a party to the PSTN leg while it rings.
  const alice = await open(h, `${WS}?app_name=crm&user_name=alice`, { authorization: AUTH_A })
  t.same(alice.initial.channels, [], 'not a party yet')

  h.pbx.emit(answerA!, ...rest)
  const wallEvents = await events(wall.client, 6)
  t.same(
    wallEvents.map((m) => [m.seq, m.event, channelOf(m).uuid, channelOf(m).state]),
    [
      [1, 'updated', A, 'answered'],
      [2, 'added', B, 'calling'],
      [3, 'updated', B, 'ringing'],
      [4, 'updated', B, 'answered'],
      [5, 'updated', A, 'bridged'],
      [6, 'updated', B, 'bridged'],
    ],
    'every change once, numbered per connection',
  )
  const bBridged = channelOf(wallEvents[5]!)
  t.match(bBridged, {
    uuid: B,
    user_id: '1',
    other_uuid: A,
    peer_location: 'internal',
    end_user: END_USER,
    request_id: 'req-ext-1',
    operation: 'call_external',
    tags: ['destination'],
  })
  t.match(channelOf(wallEvents[4]!), { uuid: A, other_uuid: B, state: 'bridged', answer_at: T0_MS + 2000 })

  // alice: her leg is added with the end_user of the request while it rings, and the PSTN
  // leg becomes visible to her as soon as her leg is connected to it.
  const aliceEvents = await events(alice.client, 6)
  t.same(
    aliceEvents.map((m) => [m.seq, m.event, channelOf(m).uuid]),
    [
      [1, 'added', B],
      [2, 'added', A],
      [3, 'updated', B],
      [4, 'updated', B],
      [5, 'updated', A],
      [6, 'updated', B],
    ],
  )
  t.match(channelOf(aliceEvents[0]!), { uuid: B, state: 'calling', end_user: END_USER, user_id: '1' })
  t.match(channelOf(aliceEvents[1]!), { uuid: A, state: 'answered', end_user: END_USER })

  h.pbx.emit(...callExternalHangup(call))
  const ends = await events(alice.client, 6)
  t.same(
    ends.map((m) => [m.event, channelOf(m).uuid, channelOf(m).state]),
    [
      ['updated', B, 'hangup'],
      ['updated', A, 'answered'],
      ['updated', B, 'hangup'],
      ['updated', A, 'hangup'],
      ['removed', A, 'hangup'],
      ['removed', B, 'hangup'],
    ],
    'HANGUP_COMPLETE changes nothing and sends nothing',
  )
  await tick()
  t.equal(alice.client.received.length, 0, 'nothing more')
  t.equal(h.cti.channelCount(), 0, 'destroyed channels are forgotten')
  await alice.client.close()
  await wall.client.close()
})

t.test('user scoping', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  const alice = await open(h, `${WS}?app_name=crm&user_id=1`, { authorization: AUTH_A })
  const bob = await open(h, `${WS}?app_name=crm&user_name=bob`, { authorization: AUTH_A })
  // bob's parked call_user leg, then a call alice's phone places (identified by variable_user_name).
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  h.pbx.emit(...phoneCallCreated(D, DOMAIN_A, 'alice', '0311112222'))
  const bobEvents = await events(bob.client, 4)
  t.ok(
    bobEvents.every((m) => channelOf(m).uuid === C),
    'bob sees only his leg',
  )
  t.match(channelOf(bobEvents[3]!), { state: 'park', user_id: '2', tags: ['auto_answer', 'originator'], operation: 'call_user' })
  const aliceEvents = await events(alice.client, 2)
  t.same(
    aliceEvents.map((m) => [m.event, channelOf(m).uuid, channelOf(m).user_id, channelOf(m).direction]),
    [
      ['added', D, '1', 'inbound'],
      ['updated', D, '1', 'inbound'],
    ],
    'alice sees only the call she places',
  )
  await tick()
  t.equal(alice.client.received.length, 0, 'nothing else for alice')
  t.equal(bob.client.received.length, 0, 'nothing else for bob')

  // A later connection gets the same view in its snapshot.
  const bob2 = await open(h, `${WS}?app_name=other&user_name=bob`, { authorization: AUTH_A })
  t.same(
    (bob2.initial.channels as Array<Record<string, unknown>>).map((c) => c.uuid),
    [C],
  )
  for (const c of [alice, bob, bob2]) await c.client.close()
})

t.test('domains are isolated, even with equal user ids and extensions', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  // eve is user "1" with extension 1001 in other.test, like alice in example.test.
  const eve = await open(h, `${WS}?app_name=crm&user_id=1`, { authorization: AUTH_B })
  const eveAll = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_B })
  const alice = await open(h, `${WS}?app_name=crm&user_id=1`, { authorization: AUTH_A })
  h.pbx.emit(...callExternalUntilBridged(call))
  // A channel of domain B whose domain is known only from variable_domain_name (no cod_domain).
  h.pbx.emit(...phoneCallCreated(D, DOMAIN_B, 'eve', '1001'))
  const eveEvents = await events(eve.client, 2)
  t.same(
    eveEvents.map((m) => channelOf(m).uuid),
    [D, D],
  )
  const allB = await events(eveAll.client, 2)
  t.same(
    allB.map((m) => channelOf(m).uuid),
    [D, D],
  )
  const aliceEvents = await events(alice.client, 6)
  t.ok(
    aliceEvents.every((m) => channelOf(m).uuid !== D),
    'alice never sees the other domain',
  )
  await tick()
  t.equal(eve.client.received.length + eveAll.client.received.length, 0, 'domain B saw nothing of domain A')
  for (const c of [eve, eveAll, alice]) await c.client.close()
})

t.test('resynchronisation after an ESL reconnection', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  h.pbx.emit(...phoneCallCreated(D, DOMAIN_A, 'alice', '1002'))
  const wall = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  t.equal((wall.initial.channels as unknown[]).length, 2)
  // While we were away: D ended, C is still up, and E (unknown to us) appeared, answered.
  const E = 'e1e2e3e4-0000-4000-8000-000000000001'
  const row = (uuid: string, extra: Record<string, string>) => ({
    uuid,
    direction: 'outbound',
    created: '2026-11-22 06:08:00',
    created_epoch: '1795327680',
    name: 'sofia/internal/1001@127.0.0.1:5071',
    state: 'CS_EXECUTE',
    cid_name: 'Outbound Call',
    cid_num: '0000000000',
    dest: '1001',
    application: 'park',
    presence_id: '1001@example.test',
    callstate: 'ACTIVE',
    call_uuid: uuid,
    ...extra,
  })
  h.pbx.reply = (c) =>
    c === 'show channels as json'
      ? { ok: true, value: JSON.stringify({ row_count: 2, rows: [row(C, { presence_id: 'bob@example.test' }), row(E, {})] }) }
      : { ok: true, value: c.startsWith('uuid_getvar ') ? '_undef_' : '+OK\n' }
  h.pbx.reconnect()
  const got = await events(wall.client, 2)
  t.same(
    got.map((m) => [m.event, channelOf(m).uuid, channelOf(m).state]).sort(),
    [
      ['added', E, 'park'],
      ['removed', D, 'hangup'],
    ].sort(),
  )
  const added = got.find((m) => m.event === 'added')!
  t.match(channelOf(added), { user_id: '1', offer_at: 1795327680000, calling_number: '0000000000', called_number: '1001' })
  t.same(
    h.pbx.commands,
    ['show channels as json', 'show channels as json', ...['cod_domain', 'cod_request_id', 'cod_role'].map((v) => `uuid_getvar ${E} ${v}`)],
    'read at start and after the reconnection, with the command of pbx/commands.ts (and the variables of the channel never heard of)',
  )
  t.equal(h.cti.channelCount(), 2)
  await wall.client.close()
})

t.test('an event that arrives while the channel list is being re-read wins over the list', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  let answer: ((v: { ok: true; value: string }) => void) | undefined
  h.pbx.bgapi = (c) => {
    h.pbx.commands.push(c)
    return new Promise((resolve) => (answer = resolve))
  }
  h.pbx.reconnect()
  await tick()
  // C is created and destroyed during the re-read; the list (taken before) still shows it.
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  h.pbx.emit(ev('CHANNEL_DESTROY', C, T0_MS + 5000, { variable_cod_domain: DOMAIN_A }))
  // D is created during the re-read and is not in the list: it must stay.
  h.pbx.emit(...phoneCallCreated(D, DOMAIN_A, 'alice', '1002'))
  answer?.({ ok: true, value: JSON.stringify({ row_count: 1, rows: [{ uuid: C, callstate: 'ACTIVE', presence_id: 'bob@example.test' }] }) })
  await tick()
  await tick()
  t.equal(h.cti.channelCount(), 1)
  const wall = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  t.same(
    (wall.initial.channels as Array<Record<string, unknown>>).map((c) => c.uuid),
    [D],
  )
  await wall.client.close()
})

t.test('one serialisation per event, whatever the number of subscribers', async (t) => {
  const h = await startHarness({ cti: { max_connections_per_user: 100 } })
  t.teardown(h.close)
  const clients: Client[] = []
  for (let i = 0; i < 30; i++) {
    const auth = { authorization: AUTH_A }
    const path = i % 3 === 0 ? `${WS}?app_name=w${i}&full_events=true` : `${WS}?app_name=c${i}&user_name=bob`
    clients.push((await open(h, path, auth)).client)
  }
  const [create, progress, answer, park] = userLegParked(C, DOMAIN_A, '2', 'bob')
  h.pbx.emit(create!, progress!, answer!)
  for (const c of clients) await events(c, 3)

  const original = JSON.stringify
  let calls = 0
  JSON.stringify = ((...args: Parameters<typeof original>) => {
    calls += 1
    return original(...args)
  }) as typeof JSON.stringify
  try {
    h.pbx.emit(park!)
  } finally {
    JSON.stringify = original
  }
  t.equal(calls, 1, 'JSON.stringify ran once for 30 subscribers')
  const got = await Promise.all(clients.map((c) => events(c, 1)))
  t.ok(
    got.every(([m]) => m!.seq === 4 && m!.event === 'updated' && channelOf(m!).state === 'park'),
    'and every subscriber got its own sequence number with the shared payload',
  )
  for (const c of clients) await c.close()
})

/**
 * One CTI view across boxes (docs/cluster.md "One CTI view"), CTI's side of it: two CTI
 * harnesses linked in memory (peers-bus.ts) as nodes `a` and `b`. A subscriber of `a` sees `b`'s
 * channels with the very frames a subscriber of `b` gets (initial_info and every info_event); a
 * command sent on `a` for `b`'s channel runs on `b`'s switch only and its answer is `b`'s; the
 * policy holds for peers' channels as for local ones (read_only, ticket users, visibility).
 */
import t from 'tap'
import { callExternalHangup, callExternalUntilBridged, ev, phoneCallCreated, T0_MS, userLegParked } from './fixtures.js'
import { A, B, BOB, call, PHONE, WS } from './scene.js'
import { AUTH_A, AUTH_B, DOMAIN_A, genTicket, open, startHarness, type Client, type Harness, type Message } from './helpers.js'
import { PeersBus } from './peers-bus.js'


/** Waits until the client's queue stops growing (100 ms without a message), then takes what it got. */
async function settled(c: Client): Promise<Message[]> {
  let seen = -1
  const deadline = Date.now() + 5000
  while (c.received.length !== seen || c.received.length === 0) {
    if (Date.now() > deadline) break
    seen = c.received.length
    await new Promise((r) => setTimeout(r, 100))
  }
  return c.received.splice(0)
}

const byUuid = (channels: unknown): unknown[] => [...(channels as Array<{ uuid: string }>)].sort((x, y) => x.uuid.localeCompare(y.uuid))

/** Waits until `n` messages are queued, then takes them. */
async function take(c: Client, n: number): Promise<Message[]> {
  const out: Message[] = []
  while (out.length < n) out.push(await c.next(3000))
  return out
}

async function ticketClient(h: Harness, query: string): Promise<{ client: Client; initial: Message }> {
  const uri = `${WS}?${query}`
  const gen = await genTicket(h, uri)
  if (typeof gen.body.ticket !== 'string') throw new Error(`no ticket: ${JSON.stringify(gen.body)}`)
  return open(h, `${uri}&ticket=${gen.body.ticket}`)
}

t.test('a peer box\'s channels: same frames, commands carried out by their node, the same policy', async (t) => {
  const bus = new PeersBus()
  const a = await startHarness({ peers: bus.peers('a') })
  t.teardown(a.close)
  const b = await startHarness({ peers: bus.peers('b') })
  t.teardown(b.close)
  const onA = (await open(a, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })).client
  const onB = (await open(b, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })).client
  const otherDomain = await open(a, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_B })

  // On b's switch: the API's PSTN leg A bridged to alice's leg B; alice's phone calls bob.
  const events = [
    ...callExternalUntilBridged(call),
    ...phoneCallCreated(PHONE, DOMAIN_A, 'alice', '1002'),
    ...userLegParked(BOB, DOMAIN_A, '2', 'bob'),
    ev('CHANNEL_BRIDGE', PHONE, T0_MS + 5000, { 'Bridge-A-Unique-ID': PHONE, 'Bridge-B-Unique-ID': BOB, 'Other-Leg-Unique-ID': BOB, variable_domain_name: DOMAIN_A }),
  ]
  b.pbx.emit(...events)
  const local = await settled(onB)
  t.ok(local.length >= 8, `b's own subscriber got the call's events (${local.length})`)
  t.same(await take(onA, local.length), local, "a's subscriber got exactly b's frames, in order")
  t.equal(otherDomain.client.received.length, 0, 'another domain sees none of them')

  // A new subscriber of a: b's channels in its initial_info, as b's own new subscriber has them.
  const lateA = await open(a, `${WS}?app_name=late&full_events=true`, { authorization: AUTH_A })
  const lateB = await open(b, `${WS}?app_name=late&full_events=true`, { authorization: AUTH_A })
  t.same({ ...lateA.initial, channels: byUuid(lateA.initial.channels) }, { ...lateB.initial, channels: byUuid(lateB.initial.channels) }, 'the same initial_info on both nodes')
  t.equal((lateA.initial.channels as unknown[]).length, 4)

  // Commands from a on b's channels: carried out by b, answered as b answers.
  const commandsOfA = a.pbx.commands.length
  b.pbx.commands.length = 0
  t.same(await onA.command({ id: 1, cmd: 'park', uuid: A }), { type: 'result', id: 1, cmd: 'park', result_code: 0 }, 'park of b\'s channel from a')
  t.match(b.pbx.commands, [/^uuid_park 5b65cbfb/], "run on b's switch")
  t.equal(a.pbx.commands.length, commandsOfA, "nothing sent to a's switch")
  for (const cmd of [
    { id: 2, cmd: 'hangup', uuid: A, cause: 'BOGUS' },
    { id: 3, cmd: 'transfer', uuid: A, destination: 'nobody-here' },
    { id: 4, cmd: 'hangup', uuid: 'c0ffee00-0000-4000-8000-000000000000' },
    { id: 5, cmd: 'park', uuid: A, timeout: -1 },
  ]) {
    const fromA = await onA.command(cmd)
    t.same(fromA, await onB.command(cmd), `same answer on a and b: ${JSON.stringify(cmd)}`)
    t.equal(fromA.result_code, 500)
  }
  t.match(await otherDomain.client.command({ id: 6, cmd: 'hangup', uuid: A }), { result_code: 500, error: { id: 'channel_not_found' } }, "another domain's connection: channel_not_found")
  b.pbx.reply = () => ({ ok: true, value: '-ERR No such channel!\n' })
  t.match(await onA.command({ id: 7, cmd: 'hangup', uuid: A }), { result_code: 500, error: { id: 'channel_not_found' } }, "b's switch no longer has it: b's answer")
  b.pbx.reply = () => ({ ok: true, value: '+OK\n' })

  // Policy: read-only and ticket connections on a, b's channels.
  const monitorA = await ticketClient(a, 'app_name=board&full_events=true&read_only=true')
  const monitorB = await ticketClient(b, 'app_name=board&full_events=true&read_only=true')
  t.same(byUuid(monitorA.initial.channels), byUuid(monitorB.initial.channels), 'a monitor ticket on a sees b\'s channels')
  const ro = await monitorA.client.command({ id: 8, cmd: 'hangup', uuid: A })
  t.match(ro, { result_code: 500, error: { id: 'permission_denied' } }, 'read-only: permission_denied')
  t.same(ro, await monitorB.client.command({ id: 8, cmd: 'hangup', uuid: A }), 'as on b')

  const aliceA = await ticketClient(a, 'app_name=crm&user_name=alice')
  const aliceB = await ticketClient(b, 'app_name=crm&user_name=alice')
  t.same(byUuid(aliceA.initial.channels), byUuid(aliceB.initial.channels), "alice's ticket on a sees her channels of b, as on b")
  t.same(
    (aliceA.initial.channels as Array<{ uuid: string }>).map((c) => c.uuid).sort(),
    [A, B, PHONE, BOB].sort(),
    'hers: her legs and those connected to them',
  )
  const forwarded = bus.forwarded.length
  const denied = await aliceA.client.command({ id: 9, cmd: 'hangup', uuid: BOB })
  t.match(denied, { result_code: 500, error: { id: 'permission_denied' } }, "bob's leg, bridged to her: permission_denied")
  t.same(denied, await aliceB.client.command({ id: 9, cmd: 'hangup', uuid: BOB }), 'as on b')
  t.equal(bus.forwarded.length, forwarded, 'refused on a: never sent to b')
  b.pbx.commands.length = 0
  t.match(await aliceA.client.command({ id: 10, cmd: 'hangup', uuid: PHONE }), { result_code: 0 }, 'her own phone leg: done by b')
  t.match(b.pbx.commands, [/^uuid_setvar 7d1f0c2e-1111\S+ cod_hangup_by api$/, /^uuid_kill 7d1f0c2e-1111/])

  // The call ends on b: a's subscriber sees it end with b's frames.
  onA.received.length = 0
  onB.received.length = 0
  b.pbx.emit(...callExternalHangup(call))
  const end = await settled(onB)
  t.same(await take(onA, end.length), end, 'the end of the call: the same frames')
  t.same(
    end.filter((m) => m.event === 'removed').map((m) => (m.channel as { uuid: string }).uuid),
    [A, B],
    'both legs removed',
  )
  const after = await open(a, `${WS}?app_name=after&full_events=true`, { authorization: AUTH_A })
  t.same((after.initial.channels as Array<{ uuid: string }>).map((c) => c.uuid).sort(), [PHONE, BOB].sort(), 'ended channels are no longer in the view')
})

t.test('no peers: a command on an unknown channel is channel_not_found, as before', async (t) => {
  const a = await startHarness()
  t.teardown(a.close)
  const c = (await open(a, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })).client
  t.match(await c.command({ id: 1, cmd: 'hangup', uuid: A }), { result_code: 500, error: { id: 'channel_not_found' } })
})

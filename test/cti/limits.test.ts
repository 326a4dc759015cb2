/**
 * Robustness: the per-(domain, user, app_name) connection limit and forced replacement,
 * ping/pong keepalive, and closing a slow consumer before its buffer grows without bound.
 */
import type { Socket } from 'node:net'
import t from 'tap'
import { ev, T0_MS } from './fixtures.js'
import { AUTH_A, AUTH_B, connect, open, startHarness, tick, type Client } from './helpers.js'
import { encodeEndUser } from '../../src/pbx/commands.js'

const WS = '/api/ws_cti'
const auth = { authorization: AUTH_A }

t.test('at most max_connections_per_user per (domain, user, app_name); forced=true replaces the oldest', async (t) => {
  const h = await startHarness({ cti: { max_connections_per_user: 2 } })
  t.teardown(h.close)
  const first = await open(h, `${WS}?app_name=crm&user_name=alice`, auth)
  const second = await open(h, `${WS}?app_name=crm&user_name=alice`, auth)

  const third = await connect(h, `${WS}?app_name=crm&user_name=alice`, auth)
  if (!third.ok) throw new Error('the limit is a WebSocket message, not an HTTP refusal')
  t.match(await third.client.next(), { type: 'system', event: 'connection_limit_reached', description: /forced=true/ })
  t.equal(await third.client.closed, 1008, 'then closed (policy violation)')
  t.equal(third.client.received.length, 0, 'no snapshot for a refused connection')
  t.equal(h.cti.connectionCount(), 2)

  // Other app_name, other user, other domain (same user id): separate budgets.
  const otherApp = await open(h, `${WS}?app_name=softphone&user_name=alice`, auth)
  const otherUser = await open(h, `${WS}?app_name=crm&user_name=bob`, auth)
  const otherDomain = await open(h, `${WS}?app_name=crm&user_id=1`, { authorization: AUTH_B })
  t.equal(h.cti.connectionCount(), 5)

  const forced = await open(h, `${WS}?app_name=crm&user_name=alice&forced=true`, auth)
  t.equal(forced.initial.type, 'initial_info', 'the forced connection is admitted')
  t.match(await first.client.next(), { type: 'system', event: 'connection_replaced' }, 'the oldest is told why')
  t.equal(await first.client.closed, 4001, 'and closed with 4001')
  t.equal(second.client.ws.readyState, second.client.ws.OPEN, 'the newer one stays')
  t.equal(h.cti.connectionCount(), 5)

  // Closing one frees its place.
  await second.client.close()
  await tick()
  const again = await open(h, `${WS}?app_name=crm&user_name=alice`, auth)
  t.equal(again.initial.type, 'initial_info')

  // full_events connections are limited the same way.
  const w1 = await open(h, `${WS}?app_name=wall&full_events=true`, auth)
  const w2 = await open(h, `${WS}?app_name=wall&full_events=true`, auth)
  const w3 = await connect(h, `${WS}?app_name=wall&full_events=true`, auth)
  if (!w3.ok) throw new Error('refused at HTTP level')
  t.match(await w3.client.next(), { type: 'system', event: 'connection_limit_reached' })
  for (const c of [otherApp, otherUser, otherDomain, forced, again, w1, w2]) await c.client.close()
})

t.test('a connection that misses a pong is terminated; one that answers stays', async (t) => {
  const h = await startHarness({ cti: { ping_interval_ms: 40 } })
  t.teardown(h.close)
  const healthy = await open(h, `${WS}?app_name=crm&user_name=alice`, auth)
  const dead = await connect(h, `${WS}?app_name=crm&user_name=bob`, auth, { autoPong: false })
  if (!dead.ok) throw new Error('refused')
  t.equal(await dead.client.closed, 1006, 'terminated without a close handshake')
  t.match(
    h.logs.find((l) => l.msg === 'cti connection missed a pong: terminated'),
    { user_id: '2', app_name: 'crm' },
  )
  t.equal(healthy.client.ws.readyState, healthy.client.ws.OPEN, 'the one answering pings survived the same rounds')
  t.equal(h.cti.connectionCount(), 1)
  await healthy.client.close()
})

t.test('a slow consumer is closed once its unsent data passes max_buffered_bytes', async (t) => {
  const h = await startHarness({ cti: { max_buffered_bytes: 64 * 1024 } })
  t.teardown(h.close)
  const slow = await open(h, `${WS}?app_name=crm&full_events=true`, auth)
  const fast = await open(h, `${WS}?app_name=wall&full_events=true`, auth)
  let fastCount = 0
  fast.client.ws.on('message', () => (fastCount += 1))
  // The slow client stops reading: its socket is paused, so the server's buffer fills up.
  const slowSocket = (slow.client.ws as unknown as { _socket: Socket })._socket
  slowSocket.pause()

  // Big payloads (a long end_user) so that the kernel buffers fill quickly.
  const big = { name: 'N'.repeat(4000), organization: 'O'.repeat(4000) }
  const A = '835251f4-929b-4585-8bc1-3b1ceaacf129'
  const vars = { variable_cod_domain: 'example.test', variable_cod_end_user: encodeEndUser(big) }
  h.pbx.emit(ev('CHANNEL_CREATE', A, T0_MS, vars), ev('CHANNEL_ANSWER', A, T0_MS + 1, vars))
  let emitted = 2
  let i = 0
  const emitOne = () => {
    const name = i % 2 === 0 ? 'CHANNEL_BRIDGE' : 'CHANNEL_UNBRIDGE'
    h.pbx.emit(ev(name, A, T0_MS + 2 + i, { ...vars, 'Bridge-A-Unique-ID': A, 'Bridge-B-Unique-ID': 'f0000000-0000-4000-8000-000000000000' }))
    emitted += 1
    i += 1
  }
  const isClosed = () => h.logs.some((l) => l.msg === 'cti slow consumer closed')
  while (i < 5000 && !isClosed()) {
    emitOne()
    if (i % 20 === 0) {
      fast.client.received.length = 0
      await tick()
    }
  }
  t.ok(isClosed(), `the slow consumer was closed (after ${emitted} events)`)
  t.match(h.logs.find((l) => l.msg === 'cti slow consumer closed'), { app_name: 'crm', level: 40 })
  t.equal(h.cti.connectionCount(), 1, 'it no longer counts')
  const atClose = emitted
  for (let k = 0; k < 100; k++) emitOne()

  slowSocket.resume()
  t.equal(await slow.client.closed, 1013, 'its close code, once it reads again: 1013 (try again later)')
  const slowEvents = slow.client.received.filter((m) => m.type === 'info_event').length
  t.ok(slowEvents <= atClose, `it received ${slowEvents} of ${emitted} events: nothing was queued for it after the close`)

  // The other subscriber got everything.
  for (let i = 0; i < 100_000 && fastCount < emitted; i++) {
    fast.client.received.length = 0
    await tick()
  }
  t.equal(fastCount, emitted, 'the reading subscriber got every event')
  t.equal(fast.client.ws.readyState, fast.client.ws.OPEN)
  await fast.client.close()
})

t.test('close() ends every connection with 1001 and refuses new ones', async (t) => {
  const h = await startHarness()
  const clients: Client[] = []
  for (const user of ['alice', 'bob']) clients.push((await open(h, `${WS}?app_name=crm&user_name=${user}`, auth)).client)
  const listeners = h.channelListeners()
  t.ok(listeners > 0)
  await h.cti.close()
  t.same(await Promise.all(clients.map((c) => c.closed)), [1001, 1001])
  // CTI's events come from the channel model, which the daemon closes after CTI.
  t.equal(h.channelListeners(), 0, 'unsubscribed from the channel model')
  // No upgrade any more: the request falls through to the HTTP app (here: Koa's 404).
  t.match(await connect(h, `${WS}?app_name=crm&user_name=alice`, auth), { ok: false, status: 404 })
  await h.close()
  t.equal(h.pbx.listenerCount(), 0, 'and the channel model from the PBX')
})

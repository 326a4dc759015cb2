/**
 * Read-only connections and monitor tickets (docs/cti.md "Monitor tickets", src/cti/policy.ts):
 * `read_only=true` commands nothing (permission_denied before any channel is looked up, nothing
 * reaches FreeSWITCH); a ticket may see every channel of its domain (`full_events=true`) only
 * together with `read_only=true`; only a connection that sees the whole domain is told its
 * channel_limit (initial_info). This is what the live calls page (docs/ui.md) opens.
 */
import t from 'tap'
import { callExternalUntilBridged, phoneCallCreated, userLegParked, type CallExternal } from './fixtures.js'
import { AUTH_A, AUTH_B, DOMAIN_A, DOMAIN_B, channelOf, connect, genTicket, open, startHarness, type Client, type Harness } from './helpers.js'
import { domainSchema } from '../../src/config/schema.js'
import { DomainDirectory } from '../../src/directory/directory.js'
import { channelLimitShown, mayCommand } from '../../src/cti/policy.js'

const WS = '/api/ws_cti'
const MONITOR = `${WS}?app_name=live-calls&full_events=true&read_only=true`
const A = '835251f4-929b-4585-8bc1-3b1ceaacf129'
const B = '72c5be64-90da-471a-a2bf-d65f939bd84b'
const BOB = '7d1f0c2e-9999-4222-8333-444455556666'
const OTHER = '7d1f0c2e-1111-4222-8333-444455556666'
const call: CallExternal = { a: A, b: B, domain: DOMAIN_A, userId: '1', sipUser: 'alice', requestId: 'req-ext-1', endUser: { id: 'c-1', name: 'Jane' } }

async function monitorByTicket(h: Harness, auth = AUTH_A): Promise<{ client: Client; initial: Record<string, unknown> }> {
  const gen = await genTicket(h, MONITOR, auth)
  if (gen.status !== 200 || typeof gen.body.ticket !== 'string') throw new Error(`no ticket: ${gen.status} ${JSON.stringify(gen.body)}`)
  return open(h, `${MONITOR}&ticket=${gen.body.ticket}`)
}

t.test('a monitor ticket sees every channel of its domain, is told the limit, and commands nothing', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  // A call of alice's (A bridged to her leg B), a leg of bob's, and a phone call of domain B.
  h.pbx.emit(...callExternalUntilBridged(call))
  h.pbx.emit(...userLegParked(BOB, DOMAIN_A, '2', 'bob'))
  h.pbx.emit(...phoneCallCreated(OTHER, DOMAIN_B, 'eve', '1001'))

  const { client, initial } = await monitorByTicket(h)
  t.match(initial, {
    type: 'initial_info',
    connection: { domain: DOMAIN_A, user_id: null, full_events: true, read_only: true, channel_limit: 20, app_name: 'live-calls' },
  })
  const uuids = (initial.channels as Array<{ uuid: string }>).map((c) => c.uuid).sort()
  t.same(uuids, [A, B, BOB].sort(), "every channel of the domain, several users' included, none of domain B")

  // Every command, on a channel it sees or not, well formed or with a bad cause: refused, nothing sent.
  const sent = h.pbx.commands.length
  const commands = [
    { id: 1, cmd: 'hangup', uuid: A },
    { id: 2, cmd: 'park', uuid: BOB, timeout: 30 },
    { id: 3, cmd: 'transfer', uuid: B, destination: 'bob' },
    { id: 4, cmd: 'hangup', uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' },
    { id: 5, cmd: 'hangup', uuid: OTHER },
  ]
  for (const c of commands) {
    t.match(await client.command(c), { type: 'result', id: c.id, cmd: c.cmd, result_code: 500, error: { id: 'permission_denied', description: /read-only/ } }, `${c.cmd} #${c.id}`)
  }
  t.equal(h.pbx.commands.length, sent, 'no command reached FreeSWITCH')
  // A frame that is no command at all is still answered as such.
  t.match(await client.command({ cmd: 'explode' }), { error: { id: 'invalid_parameter' } })

  // Events of every user of the domain arrive (here: bob's leg hangs up).
  h.pbx.emit(...phoneCallCreated('0c0ffee0-1111-4222-8333-444455556666', DOMAIN_A, 'bob', '1001'))
  let m = await client.next()
  while (m.type !== 'info_event') m = await client.next()
  t.match(m, { event: 'added' })
  t.equal(channelOf(m).uuid, '0c0ffee0-1111-4222-8333-444455556666', "a call bob's phone places is seen")
  await client.close()
})

t.test('a monitor ticket is its domain\'s only: domain B\'s token gets domain B', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(BOB, DOMAIN_A, '2', 'bob'))
  const { client, initial } = await monitorByTicket(h, AUTH_B)
  t.match(initial, { connection: { domain: DOMAIN_B, channel_limit: 20 }, channels: [] })
  await client.close()
})

t.test('full_events with a ticket needs read_only=true, and the ticket is bound to it', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  for (const uri of [`${WS}?app_name=wall&full_events=true`, `${WS}?app_name=wall&full_events=true&read_only=false`]) {
    const r = await genTicket(h, uri)
    t.equal(r.status, 400, `${uri}: refused`)
    t.match(r.body, { error: { id: 'invalid_parameter', description: /read_only=true/ } })
  }
  for (const uri of [`${WS}?app_name=wall&full_events=true&read_only=yes`, `${WS}?app_name=wall&full_events=true&read_only=true&read_only=true`]) {
    const r = await genTicket(h, uri)
    t.equal(r.status, 400, `${uri}: refused`)
    t.match(r.body, { error: { id: 'invalid_parameter', description: /read_only/ } })
  }
  // read_only cannot be dropped: full_events with a ticket and no read_only is refused outright.
  const gen = await genTicket(h, MONITOR)
  const ticket = String(gen.body.ticket)
  const dropped = await connect(h, `${WS}?app_name=live-calls&full_events=true&ticket=${ticket}`)
  t.match(dropped, { ok: false, status: 401, body: { error: { id: 'unauthorized', description: /read_only=true/ } } }, 'read_only cannot be dropped')
  // Nor changed otherwise: another URI is refused and consumes the ticket.
  const other = await connect(h, `${WS}?app_name=live-calls&full_events=true&read_only=true&forced=true&ticket=${ticket}`)
  t.match(other, { ok: false, status: 401, body: { error: { description: /another URI/ } } }, 'forced=true added')
  const again = await connect(h, `${MONITOR}&ticket=${ticket}`)
  t.match(again, { ok: false, status: 401 }, 'the ticket was consumed by that attempt')
  t.equal(h.cti.connectionCount(), 0)
})

t.test('read_only on token connections; channel_limit only for full_events', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(BOB, DOMAIN_A, '2', 'bob'))
  const user = await open(h, `${WS}?app_name=crm&user_name=bob&read_only=true`, { authorization: AUTH_A })
  t.match(user.initial, { connection: { user_id: '2', full_events: false, read_only: true, channel_limit: null } }, 'a user-scoped connection is not told the limit')
  t.match(await user.client.command({ cmd: 'hangup', uuid: BOB }), { error: { id: 'permission_denied' } }, 'read_only binds a token connection too')
  const plain = await open(h, `${WS}?app_name=crm2&user_name=bob`, { authorization: AUTH_A })
  t.match(plain.initial, { connection: { read_only: false, channel_limit: null } })
  t.match(await plain.client.command({ cmd: 'hangup', uuid: BOB }), { result_code: 0 }, 'without read_only it commands as before')
  const wall = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  t.match(wall.initial, { connection: { full_events: true, read_only: false, channel_limit: 20 } })
  // A user ticket with read_only=true works as well (a page that only shows a user's calls).
  const gen = await genTicket(h, `${WS}?app_name=crm3&user_name=bob&read_only=true`)
  const byTicket = await open(h, `${WS}?app_name=crm3&user_name=bob&read_only=true&ticket=${String(gen.body.ticket)}`)
  t.match(byTicket.initial, { connection: { user_id: '2', read_only: true, channel_limit: null } })
  for (const c of [user.client, plain.client, wall.client, byTicket.client]) await c.close()
})

t.test('the rules on their own', async (t) => {
  t.same(mayCommand(false), { ok: true, value: undefined })
  t.match(mayCommand(true), { ok: false, error: { id: 'permission_denied' } })
  const domain = new DomainDirectory(domainSchema.parse({ name: 'lim.test', api_tokens: ['token-of-lim-test-domain'], channel_limit: 7, gateway: 'pstn' }))
  t.equal(channelLimitShown(true, domain), 7)
  t.equal(channelLimitShown(false, domain), null)
})

/**
 * Who may open the WebSocket: Basic auth (domain:token) or a one-time ticket; refusals are
 * plain HTTP errors with the API's JSON error body, and no upgrade.
 */
import t, { type Test } from 'tap'
import { AUTH_A, AUTH_B, DOMAIN_A, basic, connect, genTicket, open, startHarness, type Harness } from './helpers.js'

const WS = '/api/ws_cti'

const refused = async (t: Test, h: Harness, path: string, headers: Record<string, string>, status: number, id: string) => {
  const r = await connect(h, path, headers)
  t.equal(r.ok, false, `${path} is refused`)
  if (r.ok) return void (await r.client.close())
  t.equal(r.status, status, `${path}: HTTP ${status}`)
  t.match(r.body, { result_code: 500, error: { id } }, `${path}: error ${id}`)
  t.type((r.body.error as { description: unknown }).description, 'string')
  return r
}

t.test('Basic auth', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)

  const { client, initial } = await open(h, `${WS}?app_name=crm&user_name=alice`, { authorization: AUTH_A })
  t.match(initial, {
    type: 'initial_info',
    seq: 0,
    connection: { domain: DOMAIN_A, user_id: '1', full_events: false, app_name: 'crm' },
    channels: [],
  })
  await client.close()

  const r = await refused(t, h, `${WS}?app_name=crm&user_name=alice`, { authorization: basic(DOMAIN_A, 'wrong-token-wrong-token') }, 401, 'unauthorized')
  if (r !== undefined && !r.ok) t.match(r.headers['www-authenticate'], /^Basic /, '401 carries the Basic challenge')
  await refused(t, h, `${WS}?app_name=crm&user_name=alice`, {}, 401, 'unauthorized')
  // A token of domain B does not open domain A's users: alice is not a user of other.test.
  await refused(t, h, `${WS}?app_name=crm&user_name=alice`, { authorization: AUTH_B }, 404, 'user_not_found')
  t.equal(h.cti.connectionCount(), 0, 'no refused request became a connection')
})

t.test('bad queries and unknown users', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  const auth = { authorization: AUTH_A }
  await refused(t, h, `${WS}?user_name=alice`, auth, 400, 'missing_parameter')
  await refused(t, h, `${WS}?app_name=crm`, auth, 400, 'missing_parameter')
  await refused(t, h, `${WS}?app_name=crm&user_name=alice&color=red`, auth, 400, 'invalid_parameter')
  await refused(t, h, `${WS}?app_name=crm&user_name=alice&user_name=bob`, auth, 400, 'invalid_parameter')
  await refused(t, h, `${WS}?app_name=crm&user_name=alice&full_events=true`, auth, 400, 'invalid_parameter')
  await refused(t, h, `${WS}?app_name=crm&user_name=alice&forced=yes`, auth, 400, 'invalid_parameter')
  await refused(t, h, `${WS}?app_name=bad%20name&user_name=alice`, auth, 400, 'invalid_parameter')
  await refused(t, h, `${WS}?app_name=crm&user_name=nobody`, auth, 404, 'user_not_found')
  await refused(t, h, `${WS}?app_name=crm&user_label=Twin`, auth, 400, 'ambiguous_user')
  await refused(t, h, `${WS}?app_name=crm&user_name=alice&user_extension=1002`, auth, 400, 'ambiguous_user')
  // Several identifiers naming the same user are fine (as in the API).
  const { client, initial } = await open(h, `${WS}?app_name=crm&user_name=alice&user_extension=1001`, auth)
  t.match(initial, { connection: { user_id: '1' } })
  await client.close()
  // Other paths are not upgraded.
  await refused(t, h, '/api/ws_other?app_name=crm&user_name=alice', auth, 404, 'not_found')
})

t.test('full_events needs API-token auth', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  const { client, initial } = await open(h, `${WS}?app_name=wallboard&full_events=true`, { authorization: AUTH_A })
  t.match(initial, { connection: { user_id: null, full_events: true } })
  await client.close()

  const gen = await genTicket(h, `${WS}?app_name=wallboard&full_events=true`)
  t.equal(gen.status, 400, 'gen_ws_ticket refuses a full_events URI')
  t.match(gen.body, { result_code: 500, error: { id: 'invalid_parameter', description: /full_events/ } })

  // A ticket presented with full_events=true is refused whatever it was issued for.
  const ok = await genTicket(h, `${WS}?app_name=wallboard&user_name=alice`)
  await refused(t, h, `${WS}?app_name=wallboard&full_events=true&ticket=${String(ok.body.ticket)}`, {}, 401, 'unauthorized')
})

t.test('tickets', async (t) => {
  const h = await startHarness({ cti: { ticket_ttl_ms: 10_000 } })
  t.teardown(h.close)
  const uri = `${WS}?app_name=crm&user_name=alice`

  t.test('gen_ws_ticket refusals', async (t) => {
    const noAuth = await fetch(`${h.base}/api/gen_ws_ticket`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri }),
    })
    t.equal(noAuth.status, 401)
    t.match(noAuth.headers.get('www-authenticate'), /^Basic /)
    t.match(await noAuth.json(), { result_code: 500, error: { id: 'unauthorized' } })

    const cases: Array<[unknown, number, string]> = [
      [undefined, 400, 'missing_parameter'],
      [42, 400, 'invalid_parameter'],
      ['/api/other?app_name=crm&user_name=alice', 400, 'invalid_parameter'],
      [`${WS}?user_name=alice`, 400, 'missing_parameter'],
      [`${WS}?app_name=crm&user_name=alice&ticket=abc`, 400, 'invalid_parameter'],
      [`${WS}?app_name=crm&user_name=nobody`, 404, 'user_not_found'],
      // The URL parser would drop these (C0 controls and spaces at the ends, tabs and newlines
      // inside) and issue the ticket: refused as in every other strict string.
      [`${WS}?app_name=crm&user_name=alice\n`, 400, 'invalid_parameter'],
      [`${WS}?app_name=crm&user_\tname=alice`, 400, 'invalid_parameter'],
      [`\u0000${WS}?app_name=crm&user_name=alice`, 400, 'invalid_parameter'],
      [`${WS}?app_name=crm&user_name=alice\ud800`, 400, 'invalid_parameter'],
    ]
    for (const [u, status, id] of cases) {
      const r = await genTicket(h, u)
      t.equal(r.status, status, `uri ${JSON.stringify(u)}: ${status}`)
      t.match(r.body, { result_code: 500, error: { id } })
    }
    const extra = await fetch(`${h.base}/api/gen_ws_ticket`, {
      method: 'POST',
      headers: { authorization: AUTH_A, 'content-type': 'application/json' },
      body: JSON.stringify({ uri, user: 'x' }),
    })
    t.equal(extra.status, 400, 'an unknown body key is refused')
    const form = await fetch(`${h.base}/api/gen_ws_ticket`, {
      method: 'POST',
      headers: { authorization: AUTH_A, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'uri=x',
    })
    t.equal(form.status, 415, 'the body must be JSON')
  })

  t.test('a ticket opens exactly its URI, once', async (t) => {
    const gen = await genTicket(h, uri)
    t.equal(gen.status, 200)
    t.match(gen.body, { result_code: 0, ticket: /^[A-Za-z0-9_-]{20,}$/ })
    const ticket = String(gen.body.ticket)
    const { client, initial } = await open(h, `${uri}&ticket=${ticket}`)
    t.match(initial, { type: 'initial_info', connection: { domain: DOMAIN_A, user_id: '1', app_name: 'crm' } })
    await client.close()
    await refused(t, h, `${uri}&ticket=${ticket}`, {}, 401, 'unauthorized')
  })

  t.test('the ticket may come anywhere in the query, and a full ws URL may be given', async (t) => {
    const gen = await genTicket(h, `ws://daemon.example:8080${uri}`)
    t.equal(gen.status, 200)
    const { client } = await open(h, `${WS}?ticket=${String(gen.body.ticket)}&app_name=crm&user_name=alice`)
    await client.close()
  })

  t.test('wrong URI', async (t) => {
    const gen = await genTicket(h, uri)
    const ticket = String(gen.body.ticket)
    const r = await refused(t, h, `${WS}?app_name=crm&user_name=bob&ticket=${ticket}`, {}, 401, 'unauthorized')
    if (r !== undefined && !r.ok) t.match(r.body, { error: { description: /another URI/ } })
    // Consumed by that attempt: the right URI no longer works either.
    await refused(t, h, `${uri}&ticket=${ticket}`, {}, 401, 'unauthorized')
    // forced=true is part of the URI too.
    const gen2 = await genTicket(h, uri)
    await refused(t, h, `${uri}&forced=true&ticket=${String(gen2.body.ticket)}`, {}, 401, 'unauthorized')
  })

  t.test('expiry (injected clock)', async (t) => {
    const gen = await genTicket(h, uri)
    h.clock += 9_999
    const { client } = await open(h, `${uri}&ticket=${String(gen.body.ticket)}`)
    await client.close()
    const late = await genTicket(h, uri)
    h.clock += 10_000
    const r = await refused(t, h, `${uri}&ticket=${String(late.body.ticket)}`, {}, 401, 'unauthorized')
    if (r !== undefined && !r.ok) t.match(r.body, { error: { description: /expired/ } })
  })

  t.test('a ticket of domain B cannot name a user of domain A', async (t) => {
    const gen = await genTicket(h, uri, AUTH_B)
    t.equal(gen.status, 404, 'alice is not a user of other.test')
    const eve = await genTicket(h, `${WS}?app_name=crm&user_name=eve`, AUTH_B)
    const { client, initial } = await open(h, `${WS}?app_name=crm&user_name=eve&ticket=${String(eve.body.ticket)}`)
    t.match(initial, { connection: { domain: 'other.test', user_id: '1' } })
    await client.close()
  })

  t.test('an invented ticket', async (t) => {
    await refused(t, h, `${uri}&ticket=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`, {}, 401, 'unauthorized')
  })
})

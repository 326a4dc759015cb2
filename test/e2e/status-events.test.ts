/**
 * Status events end to end on the simulator (src/callbacks/status-events.ts; docs/events.md):
 * a call_user answered on one of alice's two terminals and bridged to bob gives, per leg, its
 * events in a call's order (the winner: initiated, ringing, answered, completed; the loser:
 * completed with LOSE_RACE; bob's leg as `destination`; one `bridged`), numbered 1..n without
 * gaps and delivered in that order, signed, as the OpenAPI document says; status_events filters;
 * a busy call ends with its cause; bad values are refused.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { hangupByOf } from '../../src/callbacks/status-events.js'
import { verifySignature } from '../../src/callbacks/body.js'
import { documentChecker } from '../openapi/validate.js'
import { startTestDaemon } from '../support/daemon.js'
import { waitFor } from '../support/wait.js'

const AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`
const SECRET = 'example-signing-secret'

interface StatusEvent {
  event: string
  request_id: string
  uuid: string
  leg: 'origin' | 'destination'
  sequence: number
  timestamp: number
  hangup_cause?: string
  hangup_by?: string
  billsec?: number
  duration_s?: number
  answered_uuid?: string | null
  peer_uuid?: string
}

t.test('hangup_by: who ended a leg, from its SIP disposition and cause', async (t) => {
  t.equal(hangupByOf('origin', 'NORMAL_CLEARING', 'recv_bye', true), 'origin', 'its phone sent BYE')
  t.equal(hangupByOf('origin', 'NORMAL_CLEARING', 'send_bye', true), 'destination', 'ended because the other party hung up')
  t.equal(hangupByOf('destination', 'NORMAL_CLEARING', 'send_bye', true), 'origin')
  t.equal(hangupByOf('destination', 'NORMAL_CLEARING', 'send_bye', false), 'origin', 'a destination leg is there for the origin, bridge seen or not')
  t.equal(hangupByOf('origin', 'NORMAL_CLEARING', 'send_bye', false), 'system', 'an origin leg FreeSWITCH ended with no peer: not a party')
  t.equal(hangupByOf('origin', 'LOSE_RACE', 'send_cancel', false), 'system', 'another terminal answered')
  t.equal(hangupByOf('origin', 'NO_ANSWER', 'send_cancel', false), 'system', 'the timeout')
  t.equal(hangupByOf('origin', 'ALLOTTED_TIMEOUT', 'send_bye', true), 'system', 'time_limit')
  t.equal(hangupByOf('destination', 'USER_BUSY', 'recv_refuse', false), 'destination', 'the party refused')
})

t.test('status events of a call', async (t) => {
  const got: Array<{ headers: Record<string, string | string[] | undefined>; body: string; json: StatusEvent }> = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => {
      got.push({ headers: req.headers, body, json: JSON.parse(body) as StatusEvent })
      res.end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/status`
  const daemon = await startTestDaemon(t, { simulatorPort: 0, simulatorTimeScale: 0.05 })
  const sim = daemon.simulator
  if (sim === undefined) return t.fail('simulator mode')
  const post = async (op: string, body: unknown) => {
    const res = await fetch(`${daemon.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: res.status, body: (await res.json()) as { uuids?: string[]; error?: { id: string } } }
  }

  await t.test('a call_user answered and bridged', async (t) => {
    const reply = await post('call_user', { user_name: 'alice', destination: 'bob', status_callback_url: url })
    t.equal(reply.status, 200)
    const [first, second] = reply.body.uuids ?? []
    await waitFor('the bridge', () => sim.liveChannels().some((c) => c.variables['cod_role'] === 'originator' && c.bridgedTo !== undefined), 10_000)
    const winner = sim.liveChannels().find((c) => c.variables['cod_role'] === 'originator' && c.bridgedTo !== undefined)
    if (winner === undefined) return t.fail('a bridged leg')
    await waitFor('bridged event', () => got.some((g) => g.json.event === 'bridged'), 10_000)
    sim.remoteHangup(winner.uuid)
    await waitFor('every leg completed', () => got.filter((g) => g.json.event === 'completed').length === 3, 10_000)
    await new Promise((r) => setTimeout(r, 200))
    const events = got.map((g) => g.json)
    t.same(events.map((e) => e.sequence), events.map((_, i) => i + 1), 'numbered 1..n without gaps, delivered in that order')
    const loser = winner.uuid === first ? second : first
    const bob = events.find((e) => e.leg === 'destination')?.uuid
    const of = (uuid: string | undefined) => events.filter((e) => e.uuid === uuid).map((e) => e.event)
    t.same(of(winner.uuid), ['initiated', 'ringing', 'answered', 'bridged', 'completed'], 'the answering terminal')
    t.same(of(loser).at(-1), 'completed', 'the other terminal')
    t.match(events.find((e) => e.uuid === loser && e.event === 'completed'), { hangup_cause: 'LOSE_RACE', hangup_by: 'system', answered_uuid: winner.uuid })
    t.same(of(bob), ['initiated', 'ringing', 'answered', 'completed'], "bob's leg, as the destination")
    t.equal(events.find((e) => e.event === 'bridged')?.peer_uuid, bob, 'bridged names the destination leg')
    const done = events.find((e) => e.uuid === winner.uuid && e.event === 'completed')
    t.match(done, { hangup_cause: 'NORMAL_CLEARING', hangup_by: 'origin', answered_uuid: winner.uuid }, 'alice hung up')
    t.match(events.find((e) => e.uuid === bob && e.event === 'completed'), { hangup_by: 'origin' }, "bob's leg ended because alice hung up")
    t.ok((done?.duration_s ?? -1) >= (done?.billsec ?? 0), 'duration counts the ring too')
    const nowSec = Math.floor(Date.now() / 1000)
    const doc = documentChecker((await (await fetch(`${daemon.baseUrl}/api/openapi.json`)).json()) as Parameters<typeof documentChecker>[0])
    for (const g of got) {
      t.equal(g.headers['x-cod-notice'], 'status')
      t.ok(verifySignature(SECRET, String(g.headers['x-signature']), g.body, { nowSec }), `${g.json.event} signed`)
      t.same(doc.checkAt(['components', 'schemas', 'StatusEvent'], g.json), [], `${g.json.event}: as documented`)
    }
  })

  await t.test('status_events filters; a busy call completes with its cause', async (t) => {
    const from = got.length
    const reply = await post('call_user', { user_name: 'carol', destination: 'bob', status_callback_url: url, status_events: ['completed'] })
    t.equal(reply.status, 200)
    await waitFor('completed', () => got.length > from, 10_000)
    await new Promise((r) => setTimeout(r, 300))
    const mine = got.slice(from).map((g) => g.json)
    t.same(mine.map((e) => [e.event, e.sequence]), [['completed', 1]], 'only what was asked, numbered from 1')
    t.match(mine[0], { hangup_cause: 'USER_BUSY', answered_uuid: null, billsec: 0 })
  })

  await t.test('a call hung up through the API: hangup_by api on that leg and on its peer', async (t) => {
    const from = got.length
    const reply = await post('call_user', { user_name: 'alice', destination: 'bob', status_callback_url: url })
    t.equal(reply.status, 200)
    await waitFor('bridged', () => got.slice(from).some((g) => g.json.event === 'bridged'), 10_000)
    const bridged = got.slice(from).find((g) => g.json.event === 'bridged')?.json
    const res = await fetch(`${daemon.baseUrl}/api/calls/${bridged?.peer_uuid ?? ''}/hangup`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, body: '{}' })
    t.equal(res.status, 200, 'bob\'s leg hung up through POST /calls/{uuid}/hangup')
    await waitFor('both parties completed', () => got.slice(from).filter((g) => g.json.event === 'completed' && g.json.hangup_cause !== 'LOSE_RACE').length === 2, 10_000)
    const ends = got.slice(from).map((g) => g.json).filter((e) => e.event === 'completed' && e.hangup_cause !== 'LOSE_RACE')
    t.same(ends.map((e) => [e.leg, e.hangup_by]).sort(), [['destination', 'api'], ['origin', 'api']], 'the API ended the call, not a party')
  })

  await t.test('bad values are refused, nothing originated', async (t) => {
    for (const body of [
      { status_callback_url: 'ftp://x.example/' },
      { status_callback_url: url, status_events: [] },
      { status_callback_url: url, status_events: ['answered', 'answered'] },
      { status_callback_url: url, status_events: ['hungup'] },
      { status_callback_url: 'http://169.254.169.254/latest' },
    ]) {
      const r = await post('call_user', { user_name: 'alice', destination: 'bob', ...body })
      t.equal(r.status, 400, JSON.stringify(body))
      t.equal(r.body.error?.id, 'invalid_parameter', JSON.stringify(body))
    }
  })
})

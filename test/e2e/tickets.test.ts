/**
 * A group's ticketing integration end to end on the simulator (src/callbacks/tickets.ts): every
 * call made for the group (call_group, call_user with group_name, initiate_call with group_name)
 * gives call.started, call.answered and call.ended, once each and in that order, signed with the
 * webhook's own secret, with the end_user relayed and the recording id of a recorded call; a call
 * nobody answers gives call.started and call.ended with its cause; a group without a webhook, or
 * a call not made for a group, gives nothing.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { verifySignature } from '../../src/callbacks/body.js'
import { documentChecker } from '../openapi/validate.js'
import { startTestDaemon } from '../support/daemon.js'
import { waitFor } from '../support/wait.js'

const AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`
const TICKET_SECRET = 'sales-ticketing-secret-0123'

interface Got {
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
  readonly json: { event: string; request_id: string; [k: string]: unknown }
}

t.test('ticket events of the calls made for a group', async (t) => {
  const got: Got[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => {
      got.push({ headers: req.headers, body, json: JSON.parse(body) as Got['json'] })
      res.end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tickets`

  // The shipped configuration, the sales group with a webhook.
  const dir = mkdtempSync(join(tmpdir(), 'cod-tickets-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync('conf/daemon.yaml', join(dir, 'daemon.yaml'))
  mkdirSync(join(dir, 'domains'))
  const domain = readFileSync('conf/domains/example.test.yaml', 'utf8').replace(
    'recording: { mode: always } }',
    `recording: { mode: always }, ticket_webhook: { url: "${url}", secret: "${TICKET_SECRET}" } }`,
  )
  t.match(domain, /ticket_webhook/, 'the configuration copy has the webhook')
  writeFileSync(join(dir, 'domains', 'example.test.yaml'), domain)
  const daemon = await startTestDaemon(t, { configFile: join(dir, 'daemon.yaml'), simulatorPort: 0, simulatorTimeScale: 0.05 })
  const post = async (op: string, body: unknown) => {
    const res = await fetch(`${daemon.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: res.status, body: (await res.json()) as { uuids?: string[] } }
  }
  const sim = daemon.simulator
  if (sim === undefined) return t.fail('simulator mode')
  const hangUpBridged = async () => {
    await waitFor('a bridged call', () => sim.liveChannels().some((c) => c.variables['cod_role'] === 'originator' && c.bridgedTo !== undefined), 10_000)
    for (const c of sim.liveChannels()) if (c.variables['cod_role'] === 'originator' && c.bridgedTo !== undefined) sim.remoteHangup(c.uuid)
  }
  const eventsOf = (requestId: string) => got.filter((g) => g.json.request_id === requestId)

  const endUser = { id: 'c-42', name: 'Jane Doe' }
  const calls: Array<[string, Record<string, unknown>]> = [
    ['call_group', { group_name: 'sales', destination: 'bob' }],
    ['call_user', { user_name: 'alice', destination: 'bob', group_name: 'sales' }],
    // The end_user prefix of a PSTN number (docs/interface.md): the far party's identity.
    ['initiate_call', { pstn_number: '{id=c-42,name=Jane%20Doe}0399990001', destination: 'bob', group_name: 'sales' }],
  ]
  for (const [op, body] of calls) {
    const from = got.length
    t.equal((await post(op, body)).status, 200, op)
    await hangUpBridged()
    await waitFor(`${op}: call.ended`, () => got.slice(from).some((g) => g.json.event === 'call.ended'), 10_000)
    const mine = got.slice(from)
    const requestId = mine[0]?.json.request_id ?? ''
    t.same(eventsOf(requestId).map((g) => g.json.event), ['call.started', 'call.answered', 'call.ended'], `${op}: each once, in order`)
    const nowSec = Math.floor(Date.now() / 1000)
    for (const g of eventsOf(requestId)) {
      t.equal(g.headers['x-cod-notice'], 'ticket')
      t.ok(verifySignature(TICKET_SECRET, String(g.headers['x-signature']), g.body, { nowSec }), `${op} ${g.json.event}: signed with the webhook's secret`)
      t.match(g.json, { group: { name: 'sales' }, operation: op })
    }
    const endedEvent = eventsOf(requestId)[2]?.json
    t.match(endedEvent, { hangup_cause: 'NORMAL_CLEARING', recording_id: /^[0-9a-f-]{36}$/ }, `${op}: the cause and the recording of the recorded call`)
    t.equal(typeof endedEvent?.['billsec'], 'number')
    if (op === 'initiate_call') t.same(eventsOf(requestId)[0]?.json['end_user'], endUser, 'the end_user relayed')
  }

  // Nobody answers: carol is busy, and she is the one rung (call_user with group_name).
  const from = got.length
  t.equal((await post('call_user', { user_name: 'carol', destination: 'bob', group_name: 'sales' })).status, 200)
  await waitFor('call.ended of the busy call', () => got.slice(from).some((g) => g.json.event === 'call.ended'), 10_000)
  t.same(got.slice(from).map((g) => g.json.event), ['call.started', 'call.ended'])
  t.match(got.slice(from)[1]?.json, { hangup_cause: 'USER_BUSY', answered_uuid: null, recording_id: null })

  // Every body is what the OpenAPI document's ticketEvent webhook says.
  const doc = documentChecker((await (await fetch(`${daemon.baseUrl}/api/openapi.json`)).json()) as Parameters<typeof documentChecker>[0])
  for (const g of got) t.same(doc.checkAt(['components', 'schemas', 'TicketEvent'], g.json), [], `${g.json.event}: as documented`)

  // Not made for a group with a webhook: nothing.
  const before = got.length
  t.equal((await post('call_group', { group_name: 'support', destination: 'bob' })).status, 200)
  t.equal((await post('call_user', { user_name: 'alice', destination: 'bob' })).status, 200)
  await hangUpBridged()
  await new Promise((r) => setTimeout(r, 1500))
  t.equal(got.length, before, 'no ticket event for calls not made for sales')
})

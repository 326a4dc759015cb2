/**
 * The live calls routes (src/api/calls/) over HTTP, on the daemon's channel model fed by
 * FreeSWITCH events and CTI's live calls (src/cti/live-calls.ts) with the FakePbx recording every
 * command: the list and its filters show what CTI shows; each command writes its one ESL
 * command; another domain's leg answers exactly as a missing one with nothing sent to
 * FreeSWITCH; and hostile uuids, digits, causes and destinations are refused before anything is.
 */
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { createApp } from '../../src/api/app.js'
import { buildOpenApiDocument } from '../../src/api/openapi/document.js'
import { createChannelModel } from '../../src/channels/index.js'
import type { LoadedConfig } from '../../src/config/load.js'
import { eslCommands } from '../../src/cti/esl.js'
import { createLiveCalls } from '../../src/cti/live-calls.js'
import { viewOf } from '../../src/cti/view.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { silentLogger } from '../../src/util/logger.js'
import { documentChecker } from '../openapi/validate.js'
import { FakePbx } from '../support/fake-pbx.js'
import { userLegParked } from '../cti/fixtures.js'
import { AUTH_A, AUTH_B, DOMAIN_A, DOMAIN_B, domainB, exampleConfig, isError, RecordingEngine, send as sendOnce, type Asserts, type Reply } from './helpers.js'

const A1 = '11111111-1111-4111-8111-111111111111'
const A2 = '22222222-2222-4222-8222-222222222222'
const B1 = '33333333-3333-4333-8333-333333333333'
const MISSING = '44444444-4444-4444-8444-444444444444'

const base = await exampleConfig()
const config: LoadedConfig = { ...base, domains: [...base.domains, domainB] }
const runtime = runtimeOf(config)
const pbx = new FakePbx()
const channels = createChannelModel({ pbx, logger: silentLogger(), directory: () => runtime.directory })
t.teardown(() => channels.close())
const app = createApp({
  runtime: () => runtime,
  engine: new RecordingEngine(),
  health: { isConnected: () => true },
  logger: silentLogger(),
  calls: createLiveCalls({ channels, pbx, commands: eslCommands, logger: silentLogger() }),
})
const server = app.listen(0, '127.0.0.1')
await new Promise<void>((resolve) => server.once('listening', resolve))
t.teardown(() => {
  server.closeAllConnections()
  server.close()
})
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/calls`

// bob's and alice's legs in domain A, zara's in domain B; FreeSWITCH holds all three.
await new Promise((resolve) => setImmediate(resolve))
pbx.emit(...userLegParked(A1, DOMAIN_A, '2', 'bob'), ...userLegParked(A2, DOMAIN_A, '1', 'alice'), ...userLegParked(B1, DOMAIN_B, '71', 'zara'))
for (const uuid of [A1, A2, B1]) pbx.live.set(uuid, { answered: true, vars: {} })

/** Every reply, with the documented path it answered (checked against the OpenAPI document at the end). */
const replies: Array<{ readonly path: string; readonly method: 'get' | 'post'; readonly reply: Reply }> = []
async function send(target: string, init: RequestInit): Promise<Reply> {
  const reply = await sendOnce(target, init)
  const rest = decodeURIComponent(target.slice(url.length).split('?')[0] ?? '')
  const [, , name] = rest.split('/')
  const path = rest === '' ? '/api/calls' : name === undefined ? '/api/calls/{uuid}' : `/api/calls/{uuid}/${name}`
  if (name !== 'record') replies.push({ path, method: init.method === 'POST' ? 'post' : 'get', reply })
  return reply
}

const get = (path: string, auth = AUTH_A) => send(`${url}${path}`, { headers: { authorization: auth } })
const command = (uuid: string, name: string, body?: unknown, auth = AUTH_A) =>
  send(`${url}/${encodeURIComponent(uuid)}/${name}`, {
    method: 'POST',
    headers: { authorization: auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })

/** Runs `f` and asserts that no command reached FreeSWITCH meanwhile. */
async function nothingSent<T>(tt: Asserts, f: () => Promise<T>): Promise<T> {
  const before = pbx.commands.length
  const r = await f()
  tt.same(pbx.commands.slice(before), [], 'nothing reached FreeSWITCH')
  return r
}

/** Runs `f` and returns the commands it sent. */
async function sent(f: () => Promise<unknown>): Promise<string[]> {
  const before = pbx.commands.length
  await f()
  return pbx.commands.slice(before)
}

t.test('GET /calls: the domain\'s live legs as CTI shows them, and only its own', async (t) => {
  const r = await get('')
  t.equal(r.status, 200, r.text)
  t.equal(r.body.result_code, 0)
  const calls = r.body.calls as Array<{ uuid: string }>
  t.same(calls.map((c) => c.uuid).sort(), [A1, A2].sort())
  const a1 = channels.get(A1)
  if (a1 === undefined) throw new Error('no A1')
  t.same(
    calls.find((c) => c.uuid === A1),
    viewOf(a1),
    "CTI's view of the channel, the same object",
  )
  const b = await get('', AUTH_B)
  t.same((b.body.calls as Array<{ uuid: string }>).map((c) => c.uuid), [B1])
})

t.test('GET /calls filters by request_id and by user', async (t) => {
  const byRequest = await get(`?request_id=req-${A2.slice(0, 8)}`)
  t.same((byRequest.body.calls as Array<{ uuid: string }>).map((c) => c.uuid), [A2])
  const byUser = await get('?user=bob')
  t.same((byUser.body.calls as Array<{ uuid: string }>).map((c) => c.uuid), [A1])
  // Domain B's user names nothing in domain A.
  isError(t, await get('?user=zara'), 404, 'user_not_found')
  isError(t, await get('?user=bob&user=alice'), 400, 'invalid_parameter', 'user')
  isError(t, await get('?request_id=a%20b'), 400, 'invalid_parameter', 'request_id')
  isError(t, await get('?since=1'), 400, 'invalid_parameter', 'since')
})

t.test('GET /calls/{uuid}: its own leg; another domain\'s answers exactly as a missing one', async (t) => {
  const r = await get(`/${A1}`)
  t.equal(r.status, 200, r.text)
  t.equal((r.body.call as { uuid: string }).uuid, A1)
  const other = await nothingSent(t, () => get(`/${B1}`))
  const missing = await get(`/${MISSING}`)
  isError(t, other, 404, 'channel_not_found')
  t.equal(other.text.replace(B1, 'U'), missing.text.replace(MISSING, 'U'), 'the same reply')
  isError(t, await get('/not-a-uuid'), 404, 'channel_not_found')
  isError(t, await get(`/${A1}`, 'Basic eDp5'), 401, 'unauthorized')
})

t.test('each command writes its ESL commands on the domain\'s leg', async (t) => {
  const cases: Array<[string, unknown, string[]]> = [
    ['dtmf', { digits: '12*#AD' }, [`uuid_recv_dtmf ${A2} 12*#AD`]],
    ['hold', undefined, [`uuid_hold ${A2}`]],
    ['hold', {}, [`uuid_hold ${A2}`]],
    ['unhold', {}, [`uuid_hold off ${A2}`]],
    ['transfer', { destination: 'carol' }, [`uuid_transfer ${A2} carol XML ${DOMAIN_A}`]],
    ['transfer', { destination: '1003' }, [`uuid_transfer ${A2} 1003 XML ${DOMAIN_A}`]],
    // Marked first, so that its status event says hangup_by api (callbacks/status-events.ts).
    ['hangup', { cause: 'USER_BUSY' }, [`uuid_setvar ${A2} cod_hangup_by api`, `uuid_kill ${A2} USER_BUSY`]],
  ]
  for (const [name, body, expected] of cases) {
    let reply: Awaited<ReturnType<typeof command>> | undefined
    t.same(await sent(async () => (reply = await command(A2, name, body))), expected, `${name} ${JSON.stringify(body)}`)
    t.equal(reply?.status, 200, reply?.text ?? '')
    t.same(reply?.body, { result_code: 0 })
  }
  // The leg hung up (uuid_kill): it is no longer a live call.
  await new Promise((resolve) => setImmediate(resolve))
  isError(t, await get(`/${A2}`), 404, 'channel_not_found')
})

t.test('hangup without a cause is NORMAL_CLEARING', async (t) => {
  const uuid = '55555555-5555-4555-8555-555555555555'
  pbx.emit(...userLegParked(uuid, DOMAIN_A, '3', 'carol'))
  pbx.live.set(uuid, { answered: true, vars: {} })
  t.same(await sent(() => command(uuid, 'hangup')), [`uuid_setvar ${uuid} cod_hangup_by api`, `uuid_kill ${uuid} NORMAL_CLEARING`])
})

t.test("another domain's leg: 404 channel_not_found for every command, the same as a missing one, nothing sent", async (t) => {
  const bodies: Record<string, unknown> = { hangup: {}, transfer: { destination: 'alice' }, dtmf: { digits: '1' }, hold: {}, unhold: {} }
  for (const [name, body] of Object.entries(bodies)) {
    const other = await nothingSent(t, () => command(B1, name, body))
    const missing = await nothingSent(t, () => command(MISSING, name, body))
    isError(t, other, 404, 'channel_not_found')
    t.equal(other.text.replace(B1, 'U'), missing.text.replace(MISSING, 'U'), `${name}: the same reply`)
  }
  // Domain B acts on its own leg.
  t.same(await sent(() => command(B1, 'hold', {}, AUTH_B)), [`uuid_hold ${B1}`])
})

t.test('hostile values are refused with nothing sent', async (t) => {
  const hostile = [' ', '1 2', '1\n2', '1\r\nuuid_kill x', '1&2', "1'", '${api(status)}', '1$', 'w', '1+2', '1@100', '~1', 'E', '1'.repeat(65), '']
  for (const digits of hostile) isError(t, await nothingSent(t, () => command(A1, 'dtmf', { digits })), 400, 'invalid_parameter', 'digits')
  isError(t, await nothingSent(t, () => command(A1, 'dtmf', { digits: 1 })), 400, 'invalid_parameter', 'digits')
  isError(t, await nothingSent(t, () => command(A1, 'dtmf', {})), 400, 'missing_parameter', 'digits')
  for (const cause of ['NORMAL_CLEARING bob', 'NORMAL_CLEARING\nuuid_kill x', "USER_BUSY'", '${hangup_cause}', 'normal_clearing', 'SUBSCRIBER_ABSENT', 1]) {
    isError(t, await nothingSent(t, () => command(A1, 'hangup', { cause })), 400, 'invalid_parameter', 'cause')
  }
  for (const destination of ['alice bob', 'alice\n', 'a&b', "alice'", '${api(status)}', '{name=x}0612345678', 'carol XML default', '']) {
    isError(t, await nothingSent(t, () => command(A1, 'transfer', { destination })), 400, 'invalid_parameter', 'destination')
  }
  isError(t, await nothingSent(t, () => command(A1, 'transfer', { destination: 'xml_url:https://x.test/a.xml' })), 400, 'destination_not_allowed', 'destination')
  isError(t, await nothingSent(t, () => command(A1, 'transfer', { destination: 'nobody' })), 404, 'destination_not_found')
  isError(t, await nothingSent(t, () => command(A1, 'transfer', {})), 400, 'missing_parameter', 'destination')
  for (const uuid of [`${A1} x`, `${A1}\nuuid_kill ${A1}`, `${A1}&x`, `${A1}'`, '${api(status)}', A1.replace(/-/g, '')]) {
    isError(t, await nothingSent(t, () => command(uuid, 'hangup', {})), 404, 'channel_not_found')
  }
  isError(t, await nothingSent(t, () => command(A1, 'hold', { music: 'x' })), 400, 'invalid_parameter', 'music')
  const notJson = await nothingSent(t, () => send(`${url}/${A1}/hold`, { method: 'POST', headers: { authorization: AUTH_A, 'content-type': 'text/plain' }, body: 'x' }))
  isError(t, notJson, 415, 'unsupported_media_type')
  isError(t, await nothingSent(t, () => command(A1, 'record', {})), 400, 'missing_parameter', 'action')
  isError(t, await nothingSent(t, () => command(A1, 'hangup', {}, 'Basic eDp5')), 401, 'unauthorized')
})

t.test('a refusal of FreeSWITCH is command_failed; a channel gone meanwhile is channel_not_found', async (t) => {
  pbx.reply = (c) => ({ ok: true, value: c.startsWith('uuid_hold') ? '-ERR Operation failed\n' : '-ERR Cannot locate session!\n' })
  t.teardown(() => (pbx.reply = undefined))
  isError(t, await command(A1, 'hold', {}), 502, 'command_failed', 'Operation failed')
  isError(t, await command(A1, 'dtmf', { digits: '1' }), 404, 'channel_not_found')
})

t.test('every reply above is as the OpenAPI document says', async (t) => {
  const check = documentChecker(buildOpenApiDocument({ prefix: '/api' }))
  t.ok(replies.length > 50, `${replies.length} replies`)
  for (const { path, method, reply } of replies) {
    const headers = Object.fromEntries(reply.headers.entries())
    t.same(check.checkReply(path, method, reply.status, headers, reply.body), [], `${method} ${path} ${reply.status}`)
  }
})

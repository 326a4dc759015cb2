/**
 * The HTTP layer: /healthz, routing (404/405), media type, body limits, malformed bodies,
 * engine errors, exceptions, request ids, log lines, extra routers, prefix and reloads.
 */
import t from 'tap'
import Router from '@koa/router'
import { createApp } from '../../src/api/app.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { readFile } from 'node:fs/promises'
import { ERROR_STATUS } from '../../src/api/errors.js'
import type { OriginationEngine } from '../../src/origination/plan.js'
import { refusal } from '../../src/origination/refusal.js'
import { silentLogger } from '../../src/util/logger.js'
import { err } from '../../src/util/result.js'
import type { AddressInfo } from 'node:net'
import { AUTH_A, AUTH_B, exampleConfig, isError, post, send, startApp } from './helpers.js'

const CALL = { user_name: 'alice', destination: '0311112222' }

t.test('/healthz answers without credentials, 200 or 503', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  let r = await send(`${h.base}/healthz`, {})
  t.equal(r.status, 200)
  t.same(r.body, { status: 'ok', freeswitch: 'connected' })
  t.equal(r.headers.get('cache-control'), 'no-store')
  h.connected = false
  r = await send(`${h.base}/healthz`, {})
  t.equal(r.status, 503)
  t.same(r.body, { status: 'unavailable', freeswitch: 'disconnected' })
  const line = h.logs.find((l) => l.path === '/healthz' && l.status === 503)
  t.equal(line?.level, 30, 'an unhealthy probe is logged at info')
  t.equal(h.logs.find((l) => l.path === '/healthz' && l.status === 200)?.level, 20, 'a healthy probe at debug')
})

t.test('unknown paths are 404, wrong methods 405 with Allow, both JSON', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  let r = await send(`${h.base}/nothing/here`, {})
  isError(t, r, 404, 'not_found')
  t.match(r.headers.get('content-type'), /application\/json/)
  r = await send(`${h.base}/api/call_everyone`, { method: 'POST', headers: { authorization: AUTH_A } })
  isError(t, r, 404, 'not_found')
  r = await send(`${h.base}/api/call_user`, { headers: { authorization: AUTH_A } })
  isError(t, r, 405, 'method_not_allowed', 'POST')
  t.equal(r.headers.get('allow'), 'POST')
  r = await send(`${h.base}/api/call_group`, { method: 'DELETE' })
  isError(t, r, 405, 'method_not_allowed')
  r = await send(`${h.base}/healthz`, { method: 'POST' })
  isError(t, r, 405, 'method_not_allowed')
  t.match(r.headers.get('allow'), /GET/)
  t.equal(h.engine.plans.length, 0)
})

t.test('only application/json bodies are accepted', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  const url = `${h.base}/api/call_user`
  const json = JSON.stringify(CALL)
  for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/json-patch+json', 'application/jsonx', 'application/json; charset=latin1']) {
    const headers: Record<string, string> = { authorization: AUTH_A }
    if (type !== undefined) headers['content-type'] = type
    const r = await send(url, { method: 'POST', headers, body: type === undefined ? new Blob([json]) : json })
    isError(t, r, 415, 'unsupported_media_type', 'application/json')
  }
  for (const type of ['application/json', 'Application/JSON; charset=UTF-8', 'application/json;charset="utf-8"']) {
    const r = await send(url, { method: 'POST', headers: { authorization: AUTH_A, 'content-type': type }, body: json })
    t.equal(r.status, 200, type)
  }
  t.equal(h.engine.plans.length, 3)
})

t.test('bodies that are not a JSON object are 400 invalid_parameter', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  for (const body of ['{"user_name": "alice",', '{user_name: alice}', '"alice"', '42', 'null', '[]', '[{"user_name":"alice"}]', '', '   ', '{"__proto__": {"x": 1}}']) {
    const r = await send(`${h.base}/api/call_user`, {
      method: 'POST',
      headers: { authorization: AUTH_A, 'content-type': 'application/json' },
      body,
    })
    isError(t, r, 400, 'invalid_parameter')
  }
  t.equal(h.engine.plans.length, 0)
})

t.test('bodies over http.body_limit are 413, with or without Content-Length', async (t) => {
  const h = await startApp({ bodyLimit: 1024 })
  t.teardown(() => h.close())
  const url = `${h.base}/api/call_user`
  const headers = { authorization: AUTH_A, 'content-type': 'application/json' }
  const big = JSON.stringify({ ...CALL, calling_name: 'x'.repeat(2000) })
  let r = await send(url, { method: 'POST', headers, body: big })
  isError(t, r, 413, 'payload_too_large', '1024')
  // Chunked: the limit is applied while reading, not only from the header.
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(big.slice(0, 1000)))
      c.enqueue(new TextEncoder().encode(big.slice(1000)))
      c.close()
    },
  })
  r = await send(url, { method: 'POST', headers, body: stream, duplex: 'half' } as RequestInit)
  isError(t, r, 413, 'payload_too_large')
  // Just under the limit passes.
  r = await send(url, { method: 'POST', headers, body: JSON.stringify({ ...CALL, callback_url: `https://cb.example/${'p'.repeat(900)}` }) })
  t.equal(r.status, 200)
  t.equal(h.engine.plans.length, 1)
})

t.test('engine errors keep their id and status', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  // The engine's refusal reason, the API error id it becomes, and its status.
  const cases = [
    ['channel_limit_reached', 'channel_limit_reached', 429],
    ['user_not_registered', 'user_not_registered', 409],
    ['no_member_available', 'no_member_available', 409],
    ['pbx_unavailable', 'pbx_unavailable', 503],
    ['internal', 'internal_error', 500],
  ] as const
  for (const [reason, id, status] of cases) {
    h.engine.reply = async () => err(refusal(reason, `engine said ${id}`))
    const r = await post(h, 'call_user', CALL)
    isError(t, r, status, id)
    t.equal(h.logs[h.logs.length - 1]?.error, id, 'the log line names the error')
  }
})

/** An engine whose PBX link is down: it refuses every call. */
const UNAVAILABLE: OriginationEngine = {
  originate: async () => ({ ok: false, error: refusal('pbx_unavailable', 'FreeSWITCH is not connected') }),
}

t.test('an engine refusing with pbx_unavailable answers 503 pbx_unavailable', async (t) => {
  const h = await startApp({ engine: UNAVAILABLE })
  t.teardown(() => h.close())
  for (const [op, body] of [
    ['call_user', CALL],
    ['call_group', { group_name: 'sales', destination: '0311112222' }],
    ['call_external', { target: '0311112222', destination: 'alice' }],
    ['initiate_call', CALL],
  ] as const) {
    isError(t, await post(h, op, body), 503, 'pbx_unavailable')
  }
})

t.test('an exception becomes 500 internal_error without its stack, and is logged', async (t) => {
  const throwing: OriginationEngine = {
    originate: async () => {
      throw new Error('secret detail of a bug')
    },
  }
  const h = await startApp({ engine: throwing })
  t.teardown(() => h.close())
  const r = await post(h, 'call_user', CALL)
  isError(t, r, 500, 'internal_error')
  t.notMatch(r.text, /secret detail/)
  const logged = h.logs.find((l) => l.level === 50)
  t.match(logged, { req_id: r.headers.get('x-request-id'), err: { message: 'secret detail of a bug' } })
})

t.test('request id header, plan request id and one log line per request', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  const r = await post(h, 'call_user', CALL)
  t.equal(r.status, 200)
  t.same(r.body, { result_code: 0, uuids: ['uuid-1-a', 'uuid-1-b'] })
  const id = r.headers.get('x-request-id')
  t.equal(id, 'req-1')
  t.equal(h.engine.last()?.requestId, id, 'the plan carries the request id')
  const lines = h.logs.filter((l) => l.req_id === id)
  t.equal(lines.length, 1)
  t.match(lines[0], { domain: 'example.test', operation: 'call_user', status: 200, uuids: 2, ms: Number, msg: 'http request' })
  const bad = await post(h, 'call_user', { user_name: 'nobody', destination: 'bob' })
  const badLine = h.logs.find((l) => l.req_id === bad.headers.get('x-request-id'))
  t.match(badLine, { domain: 'example.test', operation: 'call_user', status: 404, error: 'user_not_found' })
})

t.test('extra routers are mounted outside the API auth; their errors are JSON too', async (t) => {
  const extra = new Router()
  extra.get('/extra/ping', (ctx) => {
    ctx.body = 'pong'
  })
  extra.get('/extra/boom', () => {
    throw new Error('boom')
  })
  extra.get('/extra/denied', (ctx) => ctx.throw(401, 'xml_curl credentials are wrong'))
  const config = await exampleConfig()
  const engine = UNAVAILABLE
  const app = createApp({ runtime: () => runtimeOf(config), engine, health: { isConnected: () => true }, logger: silentLogger(), routers: [extra] })
  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let r = await send(`${base}/extra/ping`, {})
  t.equal(r.status, 200)
  t.equal(r.text, 'pong')
  isError(t, await send(`${base}/extra/boom`, {}), 500, 'internal_error')
  r = await send(`${base}/extra/denied`, {})
  isError(t, r, 401, 'unauthorized', 'xml_curl')
  t.equal(r.headers.get('www-authenticate'), null, 'the API challenge is not added to other routers')
  r = await send(`${base}/extra/ping`, { method: 'PUT' })
  isError(t, r, 405, 'method_not_allowed')
  t.equal(r.headers.get('x-request-id')?.length, 36, 'default request ids are UUIDs')
})

t.test('the prefix comes from http.prefix', async (t) => {
  const h = await startApp({ prefix: '/v2' })
  t.teardown(() => h.close())
  const r = await send(`${h.base}/v2/call_user`, {
    method: 'POST',
    headers: { authorization: AUTH_A, 'content-type': 'application/json' },
    body: JSON.stringify(CALL),
  })
  t.equal(r.status, 200)
  isError(t, await post(h, 'call_user', CALL), 404, 'not_found')
})

t.test('the directory is read per request: a reload takes effect at once', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  t.equal((await post(h, 'call_user', { user_name: 'zara', destination: 'yuri' }, AUTH_B)).status, 200)
  h.runtime = runtimeOf(await exampleConfig())
  isError(t, await post(h, 'call_user', { user_name: 'zara', destination: 'yuri' }, AUTH_B), 401, 'unauthorized')
  t.equal((await post(h, 'call_user', CALL)).status, 200)
})

t.test('docs/api.md lists every error id with its status', async (t) => {
  const doc = await readFile('docs/api.md', 'utf8')
  for (const [id, status] of Object.entries(ERROR_STATUS)) {
    t.match(doc, new RegExp(`\\| \`${id}\` \\| ${status} \\|`), `${id} ${status}`)
  }
})

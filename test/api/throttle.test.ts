/**
 * Throttled authentication (src/api/throttle.ts, docs/api.md "Throttled authentication"):
 * after `max_failures` failed authentications within `window_ms`, the client address gets
 * 429 too_many_requests with Retry-After on every route of the listener that compares
 * credentials (API operations, gen_ws_ticket, the ws_cti upgrade), even with valid credentials,
 * while /healthz, /metrics, the OpenAPI document and /ui/ still answer it; other addresses,
 * including valid callers of the same domain, are not slowed; the window expires; memory is
 * bounded. Other addresses are real: connections from 127.0.0.2 (Linux routes all of
 * 127.0.0.0/8 to loopback). The xml_curl listener has a throttle of its own:
 * test/xmlcurl/listener-throttle.test.ts.
 */
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import t from 'tap'
import WebSocket from 'ws'
import { createApp } from '../../src/api/app.js'
import { AuthThrottle, authThrottleMiddleware, clientKey } from '../../src/api/throttle.js'
import { daemonSchema } from '../../src/config/schema.js'
import { createChannelModel } from '../../src/channels/index.js'
import { createCti } from '../../src/cti/index.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { createLogger } from '../../src/util/logger.js'
import { metricsRouter } from '../../src/metrics/index.js'
import { uiRouter } from '../../src/ui/router.js'
import { Registry } from 'prom-client'
import { AUTH_A, DOMAIN_A, FakePbx, basic, domains } from '../cti/helpers.js'
import type { Asserts } from './helpers.js'

const WRONG_A = basic(DOMAIN_A, 'not-the-token-of-example-test')

interface Reply {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

async function startDaemonHttp(t: Asserts) {
  const daemon = daemonSchema.parse({
    freeswitch: { mode: 'simulator' },
    xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' },
    http: { auth_throttle: { max_failures: 10, window_ms: 60_000, max_clients: 16 } },
  })
  const runtime = runtimeOf({ file: 'test.yaml', daemon, domains })
  const ui = uiRouter({ apiPrefix: daemon.http.prefix })
  if (!ui.ok) throw new Error(ui.error)
  const logs: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>)
      cb()
    },
  })
  const logger = createLogger('info', sink)
  const clock = { now: Date.now() }
  const throttle = new AuthThrottle(() => runtime.config.daemon.http.auth_throttle, logger, () => clock.now)
  const pbx = new FakePbx()
  const channels = createChannelModel({ pbx, logger, directory: () => runtime.directory })
  const cti = createCti({ runtime: () => runtime, pbx, channels, logger, throttle })
  const app = createApp({
    runtime: () => runtime,
    engine: { originate: () => Promise.reject(new Error('no call is placed in this test')) },
    health: { isConnected: () => true },
    logger,
    throttle,
    routers: [cti.router],
    // As the daemon mounts them (src/daemon.ts): no credential compared there.
    publicRouters: [metricsRouter({ registry: new Registry(), render: async () => '# no family in this test\n' }), ui.value],
  })
  const server = app.listen(0, '127.0.0.1')
  cti.attach(server)
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const port = (server.address() as AddressInfo).port
  t.teardown(async () => {
    await cti.close()
    channels.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const send = (from: string, method: string, path: string, headers: Record<string, string>, body = ''): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers, localAddress: from, agent: false }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      })
      req.on('error', reject)
      req.end(body)
    })
  const api = (from: string, auth: string) =>
    send(from, 'POST', '/api/call_user', { authorization: auth, 'content-type': 'application/json' }, '{}')
  const ticket = (from: string, auth: string) =>
    send(from, 'POST', '/api/gen_ws_ticket', { authorization: auth, 'content-type': 'application/json' }, JSON.stringify({ uri: '/api/ws_cti?app_name=crm&user_name=alice' }))
  const upgrade = (from: string, headers: Record<string, string>): Promise<{ status: number; retryAfter: string | undefined; opened: boolean }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/api/ws_cti?app_name=crm&user_name=alice`, { headers, localAddress: from })
      ws.once('open', () => {
        ws.close()
        resolve({ status: 101, retryAfter: undefined, opened: true })
      })
      ws.once('unexpected-response', (_req, res) => {
        const retryAfter = res.headers['retry-after']
        res.resume()
        res.on('end', () => {
          ws.terminate()
          resolve({ status: res.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined, opened: false })
        })
      })
      ws.once('error', reject)
    })
  const get = (from: string, path: string) => send(from, 'GET', path, {})
  return { api, ticket, upgrade, get, send, clock, throttle, logs }
}

const errorIdOf = (r: Reply): unknown => (JSON.parse(r.body) as { error?: { id?: unknown } }).error?.id

t.test('10 wrong tokens: 429 with Retry-After on every route, other addresses unaffected, the window expires', async (t) => {
  const h = await startDaemonHttp(t)
  const attacker = '127.0.0.2'
  const valid = '127.0.0.1'
  for (let i = 0; i < 10; i++) {
    const r = i % 2 === 0 ? await h.api(attacker, WRONG_A) : await h.ticket(attacker, WRONG_A)
    t.equal(r.status, 401, `failure ${i + 1} is still a 401`)
  }
  // Now blocked: before any credential is compared, so even the right token gets 429.
  for (const [name, r] of [
    ['API with a valid token', await h.api(attacker, AUTH_A)],
    ['gen_ws_ticket with a valid token', await h.ticket(attacker, AUTH_A)],
  ] as const) {
    t.equal(r.status, 429, name)
    t.equal(errorIdOf(r), 'too_many_requests', name)
    const retryAfter = Number(r.headers['retry-after'])
    t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `${name}: Retry-After ${String(r.headers['retry-after'])}`)
  }
  const ws = await h.upgrade(attacker, { authorization: AUTH_A })
  t.same({ status: ws.status, opened: ws.opened }, { status: 429, opened: false }, 'ws_cti: an HTTP 429 instead of the upgrade')
  t.ok(Number(ws.retryAfter) >= 1, 'ws_cti: Retry-After')

  // Another address, the same domain's valid caller: not slowed.
  t.equal((await h.api(valid, AUTH_A)).status, 400, 'a valid caller elsewhere reaches validation (the empty body is refused)')
  t.equal((await h.ticket(valid, AUTH_A)).status, 200, 'gen_ws_ticket elsewhere')
  t.equal((await h.upgrade(valid, { authorization: AUTH_A })).status, 101, 'ws_cti elsewhere')
  t.ok(
    h.logs.some((l) => l.msg === 'auth throttle: client blocked after repeated failed authentications' && l.client === attacker),
    'the block is logged with the client',
  )

  // The window ends: the attacker may try again (and is counted afresh).
  h.clock.now += 60_000
  t.equal((await h.api(attacker, AUTH_A)).status, 400, 'after the window the valid token works from there again')
})

t.test('a blocked address is still monitored: /healthz, /metrics, the OpenAPI document and /ui/ answer it; every credential route stays 429', async (t) => {
  const h = await startDaemonHttp(t)
  const blocked = '127.0.0.4'
  for (let i = 0; i < 10; i++) t.equal((await h.api(blocked, WRONG_A)).status, 401)
  t.equal((await h.api(blocked, AUTH_A)).status, 429, 'blocked')
  for (const path of ['/healthz', '/metrics', '/api/openapi.json', '/ui/', '/ui/app.js']) {
    const r = await h.get(blocked, path)
    t.equal(r.status, 200, `${path}: 200 (${r.body.slice(0, 80)})`)
    t.equal(r.headers['retry-after'], undefined, `${path}: no Retry-After`)
  }
  // Every route that compares credentials still refuses before comparing them, even a valid token.
  t.equal((await h.api(blocked, AUTH_A)).status, 429, 'API operation')
  t.equal((await h.ticket(blocked, AUTH_A)).status, 429, 'gen_ws_ticket')
  t.equal((await h.upgrade(blocked, { authorization: AUTH_A })).status, 429, 'ws_cti upgrade')
  // Unknown paths too: only the listed routes are open (a route added later is throttled until listed).
  t.equal((await h.get(blocked, '/api/not-a-route')).status, 429, 'an unknown path')
  t.equal((await h.send(blocked, 'POST', '/healthz', {})).status, 429, 'a public path with a method it does not answer')
})

t.test('failures on the WebSocket upgrade count too', async (t) => {
  const h = await startDaemonHttp(t)
  const from = '127.0.0.3'
  for (let i = 0; i < 5; i++) t.equal((await h.upgrade(from, { authorization: WRONG_A })).status, 401)
  for (let i = 0; i < 4; i++) t.equal((await h.ticket(from, WRONG_A)).status, 401)
  t.equal((await h.upgrade(from, {})).status, 401, 'no credentials: the 10th failure')
  t.equal((await h.api(from, AUTH_A)).status, 429, 'blocked on the API')
})

t.test('per-domain failures from many addresses are logged, never refused', async (t) => {
  const h = await startDaemonHttp(t)
  for (let i = 0; i < 10; i++) t.equal((await h.api(`127.0.1.${i + 1}`, WRONG_A)).status, 401)
  t.ok(h.logs.some((l) => l.msg === 'auth throttle: many failed authentications for one domain' && l.domain === DOMAIN_A), 'the domain figure is logged')
  t.equal((await h.api('127.0.1.100', AUTH_A)).status, 400, 'the domain still works from a fresh address')
  t.equal((await h.api('127.0.1.1', AUTH_A)).status, 400, 'and from an address with one failure')
})

t.test('the tables are bounded LRUs; keys by address', async (t) => {
  let now = 0
  const settings = { max_failures: 3, window_ms: 1000, max_clients: 16 }
  const logger = createLogger('silent')
  const throttle = new AuthThrottle(() => settings, logger, () => now)
  for (let i = 0; i < 3; i++) throttle.failed('192.0.2.1', 'example.test')
  t.match(throttle.blocked('192.0.2.1'), { retryAfterSec: 1, error: { id: 'too_many_requests' } })
  t.equal(throttle.blocked('192.0.2.2'), undefined, 'another address')
  now = 500
  t.equal(throttle.blocked('192.0.2.1')?.retryAfterSec, 1, 'Retry-After is at least 1 s')
  for (let i = 0; i < 1000; i++) throttle.failed(`198.51.${i >> 8}.${i & 255}`, `d${i}.test`)
  t.equal(throttle.trackedClients, 16, 'never more than max_clients entries')
  t.equal(throttle.blocked('192.0.2.1'), undefined, 'the oldest entry went first')
  for (let i = 0; i < 3; i++) throttle.failed('192.0.2.9', undefined)
  t.ok(throttle.blocked('192.0.2.9'), 'the newest stays')
  now = 1500
  t.equal(throttle.blocked('192.0.2.9'), undefined, 'its window expired')

  t.equal(clientKey('::ffff:192.0.2.1'), '192.0.2.1', 'IPv4-mapped counts as the IPv4 address')
  t.equal(clientKey('2001:db8:0:1:aaaa::1'), '2001:db8:0:1::/64')
  t.equal(clientKey('2001:db8:0:1:bbbb:cccc:dddd:eeee'), '2001:db8:0:1::/64', 'one /64, one client')
  t.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
  t.equal(clientKey(undefined), 'unknown')
})

t.test('a route that throws its 401 counts as a failure too', async (t) => {
  const logger = createLogger('silent')
  const throttle = new AuthThrottle(() => ({ max_failures: 2, window_ms: 60_000, max_clients: 16 }), logger)
  const middleware = authThrottleMiddleware(throttle, (ctx, e) => {
    ctx.status = 429
    ctx.body = e
  })
  const ctx = { req: { socket: { remoteAddress: '192.0.2.7' } }, headers: {}, status: 404, set: () => undefined }
  for (let i = 0; i < 2; i++) {
    await t.rejects(middleware(ctx as never, () => Promise.reject(Object.assign(new Error('no'), { status: 401 }))))
  }
  t.ok(throttle.blocked('192.0.2.7'), 'blocked after two thrown 401s')
  await middleware(ctx as never, () => Promise.reject(new Error('the route must not run')))
  t.equal(ctx.status, 429, 'answered before the route')
})

t.test('http.auth_throttle: defaults, and every bad value refused', async (t) => {
  const base = { freeswitch: { mode: 'simulator' }, xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' } }
  t.same(daemonSchema.parse(base).http.auth_throttle, { max_failures: 10, window_ms: 60_000, max_clients: 10_000 })
  const bad: Array<Record<string, unknown>> = [
    { max_failures: 0 },
    { max_failures: 2.5 },
    { max_failures: '10' },
    { max_failures: 10_001 },
    { window_ms: 999 },
    { window_ms: 86_400_001 },
    { max_clients: 15 },
    { max_clients: 1_000_001 },
    { trust_forwarded_for: true },
  ]
  for (const auth_throttle of bad) {
    t.notOk(daemonSchema.safeParse({ ...base, http: { auth_throttle } }).success, JSON.stringify(auth_throttle))
  }
})

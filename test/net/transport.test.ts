/**
 * The one outbound transport (src/net/transport.ts) on its own: resolve once and connect to
 * the checked address (DNS rebinding), the connection-level guard failing closed, keep-alive
 * pools per origin, the body cap in both modes, the time cap in every phase, the caller's
 * abort, the allow-list read at each connection (reload), and check() for prompt URLs.
 */
import t from 'tap'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { parseCidrList, type Cidr } from '../../src/net/address-guard.js'
import { guardedConnector, PinTable } from '../../src/net/guarded-connect.js'
import { systemResolver, type OutboundPolicy, type Resolver } from '../../src/net/policy.js'
import { createTransport, type OutboundRequest, type OutboundTransport } from '../../src/net/transport.js'

interface Test {
  teardown(fn: () => unknown): void
}

const cidrs = (...list: string[]): Cidr[] => {
  const r = parseCidrList(list)
  if (!r.ok) throw new Error(r.error)
  return r.value
}
const LOCAL = cidrs('127.0.0.1/32')

interface Served {
  readonly port: number
  readonly seen: Array<{ url: string; localAddress: string; host: string | undefined; remotePort: number }>
  /** TCP connections accepted so far. */
  readonly connections: () => number
}

async function serve(t: Test, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Served> {
  const seen: Served['seen'] = []
  let connections = 0
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', localAddress: req.socket.localAddress ?? '', host: req.headers.host, remotePort: req.socket.remotePort ?? 0 })
    handler(req, res)
  })
  server.on('connection', (_s: Socket) => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { port: (server.address() as AddressInfo).port, seen, connections: () => connections }
}

const hello = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'text/plain' })
  res.end('hello')
}

/** A resolver that answers from a function of the call count, and counts its calls. */
function dns(answer: (host: string, n: number) => string[]): { resolver: Resolver; calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    resolver: (host) => {
      calls.push(host)
      return Promise.resolve(answer(host, calls.length))
    },
  }
}

function transport(t: Test, o: { allow?: () => readonly Cidr[]; resolver?: Resolver } = {}): OutboundTransport {
  const tr = createTransport({ allow: o.allow ?? (() => LOCAL), setting: 'test.allow', ...(o.resolver !== undefined ? { resolver: o.resolver } : {}) })
  t.teardown(() => tr.close())
  return tr
}

const get = (url: string, over: Partial<OutboundRequest> = {}): OutboundRequest => ({
  url: new URL(url),
  method: 'GET',
  headers: {},
  timeoutMs: 2000,
  maxBytes: 1024,
  overflow: 'fail',
  ...over,
})

t.test('DNS rebinding: a lookup that answers an allowed address, then a refused one', async (t) => {
  const s = await serve(t, hello)
  // First answer: the allowed address (the stand-in for "public": the test cannot leave the
  // machine); every later answer: a private one. The name exists nowhere else.
  const d = dns((_h, n) => (n === 1 ? ['127.0.0.1'] : ['10.0.0.1']))
  const tr = transport(t, { resolver: d.resolver })
  const first = await tr.request(get(`http://rebind.example.test:${s.port}/one`))
  t.match(first, { ok: true, value: { status: 200 } })
  t.same(d.calls, ['rebind.example.test'], 'resolved exactly once')
  t.equal(s.seen[0]?.localAddress, '127.0.0.1', 'connected to the checked address')
  t.equal(s.seen[0]?.host, `rebind.example.test:${s.port}`, 'the Host header keeps the name')
  // The next request resolves again and is refused before anything is sent, although a pooled
  // connection to the checked address exists.
  const second = await tr.request(get(`http://rebind.example.test:${s.port}/two`))
  t.match(second, { ok: false, error: { kind: 'refused', reason: 'private', message: /^rebind\.example\.test resolves to 10\.0\.0\.1 is private: not allowed \(operator allow-list: test\.allow\)$/ } })
  t.equal(s.seen.length, 1, 'the refused request never reached the server')
})

t.test('the connection itself is guarded: no pinned address, or one the allow-list no longer takes, connects nowhere', async (t) => {
  const s = await serve(t, hello)
  let allow: readonly Cidr[] = LOCAL
  const policy: OutboundPolicy = { allow: () => allow, setting: 'test.allow', resolver: systemResolver }
  const pins = new PinTable()
  const connect = guardedConnector({ policy, pins, connectTimeoutMs: 1000 })
  const open = (hostname: string) =>
    new Promise<{ error: Error | null; socket: Socket | null }>((resolve) =>
      connect({ hostname, host: `${hostname}:${s.port}`, protocol: 'http:', port: String(s.port) }, (error, socket) => {
        resolve({ error, socket: socket as Socket | null })
      }),
    )
  /** undici's connector calls back once the socket is connected, or with the error that stopped it. */
  const settled = (r: { error: Error | null; socket: Socket | null }): Error | undefined => {
    r.socket?.destroy()
    return r.error ?? undefined
  }
  t.match(settled(await open('nothing-pinned.example.test')), { name: 'OutboundFailure', message: /no checked address/ }, 'fails closed without a pin')
  const release = pins.hold('pinned.example.test', [{ address: '127.0.0.1', family: 4 }])
  t.equal(settled(await open('pinned.example.test')), undefined, 'connects to the pinned address')
  allow = []
  t.match(settled(await open('pinned.example.test')), { name: 'OutboundFailure', message: /127\.0\.0\.1 is loopback/ }, 'checked again at connect time')
  t.match(settled(await open('127.0.0.1')), { name: 'OutboundFailure', message: /127\.0\.0\.1 is loopback/ }, 'an IP literal is checked in connect itself')
  release()
  t.equal(pins.size, 0, 'the pin goes with its last holder')
  t.equal(s.connections(), 1, 'only the allowed connection reached the server')
})

t.test('one keep-alive pool per origin: sequential requests reuse its connections', async (t) => {
  const s = await serve(t, hello)
  const d = dns(() => ['127.0.0.1'])
  const tr = transport(t, { resolver: d.resolver })
  const burst = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) t.match(await tr.request(get(`http://pool.example.test:${s.port}/${i}`)), { ok: true, value: { status: 200 } })
  }
  await burst(3)
  // undici may open a second connection while the first is being released: bounded, then stable.
  const warm = s.connections()
  t.ok(warm >= 1 && warm <= 2, `warm-up opened ${warm} connection(s)`)
  await burst(10)
  t.equal(s.connections(), warm, 'ten more requests, no new connection: the pool is reused')
  t.ok(new Set(s.seen.map((x) => x.remotePort)).size <= 2)
  await Promise.all(Array.from({ length: 6 }, (_, i) => tr.request(get(`http://127.0.0.1:${s.port}/p${i}`))))
  t.ok(s.connections() <= 8, `concurrent requests share a bounded pool (${s.connections()} connections)`)
})

t.test('the body cap: fail past it, or keep the head; Content-Length is believed when too large', async (t) => {
  const s = await serve(t, (req, res) => {
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': '5000' })
      res.end(Buffer.alloc(5000, 0x41))
    } else if (req.url === '/exact') {
      res.end(Buffer.alloc(1024, 0x41))
    } else {
      // Chunked, no Content-Length: the cap must cut the stream.
      res.writeHead(200)
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(512, 0x42))
      res.end()
    }
  })
  const tr = transport(t)
  t.match(await tr.request(get(`http://127.0.0.1:${s.port}/stream`)), { ok: false, error: { kind: 'too_large', message: 'body is larger than 1024 bytes' } })
  t.match(await tr.request(get(`http://127.0.0.1:${s.port}/declared`)), { ok: false, error: { kind: 'too_large', message: 'body of 5000 bytes is larger than 1024 bytes' } })
  const exact = await tr.request(get(`http://127.0.0.1:${s.port}/exact`))
  t.ok(exact.ok && exact.value.body.length === 1024 && !exact.value.truncated, 'exactly the cap is accepted')
  const head = await tr.request(get(`http://127.0.0.1:${s.port}/stream`, { overflow: 'truncate', maxBytes: 700 }))
  t.ok(head.ok && head.value.truncated && head.value.body.length === 700, 'truncate keeps the first maxBytes')
  const declaredHead = await tr.request(get(`http://127.0.0.1:${s.port}/declared`, { overflow: 'truncate', maxBytes: 10 }))
  t.ok(declaredHead.ok && declaredHead.value.body.toString() === 'AAAAAAAAAA', 'truncate also with a declared length')
})

t.test('the time cap ends the request in every phase; the caller can abort it', async (t) => {
  const s = await serve(t, (req, res) => {
    if (req.url === '/half') {
      res.writeHead(200)
      res.write('partial')
    }
    // otherwise never answer
  })
  const tr = transport(t, { resolver: (host) => (host === 'hang.example.test' ? new Promise<string[]>(() => undefined) : Promise.resolve(['127.0.0.1'])) })
  t.match(await tr.request(get(`http://hang.example.test:${s.port}/`, { timeoutMs: 100 })), {
    ok: false,
    error: { kind: 'timeout', phase: 'resolving', message: 'no answer within 100 ms (resolving hang.example.test)' },
  })
  t.match(await tr.request(get(`http://fine.example.test:${s.port}/hang`, { timeoutMs: 100 })), {
    ok: false,
    error: { kind: 'timeout', phase: 'answer', message: 'no complete answer within 100 ms' },
  })
  t.match(await tr.request(get(`http://fine.example.test:${s.port}/half`, { timeoutMs: 100 })), { ok: false, error: { kind: 'timeout', phase: 'answer' } }, 'a body that never ends')
  const stop = new AbortController()
  setTimeout(() => stop.abort(), 50)
  t.match(await tr.request(get(`http://fine.example.test:${s.port}/hang`, { signal: stop.signal })), { ok: false, error: { kind: 'aborted' } })
  const already = new AbortController()
  already.abort()
  t.match(await tr.request(get(`http://fine.example.test:${s.port}/`, { signal: already.signal })), { ok: false, error: { kind: 'aborted' } })
})

t.test('the allow-list is read at each request: a reload applies at once', async (t) => {
  const s = await serve(t, hello)
  let allow: readonly Cidr[] = []
  const tr = transport(t, { allow: () => allow })
  t.match(await tr.request(get(`http://127.0.0.1:${s.port}/`)), { ok: false, error: { kind: 'refused', reason: 'loopback' } })
  allow = LOCAL
  t.match(await tr.request(get(`http://127.0.0.1:${s.port}/`)), { ok: true })
  t.equal(s.seen.length, 1)
})

t.test('network failures, a resolver that fails or throws, and POST bodies', async (t) => {
  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const tr = transport(t, {
    resolver: (host) => {
      if (host === 'throws.example.test') throw new Error('resolver exploded')
      if (host === 'empty.example.test') return Promise.resolve([])
      return Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }))
    },
  })
  t.match(await tr.request(get(`http://127.0.0.1:${port}/`)), { ok: false, error: { kind: 'network', message: /ECONNREFUSED/ } })
  t.match(await tr.request(get('http://missing.example.test/')), { ok: false, error: { kind: 'dns', message: 'cannot resolve missing.example.test: ENOTFOUND' } })
  t.match(await tr.request(get('http://empty.example.test/')), { ok: false, error: { kind: 'dns', message: 'cannot resolve empty.example.test: no address' } })
  t.match(await tr.request(get('http://throws.example.test/')), { ok: false, error: { kind: 'dns', message: /resolver exploded/ } })
  const echo = await serve(t, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(201, { 'x-got': `${req.method} ${req.headers['content-type']} ${req.headers['accept-encoding']}` })
      res.end(Buffer.concat(chunks))
    })
  })
  const r = await tr.request(get(`http://127.0.0.1:${echo.port}/`, { method: 'POST', body: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } }))
  t.match(r, { ok: true, value: { status: 201, statusText: 'Created', headers: { 'x-got': 'POST application/x-www-form-urlencoded identity' } } })
  t.equal(r.ok ? r.value.body.toString() : '', 'a=1&b=2')
})

t.test('check(): the policy without a request (prompt URLs FreeSWITCH downloads)', async (t) => {
  const tr = transport(t, { resolver: (host) => Promise.resolve(host === 'media.example.test' ? ['93.184.216.34'] : ['192.168.0.4']) })
  t.match(await tr.check('http://media.example.test/a.wav', 500), { ok: true })
  t.match(await tr.check('http://intranet.example.test/a.wav', 500), { ok: false, error: { kind: 'refused', reason: 'private' } })
  t.match(await tr.check('http://[::ffff:169.254.169.254]/latest', 500), { ok: false, error: { kind: 'refused', reason: 'metadata' } })
  t.match(await tr.check('http://127.0.0.1/a.wav', 500), { ok: true }, 'allowed by the list')
  t.match(await tr.check('file:///etc/passwd', 500), { ok: false, error: { kind: 'bad_url' } })
  const slow = transport(t, { resolver: () => new Promise<string[]>(() => undefined) })
  t.match(await slow.check('http://slow.example.test/', 50), { ok: false, error: { kind: 'timeout', message: /resolving slow\.example\.test/ } })
})

t.test("many requests sharing the caller's signal (the dispatcher's shutdown) add no listeners to it", async (t) => {
  const s = await serve(t, hello)
  const tr = transport(t)
  const shared = new AbortController()
  const warnings: string[] = []
  const onWarning = (w: Error): void => {
    warnings.push(w.name)
  }
  process.on('warning', onWarning)
  t.teardown(() => process.off('warning', onWarning))
  const all = await Promise.all(Array.from({ length: 30 }, (_, i) => tr.request(get(`http://127.0.0.1:${s.port}/${i}`, { signal: shared.signal }))))
  t.ok(all.every((r) => r.ok))
  await new Promise((resolve) => setImmediate(resolve))
  t.same(warnings, [], 'no MaxListenersExceededWarning')
})

/** What a signal holds for the signals made from it by AbortSignal.any (Node's kDependantSignals set), 0 when none. */
function dependants(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find((k) => k.description === 'kDependantSignals')
  const set = key === undefined ? undefined : (signal as unknown as Record<symbol, Set<unknown> | undefined>)[key]
  return set?.size ?? 0
}

t.test("the caller's shared signal keeps nothing of the requests that ended, and still stops those in flight (issue 32)", async (t) => {
  const s = await serve(t, (req, res) => {
    if (req.url === '/hang') return // never answered
    hello(req, res)
  })
  const tr = transport(t)
  // The probe works on this Node: a signal made with AbortSignal.any is seen in its source (else
  // the check below could not fail).
  const control = new AbortController()
  const made = AbortSignal.any([control.signal])
  t.equal(dependants(control.signal), 1, `the probe sees AbortSignal.any's trace (${String(made.aborted)})`)
  const shared = new AbortController()
  const all = await Promise.all(Array.from({ length: 200 }, (_, i) => tr.request(get(`http://127.0.0.1:${s.port}/${i}`, { signal: shared.signal }))))
  t.ok(all.every((r) => r.ok))
  // With AbortSignal.any([own, shared]) Node 20 kept one WeakRef per request here, for the shared signal's life.
  t.equal(dependants(shared.signal), 0, 'no trace of the 200 requests in the shared signal')
  const hanging = Array.from({ length: 12 }, () => tr.request(get(`http://127.0.0.1:${s.port}/hang`, { signal: shared.signal, timeoutMs: 5000 })))
  setTimeout(() => shared.abort(), 50)
  for (const r of await Promise.all(hanging)) t.match(r, { ok: false, error: { kind: 'aborted' } })
})

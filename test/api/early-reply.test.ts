/**
 * A reply sent before the request's body was read (401 before the body, 413 over
 * http.body_limit, 415, 400 for a body that is not JSON, 429 of the throttle...) must not spoil
 * the client's connection: the next request on it (Node's fetch, undici's pool of one
 * connection) succeeds at once. Before: the 413's connection was kept alive with the rest of
 * the body unread, and the next request on it was reset about 6 s later (ECONNRESET).
 */
import t from 'tap'
import { Agent, fetch } from 'undici'
import { AUTH_A, startApp } from './helpers.js'

const CALL = { user_name: 'alice', destination: '0311112222' }
/** Each next request must be answered long before Node's 5 s keep-alive timeout could reset it. */
const PROMPT_MS = 2000

interface Early {
  readonly name: string
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: () => string | ReadableStream<Uint8Array>
}

// Far more than the socket buffers hold: the reply comes while the client is still sending.
const big = JSON.stringify({ ...CALL, calling_name: 'x'.repeat(2_000_000) })
const json = { 'content-type': 'application/json' }

const CASES: readonly Early[] = [
  { name: '413 (Content-Length over the limit)', status: 413, headers: { ...json, authorization: AUTH_A }, body: () => big },
  {
    name: '413 (chunked, over the limit while read)',
    status: 413,
    headers: { ...json, authorization: AUTH_A },
    body: () =>
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(big.slice(0, 1000)))
          c.enqueue(new TextEncoder().encode(big.slice(1000)))
          c.close()
        },
      }),
  },
  { name: '415 (not JSON)', status: 415, headers: { 'content-type': 'text/plain', authorization: AUTH_A }, body: () => 'x'.repeat(2_000_000) },
  { name: '401 (no credentials: the body is never read)', status: 401, headers: json, body: () => big },
  { name: '400 (a body that is not JSON)', status: 400, headers: { ...json, authorization: AUTH_A }, body: () => `{"user_name": ${'x'.repeat(500)}` },
]

for (const c of CASES) {
  t.test(`after a ${c.name}, the next request on the same connection succeeds at once`, async (t) => {
    const h = await startApp({ bodyLimit: 1024 })
    t.teardown(() => h.close())
    const dispatcher = new Agent({ connections: 1, pipelining: 1 })
    t.teardown(() => dispatcher.close())
    const url = `${h.base}/api/call_user`
    const body = c.body()
    const early = await fetch(url, { method: 'POST', headers: c.headers, body, dispatcher, ...(typeof body === 'string' ? {} : { duplex: 'half' }) })
    await early.arrayBuffer()
    t.equal(early.status, c.status, c.name)
    const start = Date.now()
    const next = await fetch(url, { method: 'POST', headers: { ...json, authorization: AUTH_A }, body: JSON.stringify(CALL), dispatcher })
    await next.arrayBuffer()
    t.equal(next.status, 200, 'the next request is placed')
    t.ok(Date.now() - start < PROMPT_MS, `promptly (${Date.now() - start} ms)`)
  })
}

t.test('a reply after the whole body was read, or to a request without one, keeps the connection alive', async (t) => {
  const h = await startApp({ bodyLimit: 1024 })
  t.teardown(() => h.close())
  const r = await fetch(`${h.base}/api/call_user`, { method: 'POST', headers: { ...json, authorization: AUTH_A }, body: JSON.stringify(CALL) })
  await r.arrayBuffer()
  t.equal(r.status, 200)
  t.not(r.headers.get('connection'), 'close')
  const health = await fetch(`${h.base}/healthz`)
  await health.arrayBuffer()
  t.equal(health.status, 200)
  t.not(health.headers.get('connection'), 'close', 'nor a request without a body')
})

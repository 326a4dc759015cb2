import t from 'tap'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { CallbackDispatcher } from '../../src/callbacks/dispatcher.js'
import { verifySignature } from '../../src/callbacks/body.js'
import type { CallResult, CallbackSettings } from '../../src/callbacks/types.js'
import { nullJournal } from '../../src/journal/index.js'
import { withFakeClock, type FakeClock } from '../support/fake-clock.js'
import { flush } from '../support/wait.js'
import {
  attemptClock,
  captureLogs,
  giveUpAfter,
  ERROR,
  fastSettings,
  ok200,
  receiver,
  status,
  until,
  UUID_RE,
  WARN,
  type Handler,
} from './helpers.js'

const ANSWERED: CallResult = { result_code: 0, uuid: '0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b' }
const BUSY: CallResult = { result_code: 500, error: { id: 'busy', cause: 'USER_BUSY' } }
const SECRET = 'a-signing-secret-of-enough-length'

const make = (settings: CallbackSettings, extra: Partial<ConstructorParameters<typeof CallbackDispatcher>[0]> = {}) => {
  const logs = captureLogs()
  // The disabled journal: these tests are about attempts; test/callbacks/journal.test.ts about durability.
  const d = new CallbackDispatcher({ settings: () => settings, secretFor: () => undefined, journal: nullJournal(), logger: logs.logger, ...extra })
  return { d, lines: logs.lines }
}

/**
 * On the fake clock (test/support/fake-clock.ts): retries and backoffs are timers that fire as
 * time is advanced, and "no extra attempt" is proved by advancing a minute. Time moves only while
 * no attempt is in flight on the real socket, so no request times out under it.
 */
const onClock = (clock: FakeClock, d: CallbackDispatcher) => {
  const idle = () => d.stats().inFlight === 0
  return {
    until: (cond: () => boolean, what: string) => clock.runUntil(what, cond, idle),
    /** A minute passes: any attempt scheduled in it is made and finished. */
    aMinuteLater: () => clock.advanceIdle(60_000, idle),
  }
}

t.test('delivered at the first attempt: exact body and headers, no signature without a secret', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const { d } = make(fastSettings())
  d.deliver('example.test', r.url, ANSWERED, { requestId: 'req-1' })
  d.deliver('example.test', r.url, BUSY, { requestId: 'req-2' })
  await until(() => d.stats().delivered === 2, 'two deliveries')
  t.equal(r.received.length, 2)
  const byReq = new Map(r.received.map((x) => [x.headers['x-request-id'], x]))
  const a = byReq.get('req-1')
  const b = byReq.get('req-2')
  t.equal(a?.body, '{"result_code":0,"uuid":"0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b"}')
  t.equal(b?.body, '{"result_code":500,"error":{"id":"busy","cause":"USER_BUSY"}}')
  t.equal(a?.headers['content-type'], 'application/json')
  t.match(a?.headers['user-agent'], /^fs-call-originator\//)
  t.match(a?.headers['x-delivery-id'], UUID_RE)
  t.not(a?.headers['x-delivery-id'], b?.headers['x-delivery-id'], 'one delivery id per result')
  t.equal(a?.headers['x-delivery-attempt'], '1')
  t.equal(a?.headers['x-signature'], undefined, 'no secret: no signature header')
  t.same(d.stats(), { pending: 0, inFlight: 0, delivered: 2, failed: 0, spooled: 0, deadLetters: 0 })
  await d.shutdown(0)
})

t.test('an empty secret does not sign either', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const { d } = make(fastSettings(), { secretFor: () => '' })
  d.deliver('example.test', r.url, ANSWERED, { requestId: 'req-1' })
  await until(() => d.stats().delivered === 1, 'delivery')
  t.equal(r.received[0]?.headers['x-signature'], undefined)
  await d.shutdown(0)
})

t.test('only the interface fields are sent, whatever the object carries', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const { d } = make(fastSettings())
  const leaky = { result_code: 0, uuid: 'u-1', internal: 'secret-state', legs: [1, 2] } as unknown as CallResult
  d.deliver('example.test', r.url, leaky, { requestId: 'req-1' })
  await until(() => d.stats().delivered === 1, 'delivery')
  t.equal(r.received[0]?.body, '{"result_code":0,"uuid":"u-1"}')
  await d.shutdown(0)
})

t.test('500, then a reset connection, then 200: one accepted delivery, one delivery id on every attempt', async (t) => {
  const handler: Handler = (req, res, _body, n) => {
    if (n === 1) return status(500)(req, res, '', n)
    if (n === 2) return void req.socket.destroy()
    ok200(req, res, '', n)
  }
  const r = await receiver(handler)
  t.teardown(r.close)
  const { d, lines } = await withFakeClock(async (clock) => {
    const m = make(fastSettings())
    const c = onClock(clock, m.d)
    m.d.deliver('example.test', r.url, BUSY, { requestId: 'req-9' })
    await c.until(() => m.d.stats().delivered === 1, 'delivery')
    await c.aMinuteLater() // a wrongly scheduled extra attempt would be made in it
    return m
  })
  t.equal(r.received.length, 3, 'three attempts, no more')
  const ids = new Set(r.received.map((x) => x.headers['x-delivery-id']))
  t.equal(ids.size, 1, 'same X-Delivery-Id on every attempt')
  t.same(
    r.received.map((x) => x.headers['x-delivery-attempt']),
    ['1', '2', '3'],
  )
  t.same(new Set(r.received.map((x) => x.body)).size, 1, 'same body bytes on every attempt')
  t.same(new Set(r.received.map((x) => x.headers['x-request-id'])), new Set(['req-9']))
  t.same(d.stats(), { pending: 0, inFlight: 0, delivered: 1, failed: 0, spooled: 0, deadLetters: 0 })
  const retries = lines.filter((l) => l.level === WARN && l.msg.startsWith('callback attempt failed'))
  t.equal(retries.length, 2)
  t.match(String(retries[0]?.reason), /HTTP 500/)
  await d.shutdown(0)
})

t.test('4xx is not retried; the result stays in the error log', async (t) => {
  const r = await receiver(status(404))
  t.teardown(r.close)
  const { d, lines } = await withFakeClock(async (clock) => {
    const m = make(fastSettings())
    const c = onClock(clock, m.d)
    m.d.deliver('example.test', r.url, BUSY, { requestId: 'req-4' })
    await c.until(() => m.d.stats().failed === 1, 'final failure')
    await c.aMinuteLater()
    return m
  })
  t.equal(r.received.length, 1, 'one attempt only')
  const e = lines.find((l) => l.level === ERROR)
  t.equal(e?.body, '{"result_code":500,"error":{"id":"busy","cause":"USER_BUSY"}}')
  t.match(String(e?.reason), /HTTP 404/)
  await d.shutdown(0)
})

t.test('3xx is a failure without retry, and the redirect is not followed', async (t) => {
  const r = await receiver((req, res, _b, n) => {
    if (req.url === '/cb') return status(307, { location: '/elsewhere' })(req, res, '', n)
    ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const { d, lines } = await withFakeClock(async (clock) => {
    const m = make(fastSettings())
    const c = onClock(clock, m.d)
    m.d.deliver('example.test', r.url, ANSWERED, { requestId: 'req-3' })
    await c.until(() => m.d.stats().failed === 1, 'final failure')
    await c.aMinuteLater()
    return m
  })
  t.same(
    r.received.map((x) => x.path),
    ['/cb'],
  )
  t.match(String(lines.find((l) => l.level === ERROR)?.reason), /307 \(redirects are not followed\)/)
  await d.shutdown(0)
})

t.test('a hanging receiver: each attempt is aborted at timeout_ms and its connection closed', async (t) => {
  // Requests whose connection is still open (the receiver never answers any of them).
  let hanging = 0
  const hangingAtArrival: number[] = []
  const r = await receiver((req) => {
    hangingAtArrival.push(hanging)
    hanging++
    req.socket.on('close', () => hanging--)
  })
  t.teardown(r.close)
  const { d, lines } = make(fastSettings({ timeout_ms: 150, give_up_after_ms: giveUpAfter(3), backoff_initial_ms: 100, backoff_max_ms: 100 }), {
    now: attemptClock(r.received),
  })
  d.deliver('example.test', r.url, ANSWERED, { requestId: 'req-h' })
  await until(() => d.stats().failed === 1, 'final failure', 5000)
  t.equal(r.received.length, 3, 'attempts until the give-up time')
  await until(() => hanging === 0, 'aborted connections closed', 2000)
  t.same(hangingAtArrival, [0, 0, 0], 'each attempt found the previous one closed: no pile-up of open sockets')
  const e = lines.find((l) => l.level === ERROR)
  t.equal(e?.reason, 'timeout (still failing after 3 attempts, past the give-up time)')
  t.equal(e?.body, '{"result_code":0,"uuid":"0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b"}')
  await d.shutdown(0)
})

t.test('a connection refused is retried until the give-up time, then logged with the body', async (t) => {
  const r = await receiver(ok200)
  const deadUrl = r.url
  await r.close() // nothing listens there any more
  // Nothing counts attempts on a closed port: the clock jumps 10 s per retry logged instead.
  let retries = (): number => 0
  const { d, lines } = make(fastSettings({ give_up_after_ms: 15_000 }), { now: () => Date.now() + 10_000 * retries() })
  retries = () => lines.filter((l) => l.msg.startsWith('callback attempt failed')).length
  d.deliver('example.test', deadUrl, BUSY, { requestId: 'req-dead' })
  await until(() => d.stats().failed === 1, 'final failure')
  t.equal(lines.filter((l) => l.msg.startsWith('callback attempt failed')).length, 2)
  const e = lines.find((l) => l.level === ERROR)
  t.equal(e?.attempts, 3)
  t.equal(e?.body, '{"result_code":500,"error":{"id":"busy","cause":"USER_BUSY"}}')
  await d.shutdown(0)
})

t.test('retries go by time: 5xx is retried until give_up_after_ms, then never again', async (t) => {
  const r = await receiver(status(503))
  t.teardown(r.close)
  const { d } = await withFakeClock(async (clock) => {
    const m = make(fastSettings({ give_up_after_ms: giveUpAfter(3) }), { now: attemptClock(r.received) })
    const c = onClock(clock, m.d)
    m.d.deliver('example.test', r.url, ANSWERED, { requestId: 'req-m' })
    await c.until(() => m.d.stats().failed === 1, 'final failure')
    await c.aMinuteLater() // far more than backoff_max_ms: a fourth attempt would come in it
    return m
  })
  t.equal(r.received.length, 3)
  t.same(d.stats(), { pending: 0, inFlight: 0, delivered: 0, failed: 1, spooled: 0, deadLetters: 0 })
  await d.shutdown(0)
})

t.test('signature: verifies with the documented procedure, per-attempt timestamp, fails with a wrong secret', async (t) => {
  const r = await receiver((req, res, _b, n) => (n === 1 ? status(500) : ok200)(req, res, '', n))
  t.teardown(r.close)
  // The clock moves on once the receiver has seen the first attempt.
  const { d } = make(fastSettings(), {
    secretFor: (domain) => (domain === 'example.test' ? SECRET : undefined),
    now: () => (r.received.length === 0 ? 1_700_000_000_000 : 1_700_000_007_500),
  })
  d.deliver('example.test', r.url, BUSY, { requestId: 'req-s' })
  await until(() => d.stats().delivered === 1, 'delivery')
  t.equal(r.received.length, 2)
  const stamps: string[] = []
  for (const rec of r.received) {
    const header = String(rec.headers['x-signature'])
    // The procedure of docs/callbacks.md, written out independently of src/.
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)
    if (m === null) {
      t.fail(`bad header ${header}`)
      continue
    }
    const [, ts, v1] = m as unknown as [string, string, string]
    stamps.push(ts)
    const expected = createHmac('sha256', SECRET).update(`${ts}.${rec.body}`).digest()
    t.ok(timingSafeEqual(expected, Buffer.from(v1, 'hex')), 'documented procedure verifies')
    const wrong = createHmac('sha256', 'another-secret-of-enough-len').update(`${ts}.${rec.body}`).digest()
    t.notOk(timingSafeEqual(wrong, Buffer.from(v1, 'hex')), 'a wrong secret does not verify')
    t.ok(verifySignature(SECRET, header, rec.body, { nowSec: Number(ts) }))
    t.notOk(verifySignature('another-secret-of-enough-len', header, rec.body, { nowSec: Number(ts) }))
    t.notOk(verifySignature(SECRET, header, rec.body.replace('busy', 'no_answer'), { nowSec: Number(ts) }), 'tampered body')
    t.notOk(verifySignature(SECRET, header, rec.body, { nowSec: Number(ts) + 301 }), 'stale timestamp')
  }
  t.same(stamps, ['1700000000', '1700000007'], 'each attempt signs with its own timestamp')
  t.equal(r.received[0]?.body, r.received[1]?.body)
  await d.shutdown(0)
})

t.test('a dead receiver of domain A does not delay domain B', async (t) => {
  const dead = await receiver(() => {
    /* hangs */
  })
  const alive = await receiver(ok200)
  t.teardown(dead.close)
  t.teardown(alive.close)
  const { d, lines } = make(fastSettings({ concurrency_per_domain: 1, timeout_ms: 10_000 }))
  for (let i = 0; i < 3; i++) d.deliver('a.test', dead.url, ANSWERED, { requestId: `a-${i}` })
  await until(() => dead.received.length === 1, 'A in flight')
  d.deliver('b.test', alive.url, BUSY, { requestId: 'b-1' })
  await until(() => d.stats().delivered === 1, 'B delivered')
  t.equal(alive.received.length, 1)
  t.equal(dead.received.length, 1, "A's first attempt still hangs while B is delivered")
  t.same(d.stats(), { pending: 2, inFlight: 1, delivered: 1, failed: 0, spooled: 0, deadLetters: 0 })
  // What is left stays in the journal, and is logged with its body too.
  const res = await d.shutdown(0)
  t.same(res, { delivered: 0, spooled: 3 })
  const lost = lines.filter((l) => l.level === WARN && l.msg.startsWith('callback left pending'))
  t.same(lost.map((l) => l.request_id).sort(), ['a-0', 'a-1', 'a-2'])
  t.ok(lost.every((l) => l.body === '{"result_code":0,"uuid":"0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b"}'))
})

t.test('a delivery waiting for its backoff holds no queue slot', async (t) => {
  const r = await receiver((req, res, _b, n) => (req.url === '/fail' ? status(500) : ok200)(req, res, '', n))
  t.teardown(r.close)
  // random 0: the first retry waits backoff_initial/2 = 1 s, far longer than the rest of the test.
  const { d } = make(fastSettings({ concurrency_per_domain: 1, backoff_initial_ms: 2000, backoff_max_ms: 2000 }), {
    random: () => 0,
  })
  const base = r.url.replace(/\/cb$/, '')
  d.deliver('example.test', `${base}/fail`, ANSWERED, { requestId: 'r-fail' })
  await until(() => r.received.length === 1, 'first attempt')
  d.deliver('example.test', `${base}/ok`, BUSY, { requestId: 'r-ok' })
  await until(() => d.stats().delivered === 1, 'second result delivered')
  t.same(
    r.received.map((x) => x.path),
    ['/fail', '/ok'],
    'delivered before the first one retried',
  )
  t.same(d.stats(), { pending: 1, inFlight: 0, delivered: 1, failed: 0, spooled: 0, deadLetters: 0 })
  t.same(await d.shutdown(0), { delivered: 0, spooled: 1 })
})

t.test('concurrency per domain is respected', async (t) => {
  let held: Array<() => void> = []
  let open = 0
  let maxOpen = 0
  const r = await receiver((req, res, _b, n) => {
    open++
    maxOpen = Math.max(maxOpen, open)
    held.push(() => {
      open--
      ok200(req, res, '', n)
    })
  })
  t.teardown(r.close)
  const { d } = make(fastSettings({ concurrency_per_domain: 2 }))
  for (let i = 0; i < 5; i++) d.deliver('example.test', r.url, ANSWERED, { requestId: `c-${i}` })
  await until(() => r.received.length === 2, 'two in flight')
  // A third would be started by now if the limit were not applied (no timer stands before it:
  // the queue starts the next attempt on its own), and the dispatcher would count it in flight.
  await flush(20)
  t.equal(r.received.length, 2)
  t.same(d.stats(), { pending: 3, inFlight: 2, delivered: 0, failed: 0, spooled: 0, deadLetters: 0 })
  while (d.stats().delivered < 5) {
    const release = held
    held = []
    for (const f of release) f()
    await until(() => held.length > 0 || d.stats().delivered === 5, 'the next attempts')
  }
  t.equal(maxOpen, 2)
  t.equal(r.received.length, 5)
  await d.shutdown(0)
})

t.test('a second final result for one request is not sent', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const { d, lines } = await withFakeClock(async (clock) => {
    const m = make(fastSettings())
    const c = onClock(clock, m.d)
    m.d.deliver('example.test', r.url, ANSWERED, { requestId: 'req-dup' })
    m.d.deliver('example.test', r.url, BUSY, { requestId: 'req-dup' })
    m.d.deliver('other.test', r.url, BUSY, { requestId: 'req-dup' }) // another domain's id space
    await c.until(() => m.d.stats().delivered === 2, 'deliveries')
    await c.aMinuteLater()
    return m
  })
  t.equal(r.received.length, 2)
  t.same(r.received.map((x) => x.body).sort(), [
    '{"result_code":0,"uuid":"0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b"}',
    '{"result_code":500,"error":{"id":"busy","cause":"USER_BUSY"}}',
  ])
  const dup = lines.find((l) => l.msg.startsWith('second final result'))
  t.equal(dup?.body, '{"result_code":500,"error":{"id":"busy","cause":"USER_BUSY"}}')
  await d.shutdown(0)
})

t.test('deliver() never throws: bad URLs are logged with the body', async (t) => {
  const { d, lines } = make(fastSettings())
  t.doesNotThrow(() => d.deliver('example.test', 'not a url', ANSWERED, { requestId: 'x-1' }))
  t.doesNotThrow(() => d.deliver('example.test', 'ftp://example.test/cb', ANSWERED, { requestId: 'x-2' }))
  await until(() => d.stats().failed === 2, 'both dead letters')
  t.equal(lines.filter((l) => l.level === ERROR && l.body === '{"result_code":0,"uuid":"0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b"}').length, 2)
  const logs = captureLogs()
  const throwing = new CallbackDispatcher({
    settings: () => {
      throw new Error('config gone')
    },
    secretFor: () => undefined,
    journal: nullJournal(),
    logger: logs.logger,
  })
  t.doesNotThrow(() => throwing.deliver('example.test', 'http://127.0.0.1:9/cb', BUSY, { requestId: 'x-3' }))
  await until(() => throwing.stats().failed === 1, 'dead letter')
  t.same(throwing.stats(), { pending: 0, inFlight: 0, delivered: 0, failed: 1, spooled: 0, deadLetters: 0 }, 'not left half-queued')
  t.equal(logs.lines.find((l) => l.level === ERROR)?.body, '{"result_code":500,"error":{"id":"busy","cause":"USER_BUSY"}}')
  await d.shutdown(0)
})

t.test('user information in the URL becomes Basic auth; it never reaches the logs', async (t) => {
  const r = await receiver(status(500))
  t.teardown(r.close)
  const { d, lines } = make(fastSettings({ give_up_after_ms: giveUpAfter(1) }), { now: attemptClock(r.received) })
  d.deliver('example.test', r.url.replace('http://', 'http://app:p%40ss@') + '?token=abc', ANSWERED, { requestId: 'u-1' })
  await until(() => d.stats().failed === 1, 'final failure')
  t.equal(r.received[0]?.headers['authorization'], `Basic ${Buffer.from('app:p@ss').toString('base64')}`)
  t.equal(r.received[0]?.path, '/cb?token=abc')
  const text = JSON.stringify(lines)
  t.notMatch(text, /p%40ss|p@ss|token=abc/)
  await d.shutdown(0)
})

t.test('a request id unsafe for a header is encoded, not sent raw', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const { d } = make(fastSettings())
  d.deliver('example.test', r.url, ANSWERED, { requestId: 'a b\r\nX-Evil: 1' })
  await until(() => d.stats().delivered === 1, 'delivery')
  t.equal(r.received[0]?.headers['x-request-id'], 'a%20b%0D%0AX-Evil%3A%201')
  t.equal(r.received[0]?.headers['x-evil'], undefined)
  await d.shutdown(0)
})

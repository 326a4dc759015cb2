import t from 'tap'
import { CallbackDispatcher } from '../../src/callbacks/dispatcher.js'
import { backoffDelay, classifyStatus, parseRetryAfter, parseTarget, retryDelay } from '../../src/callbacks/policy.js'
import { nullJournal } from '../../src/journal/index.js'
import { attemptClock, captureLogs, fastSettings, giveUpAfter, ok200, receiver, status, until, WARN } from './helpers.js'

const NOW = Date.parse('2025-01-01T00:00:00Z')

t.test('classifyStatus: 2xx delivered; 429 and 5xx retried; 3xx and other 4xx final', async (t) => {
  for (const s of [200, 201, 202, 204, 299]) t.equal(classifyStatus(s, null, NOW).kind, 'delivered', String(s))
  for (const s of [429, 500, 502, 503, 504]) t.equal(classifyStatus(s, null, NOW).kind, 'retry', String(s))
  for (const s of [300, 301, 302, 307, 308, 400, 401, 403, 404, 408, 410, 413, 422]) {
    t.equal(classifyStatus(s, null, NOW).kind, 'fatal', String(s))
  }
  t.match(classifyStatus(503, '7', NOW), { kind: 'retry', retryAfterMs: 7000 })
})

t.test('parseRetryAfter: seconds or HTTP-date; anything else ignored', async (t) => {
  t.equal(parseRetryAfter(null, NOW), undefined)
  t.equal(parseRetryAfter('120', NOW), 120_000)
  t.equal(parseRetryAfter(' 0 ', NOW), 0)
  t.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', NOW), 30_000)
  t.equal(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', NOW), 0, 'a past date means now')
  t.equal(parseRetryAfter('-5', NOW), undefined)
  t.equal(parseRetryAfter('soon', NOW), undefined)
  t.equal(parseRetryAfter('2025-01-01T00:00:30Z', NOW), undefined, 'not an HTTP-date')
})

t.test('backoffDelay grows exponentially, is capped, and jitters within [cap/2, cap]', async (t) => {
  const s = fastSettings({ backoff_initial_ms: 20, backoff_max_ms: 100 })
  t.same(
    [1, 2, 3, 4, 5].map((n) => backoffDelay(n, s, () => 0.5)),
    [15, 30, 60, 75, 75],
  )
  t.same(
    [1, 2, 3, 4].map((n) => backoffDelay(n, s, () => 0)),
    [10, 20, 40, 50],
  )
  t.same(
    [1, 2, 3, 4].map((n) => backoffDelay(n, s, () => 0.999999)),
    [20, 40, 80, 100],
  )
  const big = fastSettings({ backoff_initial_ms: 1000, backoff_max_ms: 60_000 })
  t.equal(backoffDelay(500, big, () => 1), 60_000, 'no overflow for large attempt numbers')
})

t.test('retryDelay honours Retry-After, bounded by backoff_max_ms, never earlier than the backoff', async (t) => {
  const s = fastSettings({ backoff_initial_ms: 100, backoff_max_ms: 5000 })
  t.equal(retryDelay(1, s, () => 0, 2000), 2000)
  t.equal(retryDelay(1, s, () => 0, 3_600_000), 5000, 'bounded')
  t.equal(retryDelay(1, s, () => 0, 0), 50, 'Retry-After: 0 does not make it hammer')
  t.equal(retryDelay(1, s, () => 0), 50)
})

t.test('parseTarget: http(s) only; user information becomes Basic auth; logs get no secrets', async (t) => {
  t.notOk(parseTarget('not a url').ok)
  t.notOk(parseTarget('ftp://h/x').ok)
  t.notOk(parseTarget('javascript:alert(1)').ok)
  const plain = parseTarget('https://h.example/cb?x=1')
  t.same(plain, { ok: true, value: { href: 'https://h.example/cb?x=1', logUrl: 'https://h.example/cb' } })
  const withAuth = parseTarget('https://user:pa%3Ass@h.example/cb')
  t.same(withAuth, {
    ok: true,
    value: {
      href: 'https://h.example/cb',
      authorization: `Basic ${Buffer.from('user:pa:ss').toString('base64')}`,
      logUrl: 'https://h.example/cb',
    },
  })
})

t.test('backoff growth seen end to end with an injected random', async (t) => {
  const r = await receiver(status(500))
  t.teardown(r.close)
  const { logger, lines } = captureLogs()
  const d = new CallbackDispatcher({
    settings: () => fastSettings({ give_up_after_ms: giveUpAfter(5), backoff_initial_ms: 20, backoff_max_ms: 100 }),
    secretFor: () => undefined,
    journal: nullJournal(),
    now: attemptClock(r.received),
    logger,
    random: () => 0.5,
  })
  d.deliver('example.test', r.url, { result_code: 0, uuid: 'u' }, { requestId: 'b-1' })
  await until(() => d.stats().failed === 1, 'final failure')
  const delays = lines.filter((l) => l.level === WARN).map((l) => l.delay_ms)
  t.same(delays, [15, 30, 60, 75], 'doubling from backoff_initial_ms, capped by backoff_max_ms')
  t.equal(r.received.length, 5)
  await d.shutdown(0)
})

t.test('429 is retried and its Retry-After honoured within backoff_max_ms', async (t) => {
  const r = await receiver((req, res, _b, n) => {
    if (n === 1) return status(429, { 'retry-after': '3600' })(req, res, '', n)
    if (n === 2) return status(429)(req, res, '', n)
    ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const { logger, lines } = captureLogs()
  const d = new CallbackDispatcher({
    settings: () => fastSettings({ backoff_initial_ms: 10, backoff_max_ms: 60 }),
    secretFor: () => undefined,
    journal: nullJournal(),
    logger,
    random: () => 0,
  })
  d.deliver('example.test', r.url, { result_code: 0, uuid: 'u' }, { requestId: 'r-429' })
  await until(() => d.stats().delivered === 1, 'delivered after two 429s')
  t.same(
    lines.filter((l) => l.level === WARN).map((l) => l.delay_ms),
    [60, 10],
    'an hour asked, backoff_max_ms given; no Retry-After: plain backoff',
  )
  t.equal(r.received.length, 3)
  await d.shutdown(0)
})

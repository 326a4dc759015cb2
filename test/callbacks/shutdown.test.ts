import t from 'tap'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CallbackDispatcher } from '../../src/callbacks/dispatcher.js'
import type { CallResult, CallbackSettings } from '../../src/callbacks/types.js'
import { captureLogs, ERROR, fastSettings, ok200, receiver, sleep, status, until, type Handler } from './helpers.js'

const result = (i: number): CallResult => ({ result_code: 0, uuid: `00000000-0000-4000-8000-00000000000${i}` })

const make = (settings: CallbackSettings) => {
  const logs = captureLogs()
  const d = new CallbackDispatcher({ settings: () => settings, secretFor: () => 'a-signing-secret-of-enough-length', logger: logs.logger })
  return { d, lines: logs.lines }
}

const spoolLines = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)

t.test('shutdown spools pending deliveries; the next start delivers each exactly once', async (t) => {
  let up = false
  const accepted: string[] = []
  const r = await receiver((req, res, _b, n) => {
    if (!up) return status(503)(req, res, '', n)
    accepted.push(String(req.headers['x-delivery-id']))
    ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const file = join(t.testdir(), 'callbacks.spool')
  // Retries are due long after the shutdown deadline.
  const settings = fastSettings({ spool_file: file, backoff_initial_ms: 10_000, backoff_max_ms: 10_000 })

  const first = make(settings)
  await first.d.start()
  for (let i = 1; i <= 3; i++) first.d.deliver('example.test', r.url, result(i), { requestId: `req-${i}` })
  await until(() => r.received.length === 3, 'first attempts')
  await until(() => first.d.stats().pending === 3, 'waiting for retries')
  t.same(await first.d.shutdown(5000), { delivered: 0, spooled: 3 })
  const spooled = spoolLines(file)
  t.equal(spooled.length, 3)
  const firstIds = r.received.map((x) => String(x.headers['x-delivery-id'])).sort()
  t.same(spooled.map((e) => e.delivery_id).sort(), firstIds, 'delivery ids survive the restart')
  t.ok(spooled.every((e) => e.attempts === 1))

  up = true
  const second = make(settings)
  await second.d.start()
  await until(() => second.d.stats().delivered === 3, 'spooled deliveries delivered')
  await sleep(50)
  t.same(accepted.sort(), firstIds, 'each delivered once, with its original delivery id')
  const bodiesBefore = r.received.slice(0, 3).map((x) => x.body).sort()
  const bodiesAfter = r.received.slice(3).map((x) => x.body).sort()
  t.same(bodiesAfter, bodiesBefore, 'same body bytes after the restart')
  t.same(
    r.received.slice(3).map((x) => x.headers['x-request-id']).sort(),
    ['req-1', 'req-2', 'req-3'],
  )
  t.notOk(existsSync(file), 'spool file removed once everything in it was delivered')
  t.same(await second.d.shutdown(0), { delivered: 0, spooled: 0 })
  t.notOk(existsSync(file))

  const third = make(settings)
  await third.d.start()
  await sleep(50)
  t.equal(r.received.length, 6, 'a third start delivers nothing again')
  t.same(third.d.stats(), { pending: 0, inFlight: 0, delivered: 0, failed: 0, spooled: 0 })
  await third.d.shutdown(0)
})

t.test('an attempt in flight at the deadline is aborted and spooled', async (t) => {
  let closed = 0
  const r = await receiver((req) => req.socket.on('close', () => closed++))
  t.teardown(r.close)
  const file = join(t.testdir(), 'spool')
  const { d } = make(fastSettings({ spool_file: file, timeout_ms: 30_000 }))
  await d.start()
  d.deliver('example.test', r.url, result(1), { requestId: 'req-1' })
  await until(() => r.received.length === 1, 'in flight')
  t.same(await d.shutdown(50), { delivered: 0, spooled: 1 })
  const [e] = spoolLines(file)
  t.equal(e?.delivery_id, r.received[0]?.headers['x-delivery-id'])
  t.equal(e?.attempts, 1)
  t.equal(e?.body, r.received[0]?.body)
  await until(() => closed === 1, 'aborted connection closed')
})

t.test('shutdown waits for retries due before the deadline', async (t) => {
  const r = await receiver((req, res, _b, n) => (n === 1 ? status(500) : ok200)(req, res, '', n))
  t.teardown(r.close)
  const file = join(t.testdir(), 'spool')
  const { d } = make(fastSettings({ spool_file: file, backoff_initial_ms: 20, backoff_max_ms: 20 }))
  await d.start()
  d.deliver('example.test', r.url, result(1), { requestId: 'req-1' })
  await until(() => r.received.length === 1, 'first attempt')
  t.same(await d.shutdown(5000), { delivered: 1, spooled: 0 })
  t.equal(r.received.length, 2)
  t.notOk(existsSync(file))
})

t.test('a result handed over after shutdown is appended to the spool and delivered at the next start', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const file = join(t.testdir(), 'spool')
  const settings = fastSettings({ spool_file: file })
  const first = make(settings)
  await first.d.start()
  await first.d.shutdown(0)
  first.d.deliver('example.test', r.url, result(7), { requestId: 'late' })
  t.equal(spoolLines(file).length, 1)
  t.equal(first.d.stats().spooled, 1)
  t.equal(r.received.length, 0, 'not sent after shutdown')
  const second = make(settings)
  await second.d.start()
  await until(() => second.d.stats().delivered === 1, 'delivered at the next start')
  t.equal(r.received[0]?.body, '{"result_code":0,"uuid":"00000000-0000-4000-8000-000000000007"}')
  await second.d.shutdown(0)
})

t.test('a spool file start() did not read is appended to, never overwritten', async (t) => {
  const r = await receiver(status(503))
  t.teardown(r.close)
  const file = join(t.testdir(), 'spool')
  const earlier = {
    v: 1,
    delivery_id: 'earlier-delivery',
    domain: 'example.test',
    url: r.url,
    request_id: 'earlier',
    body: '{"result_code":0,"uuid":"e"}',
    attempts: 2,
    created_at: 1,
  }
  writeFileSync(file, `${JSON.stringify(earlier)}\n`)
  const { d } = make(fastSettings({ spool_file: file, backoff_initial_ms: 10_000, backoff_max_ms: 10_000 }))
  // start() deliberately not called
  d.deliver('example.test', r.url, result(1), { requestId: 'now' })
  await until(() => r.received.length === 1, 'first attempt')
  t.same(await d.shutdown(0), { delivered: 0, spooled: 1 })
  t.same(
    spoolLines(file).map((e) => e.request_id),
    ['earlier', 'now'],
  )
})

t.test('unreadable spool lines are logged in full; the valid ones are delivered', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const file = join(t.testdir(), 'spool')
  const good = {
    v: 1,
    delivery_id: 'd-1',
    domain: 'example.test',
    url: r.url,
    request_id: 'r-1',
    body: '{"result_code":0,"uuid":"g"}',
    attempts: 1,
    created_at: 1,
  }
  writeFileSync(file, `{not json\n${JSON.stringify({ ...good, v: 2 })}\n${JSON.stringify(good)}\n`)
  const { d, lines } = make(fastSettings({ spool_file: file }))
  await d.start()
  await until(() => d.stats().delivered === 1, 'valid entry delivered')
  t.equal(r.received[0]?.headers['x-delivery-id'], 'd-1')
  const bad = lines.filter((l) => l.level === ERROR && l.msg.startsWith('unreadable spool line'))
  t.same(
    bad.map((l) => String(l.line).slice(0, 9)),
    ['{not json', '{"v":2,"d'],
  )
  await d.shutdown(0)
})

t.test('spool file cannot be written: each result is logged at error level with its body', async (t) => {
  const r = await receiver(status(503))
  t.teardown(r.close)
  const file = join(t.testdir(), 'no-such-dir', 'spool')
  const { d, lines } = make(fastSettings({ spool_file: file, backoff_initial_ms: 10_000, backoff_max_ms: 10_000 }))
  await d.start()
  d.deliver('example.test', r.url, result(1), { requestId: 'a' })
  d.deliver('example.test', r.url, result(2), { requestId: 'b' })
  await until(() => r.received.length === 2, 'first attempts')
  t.same(await d.shutdown(0), { delivered: 0, spooled: 2 })
  const lost = lines.filter((l) => l.level === ERROR && l.msg.includes('not spooled'))
  t.same(lost.map((l) => l.body).sort(), [
    '{"result_code":0,"uuid":"00000000-0000-4000-8000-000000000001"}',
    '{"result_code":0,"uuid":"00000000-0000-4000-8000-000000000002"}',
  ])
})

t.test('shutdown with a receiver that keeps failing ends at the deadline', async (t) => {
  // Fails fast and often: shutdown must not wait for max_attempts, only for its deadline.
  const h: Handler = (req, res, _b, n) => status(500)(req, res, '', n)
  const r = await receiver(h)
  t.teardown(r.close)
  const file = join(t.testdir(), 'spool')
  const { d } = make(fastSettings({ spool_file: file, max_attempts: 20, backoff_initial_ms: 10, backoff_max_ms: 10 }))
  await d.start()
  d.deliver('example.test', r.url, result(1), { requestId: 'a' })
  await until(() => r.received.length >= 1, 'first attempt')
  const res = await d.shutdown(100)
  t.same(res, { delivered: 0, spooled: 1 })
  t.equal(spoolLines(file).length, 1)
  t.ok(r.received.length < 20, 'stopped before max_attempts')
})

t.test('the spool file stays until everything read from it has ended (a crash meanwhile loses nothing)', async (t) => {
  let release: (() => void) | undefined
  const r = await receiver((req, res, _b, n) => {
    release = () => ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const file = join(t.testdir(), 'spool')
  const entry = {
    v: 1,
    delivery_id: 'd-1',
    domain: 'example.test',
    url: r.url,
    request_id: 'r-1',
    body: '{"result_code":0,"uuid":"g"}',
    attempts: 0,
    created_at: 1,
  }
  writeFileSync(file, `${JSON.stringify(entry)}\n`)
  const { d } = make(fastSettings({ spool_file: file }))
  await d.start()
  await until(() => r.received.length === 1, 'in flight')
  t.ok(existsSync(file), 'still there while the delivery is in flight')
  release?.()
  await until(() => d.stats().delivered === 1, 'delivered')
  t.notOk(existsSync(file), 'removed once delivered')
  await d.shutdown(0)
})

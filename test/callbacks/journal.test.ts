/**
 * Durability of result callbacks: each result is in the journal before its first attempt, and a
 * restart (graceful or a crash) delivers what was pending with its original delivery id and body
 * bytes, at its journaled retry time; dead letters stay until redelivered; an older version's
 * spool file is moved into the journal. Real journals in temp folders, a real HTTP receiver.
 */
import t, { type Test } from 'tap'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CallbackDispatcher } from '../../src/callbacks/dispatcher.js'
import type { CallResult, CallbackSettings } from '../../src/callbacks/types.js'
import { openJournal } from '../../src/journal/index.js'
import type { Journal } from '../../src/journal/types.js'
import { withFakeClock } from '../support/fake-clock.js'
import { captureLogs, ERROR, fastSettings, ok200, receiver, status, until, type Handler } from './helpers.js'

const result = (i: number): CallResult => ({ result_code: 0, uuid: `00000000-0000-4000-8000-00000000000${i}` })

async function make(t: Test, dir: string, settings: CallbackSettings, userAgent?: string) {
  const logs = captureLogs()
  const opened = await openJournal({ dir, logger: logs.logger })
  if (!opened.ok) throw new Error(opened.error)
  const journal: Journal = opened.value
  t.teardown(() => journal.close())
  const d = new CallbackDispatcher({
    settings: () => settings,
    secretFor: () => 'a-signing-secret-of-enough-length',
    journal,
    logger: logs.logger,
    ...(userAgent !== undefined ? { userAgent } : {}),
  })
  return { d, journal, lines: logs.lines }
}

/**
 * Starts a dispatcher on `dir` on the fake clock and lets a minute pass (test/support/fake-clock.ts):
 * whatever start() would send, at once or on a retry timer, is sent and finished by then.
 */
const startAndWaitAMinute = (t: Test, dir: string, settings: CallbackSettings) =>
  withFakeClock(async (clock) => {
    const m = await make(t, dir, settings)
    await m.d.start()
    await clock.advanceIdle(60_000, () => m.d.stats().inFlight === 0)
    return m
  })

const segmentText = (dir: string): string =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.log'))
    .map((n) => readFileSync(join(dir, n), 'utf8'))
    .join('')

t.test('each result is durable in the journal before its first attempt', async (t) => {
  const dir = t.testdir()
  const seenOnDisk: boolean[] = []
  const r = await receiver((req, res, _b, n) => {
    seenOnDisk.push(segmentText(dir).includes(String(req.headers['x-delivery-id'])))
    ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const { d } = await make(t, dir, fastSettings())
  await d.start()
  for (let i = 1; i <= 5; i++) d.deliver('example.test', r.url, result(i), { requestId: `req-${i}` })
  await until(() => d.stats().delivered === 5, 'delivered')
  t.same(seenOnDisk, [true, true, true, true, true])
  await d.shutdown(0)
})

t.test('graceful stop: pending results stay in the journal; the next start delivers each once, same id and bytes', async (t) => {
  let up = false
  const accepted: string[] = []
  const r = await receiver((req, res, _b, n) => {
    if (!up) return status(503)(req, res, '', n)
    accepted.push(String(req.headers['x-delivery-id']))
    ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const dir = t.testdir()
  // Retries are due after the shutdown deadline, but soon enough for the next start.
  const settings = fastSettings({ backoff_initial_ms: 1500, backoff_max_ms: 1500 })
  const first = await make(t, dir, settings)
  await first.d.start()
  for (let i = 1; i <= 3; i++) first.d.deliver('example.test', r.url, result(i), { requestId: `req-${i}` })
  await until(() => first.d.stats().pending === 3 && r.received.length === 3, 'waiting for retries')
  t.same(await first.d.shutdown(200), { delivered: 0, spooled: 3 })
  await first.journal.close()
  const firstIds = r.received.map((x) => String(x.headers['x-delivery-id'])).sort()

  up = true
  const second = await make(t, dir, settings)
  t.equal(second.journal.replay().pendingResults.length, 3)
  await second.d.start()
  await until(() => second.d.stats().delivered === 3, 'pending deliveries delivered', 5000)
  t.same(accepted.sort(), firstIds, 'each delivered once, with its original delivery id')
  t.same(r.received.slice(3).map((x) => x.body).sort(), r.received.slice(0, 3).map((x) => x.body).sort(), 'same body bytes')
  t.same(r.received.slice(3).map((x) => x.headers['x-delivery-attempt']), ['2', '2', '2'], 'the attempt count continues')
  t.same(await second.d.shutdown(0), { delivered: 0, spooled: 0 })
  await second.journal.close()

  const third = await startAndWaitAMinute(t, dir, settings)
  t.equal(r.received.length, 6, 'a third start delivers nothing again')
  await third.d.shutdown(0)
})

t.test('a crash (no shutdown at all) loses nothing: the next start delivers every pending result', async (t) => {
  let up = false
  const r = await receiver((req, res, _b, n) => (up ? ok200 : status(503))(req, res, '', n))
  t.teardown(r.close)
  const dir = t.testdir()
  const settings = fastSettings({ backoff_initial_ms: 50, backoff_max_ms: 50 })
  const dead = await make(t, dir, settings)
  await dead.d.start()
  for (let i = 1; i <= 5; i++) dead.d.deliver('example.test', r.url, result(i), { requestId: `req-${i}` })
  await until(() => r.received.length >= 5, 'first attempts')
  const ids = new Set(r.received.map((x) => String(x.headers['x-delivery-id'])))
  // What a SIGKILL leaves on disk: the segment files as written so far (a copy, since the
  // "crashed" dispatcher lives on in this process; its lock would be taken over after a real crash).
  const crashed = `${dir}-after-crash`
  mkdirSync(crashed)
  t.teardown(() => rmSync(crashed, { recursive: true, force: true }))
  for (const n of readdirSync(dir).filter((f) => f.endsWith('.log'))) copyFileSync(join(dir, n), join(crashed, n))
  await dead.d.shutdown(0)
  const after = await make(t, crashed, settings, 'after-the-crash')
  up = true
  await after.d.start()
  await until(() => after.d.stats().delivered === 5, 'delivered after the crash')
  const delivered = r.received.filter((x) => x.headers['user-agent'] === 'after-the-crash').map((x) => String(x.headers['x-delivery-id']))
  t.same(new Set(delivered), ids, 'every result, by the new process, under its original delivery id')
  await after.d.shutdown(0)
})

t.test('an attempt in flight at the deadline is aborted; after the restart it is sent again at once', async (t) => {
  let closed = 0
  let hang = true
  const r = await receiver((req, res, _b, n) => {
    req.socket.on('close', () => closed++)
    if (!hang) ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const dir = t.testdir()
  const settings = fastSettings({ timeout_ms: 30_000, backoff_initial_ms: 60_000, backoff_max_ms: 60_000 })
  const first = await make(t, dir, settings)
  await first.d.start()
  first.d.deliver('example.test', r.url, result(1), { requestId: 'req-1' })
  await until(() => r.received.length === 1, 'in flight')
  t.same(await first.d.shutdown(50), { delivered: 0, spooled: 1 })
  await until(() => closed === 1, 'aborted connection closed')
  await first.journal.close()
  hang = false
  const second = await make(t, dir, settings)
  await second.d.start()
  await until(() => second.d.stats().delivered === 1, 'sent again', 2000)
  t.equal(r.received[1]?.headers['x-delivery-id'], r.received[0]?.headers['x-delivery-id'])
  t.equal(r.received[1]?.body, r.received[0]?.body)
  t.equal(r.received[1]?.headers['x-delivery-attempt'], '2')
  await second.d.shutdown(0)
})

t.test('after a restart the next attempt comes at once, the attempt count goes on', async (t) => {
  const r = await receiver((req, res, _b, n) => (n === 1 ? status(503) : ok200)(req, res, '', n))
  t.teardown(r.close)
  const dir = t.testdir()
  const settings = fastSettings({ backoff_initial_ms: 60_000, backoff_max_ms: 60_000 })
  const first = await make(t, dir, settings)
  await first.d.start()
  first.d.deliver('example.test', r.url, result(1), { requestId: 'req-1' })
  await until(() => first.d.stats().pending === 1 && r.received.length === 1, 'waiting a minute for its retry')
  await first.d.shutdown(0)
  await first.journal.close()
  const second = await make(t, dir, settings)
  await second.d.start()
  await until(() => second.d.stats().delivered === 1, 'retried at once', 2000)
  t.equal(r.received[1]?.headers['x-delivery-attempt'], '2')
  await second.d.shutdown(0)
})

t.test("a receiver's Retry-After survives a restart: the next attempt waits for it", async (t) => {
  const r = await receiver((req, res, _b, n) => (n === 1 ? status(503, { 'retry-after': '1' }) : ok200)(req, res, '', n))
  t.teardown(r.close)
  const dir = t.testdir()
  const settings = fastSettings({ backoff_initial_ms: 10, backoff_max_ms: 5000 })
  const first = await make(t, dir, settings)
  await first.d.start()
  first.d.deliver('example.test', r.url, result(1), { requestId: 'req-1' })
  await until(() => first.d.stats().pending === 1 && r.received.length === 1, 'waiting for its retry')
  const failedAt = Date.now()
  await first.d.shutdown(0)
  await first.journal.close()
  const second = await make(t, dir, settings)
  await second.d.start()
  await until(() => second.d.stats().delivered === 1, 'retried', 4000)
  t.ok(Date.now() - failedAt >= 900, 'Retry-After (1 s) honoured across the restart')
  await second.d.shutdown(0)
})

t.test('a result handed over after shutdown is durable and delivered at the next start', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const dir = t.testdir()
  const first = await make(t, dir, fastSettings())
  await first.d.start()
  await first.d.shutdown(0)
  first.d.deliver('example.test', r.url, result(7), { requestId: 'late' })
  await until(() => first.journal.stats().pendingResults === 1, 'journaled')
  await first.journal.close()
  t.equal(r.received.length, 0)
  const second = await make(t, dir, fastSettings())
  await second.d.start()
  await until(() => second.d.stats().delivered === 1, 'delivered')
  t.equal(r.received[0]?.headers['x-request-id'], 'late')
  await second.d.shutdown(0)
})

t.test('thousands replayed at start: queued a slice at a time, counted as pending; a shutdown before the last slice leaves the rest in the journal, and the next start delivers each once', async (t) => {
  const N = 2500
  let up = false
  const accepted = new Map<string, number>()
  const r = await receiver((req, res, _b, n) => {
    if (!up) return // hangs: the first start's attempts are in flight at its shutdown
    const id = String(req.headers['x-delivery-id'])
    accepted.set(id, (accepted.get(id) ?? 0) + 1)
    ok200(req, res, '', n)
  })
  t.teardown(r.close)
  const dir = t.testdir()
  const writer = await make(t, dir, fastSettings())
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      writer.journal.result({ deliveryId: `delivery-${i}`, requestId: `req-${i}`, domain: 'example.test', url: r.url, body: JSON.stringify(result(1)), createdAt: Date.now() }),
    ),
  )
  await writer.journal.close()

  const first = await make(t, dir, fastSettings())
  await first.d.start()
  t.equal(first.d.stats().pending + first.d.stats().inFlight, N, 'every replayed result counts at once, queued or not yet')
  t.same(await first.d.shutdown(0), { delivered: 0, spooled: N }, 'the slices not queued yet are left in the journal with the rest')
  await first.journal.close()

  up = true
  const second = await make(t, dir, fastSettings({ concurrency_per_domain: 50 }))
  await second.d.start()
  await until(() => second.d.stats().delivered === N, 'all delivered', 20_000)
  t.equal(accepted.size, N, 'each result delivered')
  t.same([...accepted.values()].filter((n) => n !== 1), [], 'and each once')
  t.same(second.d.stats(), { pending: 0, inFlight: 0, delivered: N, failed: 0, spooled: 0, deadLetters: 0 })
  await second.d.shutdown(0)
})

t.test('dead letters: kept in the journal, listed and counted, not sent at start, sent again on demand', async (t) => {
  let accept = false
  const r = await receiver((req, res, _b, n) => (accept ? ok200 : status(404))(req, res, '', n))
  t.teardown(r.close)
  const dir = t.testdir()
  const first = await make(t, dir, fastSettings())
  await first.d.start()
  first.d.deliver('example.test', r.url, result(2), { requestId: 'req-404' })
  await until(() => first.d.stats().failed === 1, 'refused for good')
  const error = first.lines.find((l) => l.level === ERROR)
  t.equal(error?.body, '{"result_code":0,"uuid":"00000000-0000-4000-8000-000000000002"}', 'the result is in the log line')
  await first.d.shutdown(0)
  await first.journal.close()

  const second = await startAndWaitAMinute(t, dir, fastSettings())
  t.equal(r.received.length, 1, 'a dead letter is not sent at start')
  const dead = second.d.listDeadLetters()
  t.equal(dead.length, 1)
  t.equal(second.d.stats().deadLetters, 1)
  t.match(dead[0], { result: { requestId: 'req-404' }, attempts: 1, reason: /HTTP 404/ })
  const missing = await second.d.redeliver('no-such-id')
  t.equal(missing.ok, false)
  accept = true
  const again = await second.d.redeliver(dead[0]?.result.deliveryId ?? '')
  t.equal(again.ok, true)
  await until(() => second.d.stats().delivered === 1, 'redelivered')
  t.equal(r.received[1]?.headers['x-delivery-id'], r.received[0]?.headers['x-delivery-id'], 'same delivery id')
  t.equal(r.received[1]?.body, r.received[0]?.body, 'same bytes')
  t.equal(second.d.stats().deadLetters, 0)
  await second.d.shutdown(0)
})

t.test('shutdown waits for retries due before the deadline', async (t) => {
  const r = await receiver((req, res, _b, n) => (n === 1 ? status(500) : ok200)(req, res, '', n))
  t.teardown(r.close)
  const { d } = await make(t, t.testdir(), fastSettings({ backoff_initial_ms: 20, backoff_max_ms: 20 }))
  await d.start()
  d.deliver('example.test', r.url, result(1), { requestId: 'req-1' })
  await until(() => r.received.length === 1, 'first attempt')
  t.same(await d.shutdown(5000), { delivered: 1, spooled: 0 })
  t.equal(r.received.length, 2)
})

t.test('shutdown with a receiver that keeps failing ends at the deadline', async (t) => {
  const h: Handler = (req, res, _b, n) => status(500)(req, res, '', n)
  const r = await receiver(h)
  t.teardown(r.close)
  const { d } = await make(t, t.testdir(), fastSettings({ backoff_initial_ms: 10, backoff_max_ms: 10 }))
  await d.start()
  d.deliver('example.test', r.url, result(1), { requestId: 'a' })
  await until(() => r.received.length >= 1, 'first attempt')
  const started = Date.now()
  t.same(await d.shutdown(100), { delivered: 0, spooled: 1 })
  t.ok(Date.now() - started < 2000, 'bounded by the deadline')
})

t.test('a spool file of an earlier version is moved into the journal and delivered; the deprecated keys warn', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const dir = t.testdir()
  const file = join(dir, 'callbacks.spool')
  const entry = { v: 1, delivery_id: 'd-1', domain: 'example.test', url: r.url, request_id: 'r-1', body: '{"result_code":0,"uuid":"g"}', attempts: 2, created_at: Date.now() }
  writeFileSync(file, `${JSON.stringify(entry)}\nnot json\n`)
  const first = await make(t, join(dir, 'journal'), { ...fastSettings({ spool_file: file }), max_attempts: 6 })
  await first.d.start()
  t.notOk(existsSync(file), 'removed once its entries are in the journal')
  await until(() => first.d.stats().delivered === 1, 'delivered')
  t.equal(r.received[0]?.headers['x-delivery-id'], 'd-1')
  t.equal(r.received[0]?.headers['x-delivery-attempt'], '3')
  t.equal(r.received[0]?.body, entry.body)
  t.ok(first.lines.some((l) => l.level === ERROR && l.line === 'not json'), 'an unreadable line is logged in full')
  t.ok(first.lines.some((l) => String(l.msg).startsWith('callbacks.max_attempts is deprecated')))
  t.ok(first.lines.some((l) => String(l.msg).startsWith('callbacks.spool_file is deprecated')))
  await first.d.shutdown(0)
})

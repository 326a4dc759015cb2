/**
 * Notices (CallbackDispatcher.notify: status events, finished recordings, ticketing events):
 * durable before their first attempt like results, signed by their signer's secret, never counted
 * as a request's final result, and those of one order key delivered one at a time in sequence,
 * also across a crash. Real journals in temp folders, a real HTTP receiver.
 */
import t, { type Test } from 'tap'
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { CallbackDispatcher } from '../../src/callbacks/dispatcher.js'
import { verifySignature } from '../../src/callbacks/body.js'
import type { CallbackSettings } from '../../src/callbacks/types.js'
import { openJournal } from '../../src/journal/index.js'
import type { Journal } from '../../src/journal/types.js'
import { captureLogs, fastSettings, ok200, receiver, status, until, type Handler } from './helpers.js'

const DOMAIN_SECRET = 'the-domain-callback-secret'
const TICKET_SECRET = 'the-sales-ticket-webhook-secret'

async function make(t: Test, dir: string, settings: CallbackSettings, userAgent?: string) {
  const logs = captureLogs()
  const opened = await openJournal({ dir, logger: logs.logger })
  if (!opened.ok) throw new Error(opened.error)
  const journal: Journal = opened.value
  t.teardown(() => journal.close())
  const d = new CallbackDispatcher({
    settings: () => settings,
    secretFor: (_domain, signer) => (signer === undefined ? DOMAIN_SECRET : signer === 'ticket:sales' ? TICKET_SECRET : undefined),
    journal,
    logger: logs.logger,
    ...(userAgent !== undefined ? { userAgent } : {}),
  })
  return { d, journal, lines: logs.lines }
}

const event = (n: number): string => JSON.stringify({ event: 'e', sequence: n })

t.test('a notice is durable first, signed by its signer, marked by X-Cod-Notice, and does not end its request', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const dir = t.testdir()
  const { d, journal } = await make(t, dir, fastSettings())
  await d.start()
  await journal.accepted({ requestId: 'req-1', domain: 'example.test', operation: 'call_user', uuids: ['u1'], callbackUrl: r.url, answerDeadlineAt: Date.now() + 60_000 })
  await d.notify('example.test', r.url, event(1), { requestId: 'req-1', kind: 'status' })
  await d.notify('example.test', r.url, '{"event":"call.started"}', { requestId: 'req-1', kind: 'ticket', signer: 'ticket:sales' })
  await until(() => d.stats().delivered === 2, 'both notices')
  const byKind = new Map(r.received.map((x) => [String(x.headers['x-cod-notice']), x]))
  const nowSec = Math.floor(Date.now() / 1000)
  const status_ = byKind.get('status')
  const ticket = byKind.get('ticket')
  t.equal(status_?.body, event(1), 'the exact bytes')
  t.ok(verifySignature(DOMAIN_SECRET, String(status_?.headers['x-signature']), status_?.body ?? '', { nowSec }), 'a status notice: the domain secret')
  t.ok(verifySignature(TICKET_SECRET, String(ticket?.headers['x-signature']), ticket?.body ?? '', { nowSec }), 'a ticket notice: its webhook secret')
  t.notOk(verifySignature(DOMAIN_SECRET, String(ticket?.headers['x-signature']), ticket?.body ?? '', { nowSec }), 'not the domain secret')
  t.same(journal.replay().openRequests, [], 'replay at open (before): nothing')
  await d.shutdown(0)
  await journal.close()
  // The request is still open in the journal: recovery must still look for its calls.
  const reopened = await openJournal({ dir, logger: captureLogs().logger })
  if (!reopened.ok) throw new Error(reopened.error)
  t.teardown(() => reopened.value.close())
  t.same(reopened.value.replay().openRequests.map((o) => o.requestId), ['req-1'], 'a notice does not end its request')
  t.same(reopened.value.replay().pendingResults, [], 'delivered notices are done')
})

t.test('notices never take the place of the final result', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const { d } = await make(t, t.testdir(), fastSettings())
  await d.start()
  await d.notify('example.test', r.url, event(1), { requestId: 'req-1', kind: 'status' })
  d.deliver('example.test', r.url, { result_code: 0, uuid: '00000000-0000-4000-8000-000000000001' }, { requestId: 'req-1' })
  await until(() => d.stats().delivered === 2, 'the notice and the result')
  t.same(
    r.received.map((x) => x.headers['x-cod-notice'] ?? 'result'),
    r.received.map((x) => (x.body.startsWith('{"result_code"') ? 'result' : 'status')),
  )
  await d.shutdown(0)
})

t.test('one order key: one at a time, in sequence, a failing one holds the next back until it is delivered', async (t) => {
  let failFirst = 2
  const handler: Handler = (req, res, body, n) => {
    if (body === event(0) && failFirst-- > 0) return status(503)(req, res, body, n)
    ok200(req, res, body, n)
  }
  const r = await receiver(handler)
  t.teardown(r.close)
  const { d } = await make(t, t.testdir(), fastSettings({ backoff_initial_ms: 30, backoff_max_ms: 30, concurrency_per_domain: 4 }))
  await d.start()
  for (let i = 0; i < 5; i++) void d.notify('example.test', r.url, event(i), { requestId: 'req-1', kind: 'status', orderKey: 'req-1' })
  // Another key is not held back by the first key's failures.
  await d.notify('example.test', r.url, '{"other":true}', { requestId: 'req-2', kind: 'status', orderKey: 'req-2' })
  await until(() => d.stats().delivered === 6, 'all six')
  const ofKey = r.received.filter((x) => x.headers['x-request-id'] === 'req-1').map((x) => x.body)
  t.same(ofKey, [event(0), event(0), event(0), event(1), event(2), event(3), event(4)], 'retried in place; the rest after it, in order')
  t.ok(
    r.received.findIndex((x) => x.headers['x-request-id'] === 'req-2') < r.received.findIndex((x) => x.body === event(1)),
    "the other key's notice went while the first key waited",
  )
  await d.shutdown(0)
})

t.test('a crash keeps the order: the next start sends what was pending, in sequence, same ids', async (t) => {
  let up = false
  const r = await receiver((req, res, body, n) => (up ? ok200 : status(503))(req, res, body, n))
  t.teardown(r.close)
  const dir = t.testdir()
  const settings = fastSettings({ backoff_initial_ms: 50, backoff_max_ms: 50, concurrency_per_domain: 4 })
  const dead = await make(t, dir, settings)
  await dead.d.start()
  for (let i = 0; i < 4; i++) await dead.d.notify('example.test', r.url, event(i), { requestId: 'req-1', kind: 'status', orderKey: 'req-1' })
  await until(() => r.received.length >= 1, 'the first attempt')
  t.same(new Set(r.received.map((x) => x.body)), new Set([event(0)]), 'only the first was tried')
  // What a SIGKILL leaves on disk (a copy, as test/callbacks/journal.test.ts does).
  const crashed = `${dir}-after-crash`
  mkdirSync(crashed)
  t.teardown(() => rmSync(crashed, { recursive: true, force: true }))
  for (const n of readdirSync(dir).filter((f) => f.endsWith('.log'))) copyFileSync(join(dir, n), join(crashed, n))
  await dead.d.shutdown(0)
  const after = await make(t, crashed, settings, 'after-the-crash')
  up = true
  await after.d.start()
  await until(() => after.d.stats().delivered === 4, 'delivered after the crash')
  const sent = r.received.filter((x) => x.headers['user-agent'] === 'after-the-crash')
  t.same(sent.map((x) => x.body), [event(0), event(1), event(2), event(3)], 'in sequence')
  // A notice handed over after the restart follows those of its key.
  await after.d.notify('example.test', r.url, event(4), { requestId: 'req-1', kind: 'status', orderKey: 'req-1' })
  await until(() => after.d.stats().delivered === 5, 'the fifth')
  t.equal(r.received.at(-1)?.body, event(4))
  await after.d.shutdown(0)
})

t.test('a graceful stop leaves a held notice pending with the one before it, not sent out of order', async (t) => {
  const r = await receiver(status(503))
  t.teardown(r.close)
  const dir = t.testdir()
  const settings = fastSettings({ backoff_initial_ms: 60_000, backoff_max_ms: 60_000 })
  const m = await make(t, dir, settings)
  await m.d.start()
  await m.d.notify('example.test', r.url, event(0), { requestId: 'req-1', kind: 'status', orderKey: 'req-1' })
  await m.d.notify('example.test', r.url, event(1), { requestId: 'req-1', kind: 'status', orderKey: 'req-1' })
  await until(() => r.received.length === 1, 'the first attempt')
  const stopped = await m.d.shutdown(200)
  t.equal(stopped.spooled, 2, 'both left in the journal')
  t.same(r.received.map((x) => x.body), [event(0)], 'the second was never sent ahead of the first')
})

t.test("an order key's sequence is forgotten once nothing of it is pending, not while a notice of it is still being journaled", async (t) => {
  const releases: Array<() => void> = []
  let holdThe = 0 // notices journaled from now on wait for a release, in order
  const r = await receiver(ok200)
  t.teardown(r.close)
  const logs = captureLogs()
  const opened = await openJournal({ dir: t.testdir(), logger: logs.logger })
  if (!opened.ok) throw new Error(opened.error)
  const real = opened.value
  t.teardown(() => real.close())
  const seqs: number[] = []
  // The real journal, its notices' seq noted; a held write holds those after it too, as the
  // journal makes records durable in the order they were handed over.
  let previous: Promise<void> = Promise.resolve()
  const journal = new Proxy(real, {
    get(target, prop) {
      if (prop === 'notice') {
        return (rec: Parameters<Journal['notice']>[0]) => {
          seqs.push(rec.notice.order?.seq ?? -1)
          const held = holdThe-- > 0 ? new Promise<void>((resolve) => releases.push(resolve)) : undefined
          const written = previous.then(() => held).then(() => target.notice(rec))
          previous = written
          return written
        }
      }
      const v: unknown = Reflect.get(target, prop, target)
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
  const d = new CallbackDispatcher({ settings: () => fastSettings(), secretFor: () => DOMAIN_SECRET, journal, logger: logs.logger })
  await d.start()
  const notify = (n: number) => d.notify('example.test', r.url, event(n), { requestId: 'req-1', kind: 'status', orderKey: 'status:req-1' })

  void notify(0)
  await until(() => d.stats().delivered === 1, 'the first delivered')
  void notify(1)
  await until(() => d.stats().delivered === 2, 'the second delivered')
  t.same(seqs, [0, 0], 'nothing of the key pending between them: forgotten, and numbered from 0 again')

  holdThe = 1
  void notify(2) // numbered 0, held in the journal
  void notify(3) // numbered 1 while 2 is being journaled, in the journal after it
  await until(() => releases.length === 1, 'the first write held')
  t.same(seqs.slice(2), [0, 1])
  releases.forEach((release) => release())
  await until(() => d.stats().delivered === 4, 'both delivered')
  t.same(r.received.map((x) => x.body), [event(0), event(1), event(2), event(3)], 'in the order handed over')

  // The race: the key's line empties while a notice of it is still being journaled.
  holdThe = 0
  let answerSix: (() => void) | undefined
  const slow = await receiver((req, res, body, n) => {
    if (body === event(6)) answerSix = () => ok200(req, res, body, n)
    else ok200(req, res, body, n)
  })
  t.teardown(slow.close)
  const notifySlow = (n: number) => d.notify('example.test', slow.url, event(n), { requestId: 'req-2', kind: 'status', orderKey: 'status:req-2' })
  void notifySlow(6) // in flight: the receiver has not answered
  await until(() => answerSix !== undefined, 'the sixth at the receiver')
  holdThe = 1
  void notifySlow(7) // being journaled
  await until(() => releases.length === 2, 'its write held')
  answerSix?.()
  await until(() => d.stats().delivered === 5, 'the sixth delivered: its line is empty')
  void notifySlow(8)
  t.same(seqs.slice(4), [0, 1, 2], 'the eighth follows the seventh: the key was not forgotten while the seventh was journaled')
  releases[1]?.()
  await until(() => d.stats().delivered === 7, 'all delivered')
  t.same(slow.received.map((x) => x.body), [event(6), event(7), event(8)])
  await d.shutdown(0)
})

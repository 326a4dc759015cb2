/**
 * Idempotency-Key (issue 11 item 5; src/api/idempotency.ts): the same key and request give the
 * first reply again and place nothing; another request with the key is 409
 * idempotency_key_reused; a bad key is 400; the keys survive a restart through the journal.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { createApp } from '../../src/api/app.js'
import { IdempotencyStore, idempotencyStoreOf, parseIdempotencyKey, requestDigest } from '../../src/api/idempotency.js'
import { openJournal } from '../../src/journal/index.js'
import type { Journal } from '../../src/journal/types.js'
import { refusal } from '../../src/origination/refusal.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { silentLogger } from '../../src/util/logger.js'
import { err } from '../../src/util/result.js'
import { serveUntilTeardown } from '../support/serve.js'
import { flush, waitFor } from '../support/wait.js'
import { AUTH_A, AUTH_B, domainB, exampleConfig, RecordingEngine, send, type Reply } from './helpers.js'

interface App {
  readonly engine: RecordingEngine
  call(body: unknown, opts?: { key?: string; auth?: string; operation?: string; raw?: string }): Promise<Reply>
}

async function startApp(t: Test, opts: { store?: IdempotencyStore; journal?: Journal } = {}): Promise<App> {
  const base = await exampleConfig()
  const runtime = runtimeOf({ ...base, domains: [...base.domains, domainB] })
  const engine = new RecordingEngine()
  const app = createApp({
    runtime: () => runtime,
    engine,
    health: { isConnected: () => true },
    logger: silentLogger(),
    ...(opts.store !== undefined ? { idempotency: opts.store } : {}),
    ...(opts.journal !== undefined ? { journal: opts.journal } : {}),
  })
  const url = `${await serveUntilTeardown(t, app)}/api/`
  return {
    engine,
    call: (body, o = {}) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', authorization: o.auth ?? AUTH_A }
      if (o.key !== undefined) headers['idempotency-key'] = o.key
      return send(url + (o.operation ?? 'call_user'), { method: 'POST', headers, body: o.raw ?? JSON.stringify(body) })
    },
  }
}

/** The store, counting the claims made of it: a repeat has reached it (and waits there) once counted. */
class CountingStore extends IdempotencyStore {
  claims = 0
  override claim(...args: Parameters<IdempotencyStore['claim']>): ReturnType<IdempotencyStore['claim']> {
    this.claims += 1
    return super.claim(...args)
  }
}

/**
 * Until `n` claims reached the store, then a few turns of the event loop: a claim that wrongly
 * went on (to the engine) would have got there by then; no I/O and no timer lies between them.
 */
async function claimsReached(store: CountingStore, n: number): Promise<void> {
  await waitFor(`${n} claims of the key`, () => store.claims >= n)
  await flush()
}

const CALL = { user_name: 'alice', destination: 'bob' }
const CALL_B = { user_name: 'zara', destination: 'yuri' }

t.test('the same key and body: the first reply again, byte for byte, and nothing placed', async (t) => {
  const app = await startApp(t)
  const first = await app.call(CALL, { key: 'order-4711' })
  t.equal(first.status, 200)
  t.equal(first.headers.get('idempotent-replayed'), null)
  const again = await app.call(CALL, { key: 'order-4711' })
  t.equal(again.status, 200)
  t.equal(again.text, first.text, 'same UUIDs, same bytes')
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.match(again.headers.get('content-type') ?? '', /^application\/json/)
  // The same JSON written otherwise (key order, spaces) is the same request.
  const reordered = await app.call(undefined, { key: 'order-4711', raw: '{ "destination": "bob",\n "user_name": "alice" }' })
  t.equal(reordered.text, first.text)
  t.equal(app.engine.plans.length, 1, 'placed once')
  // Without a key, or with another key: placed again.
  t.equal((await app.call(CALL)).status, 200)
  t.equal((await app.call(CALL, { key: 'order-4712' })).status, 200)
  t.equal(app.engine.plans.length, 3)
})

t.test('the same key with another body or operation: 409 idempotency_key_reused, nothing placed', async (t) => {
  const app = await startApp(t)
  t.equal((await app.call(CALL, { key: 'k1' })).status, 200)
  const other = await app.call({ ...CALL, destination: 'carol' }, { key: 'k1' })
  t.equal(other.status, 409)
  t.equal((other.body['error'] as { id: string }).id, 'idempotency_key_reused')
  const otherOp = await app.call({ target: '0399990000', destination: 'bob' }, { key: 'k1', operation: 'call_external' })
  t.equal(otherOp.status, 409)
  t.equal((otherOp.body['error'] as { id: string }).id, 'idempotency_key_reused')
  t.equal(app.engine.plans.length, 1)
})

t.test('keys are scoped per domain', async (t) => {
  const app = await startApp(t)
  t.equal((await app.call(CALL, { key: 'shared' })).status, 200)
  const b = await app.call(CALL_B, { key: 'shared', auth: AUTH_B })
  t.equal(b.status, 200, "another domain's request with the same key is its own")
  t.equal(b.headers.get('idempotent-replayed'), null)
  t.equal(app.engine.plans.length, 2)
})

t.test('a bad key is 400 invalid_parameter and places nothing', async (t) => {
  const app = await startApp(t)
  for (const key of ['', 'with space', 'x'.repeat(256)]) {
    const r = await app.call(CALL, { key })
    t.equal(r.status, 400, JSON.stringify(key))
    t.equal((r.body['error'] as { id: string }).id, 'invalid_parameter')
    t.match((r.body['error'] as { description: string }).description, /Idempotency-Key/)
  }
  t.equal(app.engine.plans.length, 0)
  t.equal((await app.call(CALL, { key: 'x'.repeat(255) })).status, 200, '255 characters is the longest key')
  t.equal((await app.call(CALL, { key: '!~#$%&*+-./:;<=>?@[]^_`{|}' })).status, 200, 'any visible ASCII')
})

t.test('parseIdempotencyKey: the header syntax', async (t) => {
  t.same(parseIdempotencyKey(undefined), { ok: true, value: undefined })
  t.same(parseIdempotencyKey('a'), { ok: true, value: 'a' })
  for (const bad of ['', ' a', 'a\tb', 'é', 'a\u007f', 'x'.repeat(256)]) t.notOk(parseIdempotencyKey(bad).ok, JSON.stringify(bad))
  t.notOk(parseIdempotencyKey(['a', 'a']).ok, 'given twice')
})

t.test('an error reply keeps nothing: the same key then places the call', async (t) => {
  const app = await startApp(t)
  app.engine.reply = async () => err(refusal('channel_limit_reached', 'full'))
  t.equal((await app.call(CALL, { key: 'retry-me' })).status, 429)
  app.engine.reply = undefined
  const r = await app.call(CALL, { key: 'retry-me' })
  t.equal(r.status, 200)
  t.equal(r.headers.get('idempotent-replayed'), null)
  t.equal(app.engine.plans.length, 2)
  // An invalid request with a key: refused, and the key stays free.
  t.equal((await app.call({ user_name: 'alice' }, { key: 'invalid-first' })).status, 400)
  t.equal((await app.call(CALL, { key: 'invalid-first' })).status, 200)
})

t.test('concurrent repeats: the second waits for the first reply; another body is refused at once', async (t) => {
  const store = new CountingStore()
  const app = await startApp(t, { store })
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  app.engine.reply = async (plan) => {
    await gate
    return { ok: true, value: { uuids: [`u-${plan.requestId}`] } }
  }
  const first = app.call(CALL, { key: 'busy' })
  const second = app.call(CALL, { key: 'busy' })
  const other = await app.call({ ...CALL, destination: 'carol' }, { key: 'busy' })
  t.equal(other.status, 409, 'another body while the first is in flight')
  await claimsReached(store, 3)
  t.equal(app.engine.plans.length, 1, 'the repeat did not reach the engine')
  release()
  const [a, b] = await Promise.all([first, second])
  t.equal(a.status, 200)
  t.equal(b.status, 200)
  t.equal(b.text, a.text)
  t.equal(app.engine.plans.length, 1)
})

t.test('a waiting repeat places the call itself when the first ended with an error', async (t) => {
  const store = new CountingStore()
  const app = await startApp(t, { store })
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  let calls = 0
  app.engine.reply = async () => {
    if (++calls > 1) return { ok: true, value: { uuids: ['second-try'] } }
    await gate
    return err(refusal('pbx_unavailable', 'not connected'))
  }
  const first = app.call(CALL, { key: 'flaky' })
  await waitFor('the first at the engine', () => calls === 1)
  const second = app.call(CALL, { key: 'flaky' })
  await claimsReached(store, 2)
  t.equal(calls, 1, 'the repeat waits for the first')
  release()
  t.equal((await first).status, 503)
  const b = await second
  t.equal(b.status, 200)
  t.same(b.body['uuids'], ['second-try'])
})

t.test('keys expire after 24 h', async (t) => {
  let now = 1_000_000
  const app = await startApp(t, { store: new IdempotencyStore({ now: () => now }) })
  t.equal((await app.call(CALL, { key: 'daily' })).status, 200)
  now += 24 * 3600 * 1000 - 1
  t.equal((await app.call(CALL, { key: 'daily' })).headers.get('idempotent-replayed'), 'true')
  now += 2
  const late = await app.call({ ...CALL, destination: 'carol' }, { key: 'daily' })
  t.equal(late.status, 200, 'a day later the key is free for any request')
  t.equal(app.engine.plans.length, 2)
})

t.test('a restart keeps the keys: the journal holds them with the accepted request', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'cod-idem-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const open = async () => {
    const j = await openJournal({ dir, logger: silentLogger() })
    if (!j.ok) throw new Error(j.error)
    return j.value
  }
  const j1 = await open()
  const before = await startApp(t, { journal: j1 })
  const first = await before.call(CALL, { key: 'survives' })
  t.equal(first.status, 200)
  await j1.close()

  const j2 = await open()
  t.teardown(() => j2.close())
  const keys = j2.replay().idempotencyKeys
  t.equal(keys.length, 1)
  t.equal(keys[0]?.fields.bodyDigest, requestDigest('call_user', CALL))
  const after = await startApp(t, { journal: j2, store: idempotencyStoreOf(keys) })
  const again = await after.call(CALL, { key: 'survives' })
  t.equal(again.status, 200)
  t.equal(again.text, first.text, 'the reply of before the restart')
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.equal((await after.call({ ...CALL, destination: 'carol' }, { key: 'survives' })).status, 409)
  t.equal(after.engine.plans.length, 0, 'nothing placed after the restart')
})

t.test('a key whose originate an earlier run left undecided: repeats wait for recovery, then replay or place', async (t) => {
  const store = new CountingStore()
  const app = await startApp(t, { store })
  const digest = requestDigest('call_user', CALL)
  // Recovery found the call placed: the waiting repeat gets the 200 it would have had.
  const placed = store.pending('example.test', 'crashed-placed', digest, 'req-old')
  const repeat = app.call(CALL, { key: 'crashed-placed' })
  await claimsReached(store, 1)
  t.equal(app.engine.plans.length, 0, 'the repeat waits: nothing placed while recovery decides')
  t.equal((await app.call({ ...CALL, destination: 'carol' }, { key: 'crashed-placed' })).status, 409, 'another body is refused at once')
  placed('{"result_code":0,"uuids":["from-before"]}')
  const r = await repeat
  t.equal(r.status, 200)
  t.equal(r.headers.get('idempotent-replayed'), 'true')
  t.same(r.body['uuids'], ['from-before'])
  t.equal(app.engine.plans.length, 0)
  // Recovery found nothing of it: the repeat places the call.
  const unplaced = store.pending('example.test', 'crashed-unplaced', digest, 'req-old-2')
  const retry = app.call(CALL, { key: 'crashed-unplaced' })
  await claimsReached(store, 3)
  t.equal(app.engine.plans.length, 0, 'the repeat waits for recovery')
  unplaced(undefined)
  const u = await retry
  t.equal(u.status, 200)
  t.equal(u.headers.get('idempotent-replayed'), null)
  t.equal(app.engine.plans.length, 1, 'placed now')
  t.same(app.engine.last()?.idempotency, { key: 'crashed-unplaced', bodyDigest: digest }, 'the key goes with the plan into the intent')
})

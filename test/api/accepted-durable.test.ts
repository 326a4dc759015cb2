/**
 * When the 200 waits for the journal's `accepted` record (journal/types.ts acceptedIsUrgent): a
 * request with a callback_url or an Idempotency-Key is answered only once its record is durable,
 * so that a crash after the reply cannot lose its result or its key; a request with neither is
 * answered without waiting (its record is unhurried: a crash can lose nothing of it).
 */
import t, { type Test } from 'tap'
import { createApp } from '../../src/api/app.js'
import type { AcceptedRequest } from '../../src/journal/types.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { silentLogger } from '../../src/util/logger.js'
import { serveUntilTeardown } from '../support/serve.js'
import { AUTH_A, exampleConfig, RecordingEngine, send } from './helpers.js'

/** An app whose journal never makes an `accepted` durable: what it was handed is kept. */
async function startApp(t: Test): Promise<{ url: string; records: AcceptedRequest[] }> {
  const runtime = runtimeOf(await exampleConfig())
  const records: AcceptedRequest[] = []
  const app = createApp({
    runtime: () => runtime,
    engine: new RecordingEngine(),
    health: { isConnected: () => true },
    logger: silentLogger(),
    journal: {
      accepted: (rec) => {
        records.push(rec)
        return new Promise<void>(() => undefined)
      },
    },
  })
  const base = await serveUntilTeardown(t, app)
  return { url: `${base}/api/call_user`, records }
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  send(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH_A, ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(400) }).then(
    (r) => r.status,
    () => 'no reply' as const,
  )

const CALL = { user_name: 'alice', destination: 'bob' }

t.test('neither a callback_url nor a key: the 200 does not wait for the record', async (t) => {
  const app = await startApp(t)
  t.equal(await post(app.url, CALL), 200)
  t.equal(app.records.length, 1, 'the record was handed to the journal all the same')
  t.equal(app.records[0]?.callbackUrl, undefined)
})

t.test('a callback_url: no 200 before the record is durable', async (t) => {
  const app = await startApp(t)
  t.equal(await post(app.url, { ...CALL, callback_url: 'https://app.example.test/cb' }), 'no reply')
  t.equal(app.records.length, 1)
})

t.test('an Idempotency-Key: no 200 before the record is durable', async (t) => {
  const app = await startApp(t)
  t.equal(await post(app.url, CALL, { 'idempotency-key': 'key-1' }), 'no reply')
  t.equal(app.records[0]?.idempotency?.key, 'key-1')
})

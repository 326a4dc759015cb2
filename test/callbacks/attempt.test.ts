/**
 * The two seams of delivery on their own: one attempt (attempt.ts) turns whatever happens into
 * a typed outcome without throwing, and the retry schedule (schedule.ts) decides from values.
 */
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { verifySignature } from '../../src/callbacks/body.js'
import { attemptDelivery, type AttemptRequest } from '../../src/callbacks/attempt.js'
import { parseTarget, type Target } from '../../src/callbacks/policy.js'
import { nextRetryStep } from '../../src/callbacks/schedule.js'
import { createCallbackTransport } from '../../src/callbacks/transport.js'
import { fastSettings, ok200, receiver, status } from './helpers.js'

const targetOf = (url: string): Target => {
  const r = parseTarget(url)
  if (!r.ok) throw new Error(r.error)
  return r.value
}

const request = (url: string, over: Partial<AttemptRequest> = {}): AttemptRequest => ({
  deliveryId: 'd-1',
  requestId: 'req-1',
  attempt: 1,
  target: targetOf(url),
  body: '{"result_code":0,"uuid":"u-1"}',
  secret: undefined,
  ...over,
})

// The receivers listen on 127.0.0.1: the transport allows exactly that (callbacks.allow).
const transport = createCallbackTransport(() => fastSettings({ allow: ['127.0.0.1/32'] }))
const context = { timeoutMs: 2000, signal: new AbortController().signal, now: () => 1_700_000_000_000, userAgent: 'test-agent', transport }

t.test('a 2xx is delivered; the request carries the delivery headers and the signature', async (t) => {
  const r = await receiver(ok200)
  t.teardown(r.close)
  const outcome = await attemptDelivery(request(r.url, { attempt: 3, secret: 'a-signing-secret-of-enough-length' }), context)
  t.same(outcome, { kind: 'delivered', status: 200 })
  const got = r.received[0]
  t.equal(got?.headers['x-delivery-id'], 'd-1')
  t.equal(got?.headers['x-delivery-attempt'], '3')
  t.equal(got?.headers['x-request-id'], 'req-1')
  t.equal(got?.headers['user-agent'], 'test-agent')
  t.ok(verifySignature('a-signing-secret-of-enough-length', String(got?.headers['x-signature']), got?.body ?? '', { nowSec: 1_700_000_000 }))
})

t.test("a 5xx is a retry with the receiver's words and its Retry-After; a 404 is fatal", async (t) => {
  const busy = await receiver(status(503, { 'retry-after': '7' }))
  t.teardown(busy.close)
  t.same(await attemptDelivery(request(busy.url), context), { kind: 'retry', reason: 'HTTP 503: status 503', status: 503, retryAfterMs: 7000 })
  const gone = await receiver(status(404))
  t.teardown(gone.close)
  t.same(await attemptDelivery(request(gone.url), context), { kind: 'fatal', reason: 'HTTP 404: status 404', status: 404 })
})

t.test('a connection refused or an abort is a retry, never a throw', async (t) => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  const refused = await attemptDelivery(request(`http://127.0.0.1:${port}/cb`), context)
  t.equal(refused.kind, 'retry')

  const aborted = new AbortController()
  aborted.abort()
  const r = await receiver(ok200)
  t.teardown(r.close)
  t.same(await attemptDelivery(request(r.url), { ...context, signal: aborted.signal }), { kind: 'retry', reason: 'aborted' })
})

t.test('the retry schedule: backoff by time, give up only past give_up_after_ms, left pending past the shutdown deadline', async (t) => {
  const s = fastSettings({ backoff_initial_ms: 100, backoff_max_ms: 1000 })
  const half = () => 0.5
  const at = { now: 1_000_000, giveUpAt: 1_000_000 + 86_400_000 }
  t.same(nextRetryStep({ reason: 'HTTP 503', attempts: 1, ...at, msBeforeDeadline: undefined }, s, half), { kind: 'retry', delayMs: 75 })
  t.same(nextRetryStep({ reason: 'HTTP 503', attempts: 2, retryAfterMs: 500, ...at, msBeforeDeadline: undefined }, s, half), { kind: 'retry', delayMs: 500 })
  t.same(nextRetryStep({ reason: 'HTTP 503', attempts: 50, ...at, msBeforeDeadline: undefined }, s, half), { kind: 'retry', delayMs: 750 }, 'no count limit')
  t.same(nextRetryStep({ reason: 'HTTP 503', attempts: 3, now: at.giveUpAt, giveUpAt: at.giveUpAt, msBeforeDeadline: undefined }, s, half), {
    kind: 'give_up',
    reason: 'HTTP 503 (still failing after 3 attempts, past the give-up time)',
  })
  t.same(nextRetryStep({ reason: 'HTTP 503', attempts: 3, now: at.giveUpAt - 1, giveUpAt: at.giveUpAt, msBeforeDeadline: undefined }, s, half).kind, 'retry', 'not a millisecond early')
  t.same(nextRetryStep({ reason: 'timeout', attempts: 1, ...at, msBeforeDeadline: 50 }, s, half), { kind: 'leave', delayMs: 75 })
  t.same(nextRetryStep({ reason: 'timeout', attempts: 1, ...at, msBeforeDeadline: 80 }, s, half), { kind: 'retry', delayMs: 75 })
})

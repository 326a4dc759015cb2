/**
 * Fault suite from outside (issue 11, the table's result rows): the daemon in a process of its
 * own against the standalone simulator, a callback receiver that fails, hangs and vanishes.
 * - daemon SIGKILL with 50 results pending (receiver answering 503), restarted on the same
 *   journal, receiver healthy: 0 lost, each result under its one delivery id;
 * - receiver refusing connections (its port closed) far longer than a count of attempts would
 *   cover, then hanging, then healthy: 0 lost. Retries go by time, not count: the backoff is
 *   small so that this runs in seconds (the real schedule is minutes over 24 h).
 * (test/faults/callbacks.test.ts covers the in-process cases: isolation, signatures, Retry-After.)
 */
import t from 'tap'
import { Ledger, describe, lostResults, repeatsBroken, type Sent } from './harness/ledger.js'
import { faultyReceiver } from './harness/receiver.js'
import { faultStack, sleep, waitFor, type FaultStack } from './harness/stack.js'

t.setTimeout(150000)

const PSTN = '0311112222'

/**
 * Places `n` calls, 10 at a time; a request refused with 503 is sent again, as a client would
 * (an error reply placed nothing), at most 5 times. The refusals are counted in the ledger.
 */
async function placeAll(stack: FaultStack, ledger: Ledger, n: number, body: Record<string, unknown>): Promise<Sent[]> {
  const out: Sent[] = []
  for (let i = 0; i < n; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, async () => {
        let r = await ledger.post(stack, 'call_user', body)
        for (let tries = 1; r.status === 503 && tries < 5; tries++) {
          await sleep(200)
          r = await ledger.post(stack, 'call_user', body)
        }
        return r
      }),
    )
    out.push(...batch)
  }
  return out
}

t.test('daemon SIGKILL with 50 results pending (receiver 503), restart: 0 lost', async (t) => {
  const receiver = await faultyReceiver(t, 'fail503')
  const stack = await faultStack(t, {
    channelLimit: 200,
    callbacks: { timeout_ms: 500, backoff_initial_ms: 50, backoff_max_ms: 300, give_up_after_ms: 600000 },
  })
  await stack.startSim()
  const first = await stack.startDaemon()
  const ledger = new Ledger()

  const replies = await placeAll(stack, ledger, 50, { user_name: 'brief', destination: PSTN, callback_url: receiver.url })
  t.same(replies.filter((r) => r.status !== 200).map(describe), [], 'the 50 requests are accepted')
  const ids = new Set(replies.map((r) => r.requestId))
  await waitFor('a first (failed) attempt of every result', () => new Set(receiver.received.map((r) => r.requestId)).size >= ids.size, 20000)
  t.ok(
    receiver.received.every((r) => r.status === 503),
    'every attempt so far was refused: 50 results pending',
  )

  await first.kill()
  receiver.mode = 'accept'
  await stack.startDaemon()
  await waitFor('every result accepted', () => lostResults(ledger, receiver).length === 0, 20000).catch(() => undefined)

  const lost = lostResults(ledger, receiver)
  t.same(lost.map(describe), [], `0 of 50 results lost (lost: ${lost.length})`)
  t.same(repeatsBroken(receiver), [], 'every repeat carries the same delivery id and body')
  t.comment(`figures: ${JSON.stringify({ requests: 50, replies: ledger.statusCounts(), attempts: receiver.received.length, accepted: receiver.acceptedRequestIds().size, lost: lost.length })}`)
  await stack.daemon?.stop()
  await stack.sim?.stop()
})

t.test('receiver refusing connections, then hanging, then healthy: retries by time, 0 lost', async (t) => {
  const receiver = await faultyReceiver(t, 'accept')
  const stack = await faultStack(t, {
    channelLimit: 200,
    // 300 ms apart at most: 8 s of refusals is ~25 attempts, far beyond any count-based limit.
    callbacks: { timeout_ms: 400, backoff_initial_ms: 50, backoff_max_ms: 300, give_up_after_ms: 600000 },
  })
  await stack.startSim()
  await stack.startDaemon()
  const ledger = new Ledger()
  await receiver.close()

  const replies = await placeAll(stack, ledger, 30, { user_name: 'brief', destination: PSTN, callback_url: receiver.url })
  t.same(replies.filter((r) => r.status !== 200).map(describe), [], 'the 30 requests are accepted')
  await sleep(8000)
  receiver.mode = 'hang'
  await receiver.open()
  await sleep(3000)
  const hung = receiver.received.length
  receiver.mode = 'accept'
  await waitFor('every result accepted', () => lostResults(ledger, receiver).length === 0, 20000).catch(() => undefined)

  const lost = lostResults(ledger, receiver)
  t.ok(hung > 0, `the hanging receiver was tried (${hung} attempts left unanswered)`)
  t.same(lost.map(describe), [], `0 of 30 results lost after 8 s refused and 3 s hanging (lost: ${lost.length})`)
  t.same(repeatsBroken(receiver), [], 'every repeat carries the same delivery id and body')
  t.comment(`figures: ${JSON.stringify({ requests: 30, replies: ledger.statusCounts(), refusedFor_ms: 8000, hungFor_ms: 3000, attemptsReceived: receiver.received.length, lost: lost.length })}`)
  await stack.daemon?.stop()
  await stack.sim?.stop()
})

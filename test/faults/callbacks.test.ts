/**
 * Fault: the callback receiver is down, failing, or hanging. Results are delivered exactly once
 * to the receiver's acceptance (retries carry the same delivery id), a hanging receiver costs
 * its domain at most concurrency_per_domain sockets and never delays another domain.
 */
import t from 'tap'
import { receiver, sleep, startStack, waitFor, type Stack } from './harness/in-process.js'

const place = (s: Stack, user: string, url: string, domain = 'fault.test', extra: Record<string, unknown> = {}) =>
  s.call('call_user', { user_name: user, destination: '0311112222', callback_url: url, ...extra }, domain)

t.test('receiver down, then failing, then back: every result accepted exactly once', async (t) => {
  t.setTimeout(20000)
  const s = await startStack(t)
  const r = await receiver(t)
  await r.close() // connection refused from now on, on a port we keep

  const users = ['quick', 'busy', 'ann', 'quick', 'busy', 'ring', 'quick', 'ann']
  const replies = await Promise.all(users.map((u) => place(s, u, r.url, 'fault.test', u === 'ring' ? { answer_timeout: 1 } : {})))
  t.same(replies.map((x) => x.status), users.map(() => 200), 'all accepted')
  const n = users.length
  await waitFor('every result tried at least once', () => s.logs.count('callback attempt failed; retry scheduled') >= n, 8000)

  r.mode = 'fail503'
  await r.open()
  await waitFor('503s seen', () => r.deliveries.filter((d) => d.status === 503).length >= n, 8000)
  r.mode = 'accept'
  await waitFor('all accepted', () => r.accepted().size === n, 8000)
  await sleep(500)

  const accepted = r.accepted()
  t.ok([...accepted.values()].every((ds) => ds.length === 1), 'each delivery id accepted once')
  const requestIds = new Set([...accepted.values()].map((ds) => ds[0]?.headers['x-request-id']))
  t.same([...requestIds].sort(), replies.map((x) => x.requestId).sort(), 'one delivery id per request')
  for (const [id, ds] of accepted) {
    const ok = ds[0]
    const tries = r.deliveries.filter((d) => d.headers['x-delivery-id'] === id)
    t.ok(tries.every((d) => d.body === ok?.body), 'the same body on every attempt')
    t.equal(tries.at(-1), ok, 'nothing sent after the receiver accepted it')
    t.same(
      tries.map((d) => Number(d.headers['x-delivery-attempt'])),
      [...tries.keys()].map((i) => Number(tries[0]?.headers['x-delivery-attempt']) + i),
      'attempts numbered in order',
    )
  }
  for (const [i, reply] of replies.entries()) {
    const d = [...accepted.values()].find((ds) => ds[0]?.headers['x-request-id'] === reply.requestId)?.[0]
    const body = JSON.parse(d?.body ?? '{}') as { result_code?: number; uuid?: string }
    if (users[i] === 'quick' || users[i] === 'ann') t.same(body, { result_code: 0, uuid: reply.json.uuids?.[0] })
    else t.equal(body.result_code, 500)
  }
  t.equal(s.logs.count('callback not delivered; giving up (the result is in this log line)'), 0, 'none given up')
})

t.test('a hanging receiver: timeouts, bounded sockets, the other domain unaffected', async (t) => {
  t.setTimeout(20000)
  const s = await startStack(t, {
    daemon: (d) => (d.callbacks = { timeout_ms: 300, give_up_after_ms: 3000, backoff_initial_ms: 50, backoff_max_ms: 100, concurrency_per_domain: 2, allow: ['127.0.0.1/32'] }),
  })
  const hang = await receiver(t, 'hang')
  const good = await receiver(t, 'accept')

  const stuck = await Promise.all([0, 1, 2, 3, 4, 5].map(() => place(s, 'quick', hang.url)))
  t.same(stuck.map((x) => x.status), [200, 200, 200, 200, 200, 200])
  await waitFor('the hanging receiver holds requests', () => hang.deliveries.length >= 2)

  // The other domain's results go out while fault.test's receiver hangs.
  const others = await Promise.all([0, 1, 2, 3].map(() => place(s, 'oscar', good.url, 'other.test')))
  t.same(others.map((x) => x.status), [200, 200, 200, 200], 'API replies are not held up')
  await waitFor('other.test callbacks', () => good.accepted().size === 4, 5000)
  const giveUps = s.logs.count('callback not delivered; giving up (the result is in this log line)')
  t.ok(giveUps < 6, `other.test was served before fault.test's deliveries ended (${giveUps} given up so far)`)

  await waitFor('every hanging delivery given up', () => s.logs.count('callback not delivered; giving up (the result is in this log line)') === 6, 12000)
  // Retries go by time (give_up_after_ms 3 s; also room for other.test's attempts on a loaded machine):
  // each result was tried at least once, each attempt ended by the timeout.
  t.same(new Set(hang.deliveries.map((d) => d.headers['x-delivery-id'])).size, 6, 'every result tried')
  // Node's fetch (undici) opens a spare connection when it destroys one for an aborted request and
  // closes it after 4 s idle: in flight <= concurrency_per_domain, spares <= as many again.
  t.ok(hang.peakSockets <= 4, `no pile-up: at most 2 x concurrency_per_domain sockets for ${hang.deliveries.length} attempts (peak ${hang.peakSockets})`)
  await waitFor('sockets released', () => hang.openSockets === 0, 6000, 50)
  t.equal(good.deliveries.length, 4, 'the good receiver got each result once')
})

/**
 * Fault: the ESL connection drops (the simulator destroys the sockets, FreeSWITCH and the calls
 * stay up) while calls are being placed and rung; esl-lite reconnects. Whatever was lost with
 * the socket (BACKGROUND_JOB results, channel events), every accepted request still gets exactly
 * one result callback, and the right one where the outcome is still knowable.
 */
import t from 'tap'
import { receiver, sleep, startStack, waitFor, type Stack } from './harness/in-process.js'

const simOf = (s: Stack) => {
  const sim = s.daemon.simulator
  if (sim === undefined) throw new Error('the fixture runs in simulator mode')
  return sim
}

t.test('a drop while the terminal rings: the answered result arrives once', async (t) => {
  t.setTimeout(15000)
  const s = await startStack(t)
  const cb = await receiver(t)
  // ann answers after 200 ms (scaled), then is connected to bob.
  const r = await s.call('call_user', { user_name: 'ann', destination: 'bob', callback_url: cb.url })
  t.equal(r.status, 200, JSON.stringify(r.json))
  const uuid = r.json.uuids?.[0]
  simOf(s).dropConnections()
  await waitFor('the callback', () => cb.deliveries.length >= 1, 8000)
  await waitFor('the link again', () => s.daemon.pbx.isConnected())
  // Long enough for a duplicate (retry, second final) to show up.
  await sleep(600)
  t.equal(cb.deliveries.length, 1, 'one delivery')
  t.same(JSON.parse(cb.deliveries[0]?.body ?? ''), { result_code: 0, uuid })
  t.equal(cb.deliveries[0]?.headers['x-request-id'], r.requestId)
})

t.test('drops during a burst of calls: exactly one callback per accepted request', async (t) => {
  t.setTimeout(20000)
  const s = await startStack(t)
  const cb = await receiver(t)
  const sim = simOf(s)
  const calls: Array<{ user: string; timeout?: number }> = [
    { user: 'ann' },
    { user: 'duo' },
    { user: 'quick' },
    { user: 'busy' },
    { user: 'ring', timeout: 1 },
    { user: 'ann' },
    { user: 'quick' },
    { user: 'duo' },
    { user: 'ring', timeout: 2 },
    { user: 'busy' },
  ]
  const place = (c: { user: string; timeout?: number }, i: number) =>
    s.call('call_user', {
      user_name: c.user,
      destination: '0311112222',
      callback_url: `${cb.url}?n=${i}`,
      ...(c.timeout !== undefined ? { answer_timeout: c.timeout } : {}),
    })
  // Placed while the link is up: every one is accepted, and all are ringing when the link drops.
  const first = await Promise.all(calls.map(place))
  t.same(first.map((r) => r.status), calls.map(() => 200), 'all accepted')
  sim.dropConnections()
  await waitFor('the link again', () => s.daemon.pbx.isConnected())
  // More requests racing a second drop: each is accepted or refused with pbx_unavailable.
  const second = await Promise.all(
    calls.slice(0, 4).map(async (c, i) => {
      await sleep(i * 5)
      if (i === 2) sim.dropConnections()
      return place(c, 100 + i)
    }),
  )
  const replies = [...first, ...second]
  const accepted = replies.filter((r) => r.status === 200)
  // A request that met the link down is refused with pbx_unavailable: no result is owed for it.
  for (const r of second) {
    if (r.status !== 200) t.same([r.status, r.json.error?.id], [503, 'pbx_unavailable'], 'refused only because the link was down')
  }
  await waitFor('one callback per accepted request', () => new Set(cb.deliveries.map((d) => d.headers['x-request-id'])).size >= accepted.length, 10000)
  await sleep(600)
  const byRequest = new Map<string, number>()
  for (const d of cb.deliveries) byRequest.set(String(d.headers['x-request-id']), (byRequest.get(String(d.headers['x-request-id'])) ?? 0) + 1)
  t.same([...byRequest.keys()].sort(), accepted.map((r) => r.requestId).sort(), 'callbacks only for accepted requests')
  t.ok([...byRequest.values()].every((n) => n === 1), 'no request got two callbacks')
  for (const [i, r] of first.entries()) {
    if (r.status !== 200) continue
    const d = cb.deliveries.find((x) => x.headers['x-request-id'] === r.requestId)
    const body = JSON.parse(d?.body ?? '{}') as { result_code: number; uuid?: string; error?: { id: string } }
    const user = calls[i % calls.length]?.user
    if (user === 'ann' || user === 'duo' || user === 'quick') {
      t.same(body, { result_code: 0, uuid: r.json.uuids?.[0] }, `${user}: answered by the terminal that answers`)
    } else {
      t.equal(body.result_code, 500, `${user}: not answered`)
      t.ok(['busy', 'no_answer', 'failed'].includes(body.error?.id ?? ''), `${user}: ${body.error?.id}`)
    }
  }
  t.ok(await s.healthz() === 200, 'healthy again')
})

t.test('drops during a group hunt: one callback, from the member that answers', async (t) => {
  t.setTimeout(15000)
  const s = await startStack(t)
  const cb = await receiver(t)
  const sim = simOf(s)
  const r = await s.call('call_group', { group_name: 'team', destination: '0311112222', callback_url: cb.url })
  t.equal(r.status, 200, JSON.stringify(r.json))
  t.equal(r.json.uuids?.length, 3, 'one leg per member terminal, in hunt order')
  // ring rings for 300 ms, busy refuses, ann answers 200 ms later: drops while ring rings and while ann rings.
  await sleep(100)
  sim.dropConnections()
  await sleep(300)
  sim.dropConnections()
  await waitFor('the callback', () => cb.deliveries.length >= 1, 10000)
  await sleep(600)
  t.equal(cb.deliveries.length, 1, 'one delivery')
  const body = JSON.parse(cb.deliveries[0]?.body ?? '{}') as { result_code?: number; uuid?: string }
  t.same(body, { result_code: 0, uuid: r.json.uuids?.[2] }, 'ann, the third member, answered')
})

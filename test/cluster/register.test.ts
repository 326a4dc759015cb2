/**
 * Issue 17 item 2, a user registered on another box: two nodes, the user `stay` registered on
 * g2's switch only. A call_user for `stay` sent to g1 is forwarded to g2 (the client's body and
 * credentials), which places it on its box and delivers its result; the client gets g2's reply
 * from g1. A user registered on no box is `user_not_registered`; a request already forwarded is
 * never forwarded again; an Idempotency-Key stays with the node the client called.
 */
import t from 'tap'
import { redisServerBinary, SKIP_REASON, startRedisServer } from './redis-server.js'
import { startNodes, type ClusterNodeStack } from './nodes.js'
import { DOMAIN, TOKEN, waitFor } from '../faults/harness/stack.js'
import { faultyReceiver } from '../faults/harness/receiver.js'

const AUTH = `Basic ${Buffer.from(`${DOMAIN}:${TOKEN}`).toString('base64')}`
t.setTimeout(180_000)

async function post(n: ClusterNodeStack, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; replayed: string | null }> {
  const res = await fetch(`${n.stack.baseUrl}/api/call_user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20000),
  })
  return { status: res.status, text: await res.text(), replayed: res.headers.get('idempotent-replayed') }
}

t.test('call_user reaches a user registered on another box', { skip: redisServerBinary() === undefined ? SKIP_REASON : false }, async (t) => {
  const redis = await startRedisServer(t)
  const receiver = await faultyReceiver(t, 'accept')
  const nodes = await startNodes(t, redis.url, ['g1', 'g2'], {
    leaseMs: 3000,
    domainEditFor: (id, doc) => {
      const users = doc.users as unknown[]
      // `stay` answers and talks until hung up, on g2's box; g1's box has no registration of it.
      users.push({ id: '6', name: 'stay', extension: '1006', password: 'stay-sip-secret', sim: { terminals: [id === 'g2' ? { answer_after: 1 } : { behaviour: 'unregistered' }] } })
      users.push({ id: '7', name: 'nobody', extension: '1007', password: 'nobody-sip-secret', sim: { terminals: [{ behaviour: 'unregistered' }] } })
    },
  })
  const [g1, g2] = nodes as [ClusterNodeStack, ClusterNodeStack]
  await waitFor('the first admission', async () => (await g2.stack.call('call_user', { user_name: 'brief', destination: '0312345678' })).status === 200, 15000, 100)

  const r = await post(g1, { user_name: 'stay', destination: '0312345679', callback_url: receiver.url })
  t.equal(r.status, 200, 'g1 answers 200: g2 placed it')
  const uuid = (JSON.parse(r.text) as { uuids: string[] }).uuids[0] ?? ''
  await waitFor("the leg on g2's switch", () => g2.stack.observer.live.has(uuid), 10000, 20)
  t.notOk(g1.stack.observer.live.has(uuid), "never on g1's switch")
  await waitFor('its result, from g2', () => receiver.received.some((d) => d.body.includes(uuid) && d.status === 204), 15000, 20)
  t.equal(receiver.received.filter((d) => d.body.includes(uuid)).length, 1, 'one result')

  const nobody = await post(g1, { user_name: 'nobody', destination: '0312345680' })
  t.same([nobody.status, (JSON.parse(nobody.text) as { error?: { id: string } }).error?.id], [409, 'user_not_registered'], 'registered on no box: user_not_registered')

  const hop = await post(g1, { user_name: 'stay', destination: '0312345681' }, { 'x-cod-forwarded': 'elsewhere' })
  t.equal(hop.status, 409, 'a forwarded request is answered from the box it reached only')

  const first = await post(g1, { user_name: 'stay', destination: '0312345682' }, { 'idempotency-key': 'fwd-1' })
  const again = await post(g1, { user_name: 'stay', destination: '0312345682' }, { 'idempotency-key': 'fwd-1' })
  t.same([first.status, again.status, again.text, again.replayed], [200, 200, first.text, 'true'], 'the key replays the forwarded reply')
})

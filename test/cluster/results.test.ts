/**
 * Issue 17 item 4, results survive a node, and Idempotency-Keys across nodes. Three nodes share
 * one redis-server; the callback receiver fails (503) while a node holds results it could not
 * deliver yet and requests still ringing; then that node is killed (daemon and switch, SIGKILL)
 * while the other two go on taking calls, and the receiver recovers. Every request answered 200
 * gets exactly one final result: the dead node's undelivered results from a peer with their
 * delivery id and bytes, its ringing requests as `outcome_unknown`; the node, restarted on its
 * journal, delivers none of them again. An Idempotency-Key used on
 * one node is replayed by another (same bytes), and refused (409) there with another body.
 */
import t from 'tap'
import { redisServerBinary, SKIP_REASON, startRedisServer } from './redis-server.js'
import { killNode, startNodes, type ClusterNodeStack } from './nodes.js'
import { DOMAIN, sleep, TOKEN, waitFor, type Reply } from '../faults/harness/stack.js'
import { faultyReceiver } from '../faults/harness/receiver.js'

// Generous: a node whose event loop stalls longer than its lease (a loaded CI machine) is dead to its peers.
const LEASE_MS = 3000
// Three nodes of two processes each start one after the other: slower than the suite's default 60 s on a loaded machine.
t.setTimeout(180_000)
const AUTH = `Basic ${Buffer.from(`${DOMAIN}:${TOKEN}`).toString('base64')}`

async function postWithKey(n: ClusterNodeStack, key: string, body: unknown): Promise<{ status: number; text: string; replayed: string | null }> {
  const res = await fetch(`${n.stack.baseUrl}/api/call_user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20000),
  })
  return { status: res.status, text: await res.text(), replayed: res.headers.get('idempotent-replayed') }
}

t.test('results survive a node; Idempotency-Keys are the cluster\'s', { skip: redisServerBinary() === undefined ? SKIP_REASON : false, timeout: 120_000 }, async (t) => {
  const redis = await startRedisServer(t)
  const receiver = await faultyReceiver(t, 'accept')
  const nodes = await startNodes(t, redis.url, ['n1', 'n2', 'n3'], { leaseMs: LEASE_MS, channelLimit: 60 })
  const [n1, n2, n3] = nodes as [ClusterNodeStack, ClusterNodeStack, ClusterNodeStack]
  await waitFor('the first admission', async () => (await n1.stack.call('call_user', { user_name: 'brief', destination: '0312345678' })).status === 200, 15000, 100)

  await t.test('an Idempotency-Key used on one node is replayed by another', async (t) => {
    const body = { user_name: 'brief', destination: '0312340001' }
    const first = await postWithKey(n1, 'cluster-key-1', body)
    t.equal(first.status, 200)
    const again = await postWithKey(n2, 'cluster-key-1', body)
    t.same([again.status, again.text, again.replayed], [200, first.text, 'true'], 'same reply bytes from another node, marked replayed')
    const other = await postWithKey(n3, 'cluster-key-1', { ...body, destination: '0312340002' })
    t.equal(other.status, 409, 'another body on a third node: 409')
    t.match(other.text, /idempotency_key_reused/)
  })

  await t.test('a node killed with undelivered results and ringing requests: every accepted request gets exactly one result', async (t) => {
    receiver.mode = 'fail503'
    const accepted: (Reply & { node: string; kind: string })[] = []
    const send = async (n: ClusterNodeStack, kind: 'brief' | 'ring', i: number) => {
      const body =
        kind === 'brief'
          ? { user_name: 'brief', destination: `03123${String(i).padStart(5, '0')}`, callback_url: receiver.url }
          : { user_name: 'ring', destination: `03124${String(i).padStart(5, '0')}`, answer_timeout: 60, callback_url: receiver.url }
      const r = await n.stack.call('call_user', body)
      if (r.status === 200) accepted.push({ ...r, node: n.id, kind })
      return r
    }
    // n3: three results it cannot deliver yet, two requests that ring for 6 s.
    const onN3 = await Promise.all([0, 1, 2].map((i) => send(n3, 'brief', 100 + i)).concat([0, 1].map((i) => send(n3, 'ring', 200 + i))))
    t.same(onN3.map((r) => r.status), [200, 200, 200, 200, 200], 'n3 accepted its five')
    const n3Brief = accepted.filter((a) => a.node === 'n3' && a.kind === 'brief').map((a) => a.requestId)
    await waitFor("n3's three results tried (and refused)", () => n3Brief.every((id) => receiver.received.some((r) => r.requestId === id)), 15000, 20)
    const deliveryIdBefore = new Map(n3Brief.map((id) => [id, receiver.received.find((r) => r.requestId === id)?.deliveryId]))

    // Load on the two others meanwhile, across the kill.
    let loading = true
    let i = 300
    const load = (async () => {
      while (loading) {
        await Promise.all([send(n1, 'brief', i++), send(n2, 'brief', i++)])
        await sleep(100)
      }
    })()
    await sleep(300)
    await killNode(n3)
    await sleep(500)
    receiver.mode = 'accept'
    await sleep(LEASE_MS)
    loading = false
    await load

    const ids = accepted.map((a) => a.requestId)
    try {
      await waitFor('a result accepted for every accepted request', () => {
        const got = receiver.acceptedRequestIds()
        return ids.every((id) => got.has(id))
      }, 30000, 50)
    } catch (e) {
      const got = receiver.acceptedRequestIds()
      t.comment(`missing: ${JSON.stringify(accepted.filter((a) => !got.has(a.requestId)).map((a) => [a.node, a.kind, a.requestId]))}`)
      t.comment(`peers: ${JSON.stringify([n1, n2].flatMap((n) => n.stack.daemon?.lines.filter((l) => String(l.part) === 'cluster' || /took over|second final/.test(String(l.msg))) ?? []))}`)
      throw e
    }
    // Time for any second result to show up.
    await sleep(LEASE_MS)

    const byRequest = new Map<string, { deliveryIds: Set<string>; bodies: Set<string> }>()
    for (const r of receiver.received) {
      const e = byRequest.get(r.requestId) ?? { deliveryIds: new Set(), bodies: new Set() }
      e.deliveryIds.add(r.deliveryId)
      e.bodies.add(r.body)
      byRequest.set(r.requestId, e)
    }
    const twice = [...byRequest].filter(([, e]) => e.deliveryIds.size !== 1 || e.bodies.size !== 1).map(([id]) => id)
    t.same(twice, [], 'no request has two results (one delivery id and one body each)')
    t.comment(`${accepted.length} accepted (${accepted.filter((a) => a.node !== 'n3').length} on n1/n2), ${receiver.received.length} deliveries received`)
    for (const id of n3Brief) {
      t.equal([...(byRequest.get(id)?.deliveryIds ?? [])][0], deliveryIdBefore.get(id), `n3's result ${id.slice(0, 8)} delivered by a peer with its delivery id`)
    }
    for (const a of accepted.filter((x) => x.node === 'n3' && x.kind === 'ring')) {
      const body = [...(byRequest.get(a.requestId)?.bodies ?? [])][0] ?? ''
      t.match(JSON.parse(body), { result_code: 500, error: { id: 'outcome_unknown' } }, "n3's ringing request: outcome_unknown from a peer")
    }

    // n3 comes back on its own journal, which still holds the three results and the two requests:
    // a peer delivered them, so n3 must deliver none of them again.
    const before = receiver.received.length
    await n3.stack.startSim()
    await n3.stack.startDaemon()
    await sleep(2 * LEASE_MS)
    const n3Ids = new Set(accepted.filter((a) => a.node === 'n3').map((a) => a.requestId))
    t.same(receiver.received.slice(before).filter((r) => n3Ids.has(r.requestId)), [], 'n3, back, delivers nothing a peer took over')
    t.ok((n3.stack.daemon?.lines ?? []).some((l) => /taken over by a peer/.test(String(l.msg))), 'and says so')
  })
})

/**
 * A cluster node against a real redis-server (docs/cluster.md): its lease and registry entry,
 * its counts published as they change, the ADMIT script's sum over the nodes alive, a dead node's
 * count ignored once its lease expired, Idempotency-Keys across nodes, and the failures: Redis
 * killed (503 cluster_unavailable, fast), Redis back empty (503 for one lease while the nodes republish,
 * then admitted on the true counts). The config keys' rules, bad cases included.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { daemonSchema } from '../../src/config/schema.js'
import { startCluster, type ClusterNode } from '../../src/cluster/index.js'
import { clusterKeys } from '../../src/cluster/keys.js'
import { silentLogger } from '../../src/util/logger.js'
import { nullJournal } from '../../src/journal/index.js'
import { redisServerBinary, SKIP_REASON, startRedisServer } from './redis-server.js'
import { waitFor } from '../faults/harness/stack.js'

const DOMAIN = 'd.test'
const LEASE_MS = 2000
const keys = clusterKeys()

const base = { freeswitch: { mode: 'simulator' }, xml_curl: { username: 'u', password: 'password1' } }
const parseCluster = (cluster: unknown) => daemonSchema.safeParse({ ...base, cluster })

t.test('config: cluster.* rules', async (t) => {
  t.notOk(daemonSchema.parse(base).cluster, 'no cluster section: none')
  const ok = parseCluster({ redis: 'redis://127.0.0.1:6379', node_id: 'box-1' })
  t.ok(ok.success)
  t.equal(ok.data?.cluster?.lease_ms, 5000, 'lease_ms defaults to 5000')
  t.ok(parseCluster({ redis: 'rediss://u:p@r.example:6380/2', node_id: 'b', lease_ms: 1000, api_url: 'https://box-1.example:8080' }).success)
  for (const [what, bad] of [
    ['redis not a URL', { redis: 'localhost:6379', node_id: 'a' }],
    ['redis of another scheme', { redis: 'http://127.0.0.1:6379', node_id: 'a' }],
    ['redis missing', { node_id: 'a' }],
    ['node_id missing', { redis: 'redis://h:1' }],
    ['node_id with a colon', { redis: 'redis://h:1', node_id: 'a:b' }],
    ['node_id empty', { redis: 'redis://h:1', node_id: '' }],
    ['lease_ms below 1000', { redis: 'redis://h:1', node_id: 'a', lease_ms: 999 }],
    ['lease_ms above 60000', { redis: 'redis://h:1', node_id: 'a', lease_ms: 60001 }],
    ['lease_ms not whole', { redis: 'redis://h:1', node_id: 'a', lease_ms: 1500.5 }],
    ['api_url not http', { redis: 'redis://h:1', node_id: 'a', api_url: 'ftp://x' }],
    ['an unknown key', { redis: 'redis://h:1', node_id: 'a', ttl: 3 }],
  ] as const) {
    t.notOk(parseCluster(bad).success, `refused: ${what}`)
  }
})

t.test('nodes against a real redis-server', { skip: redisServerBinary() === undefined ? SKIP_REASON : false }, async (t) => {
  const redis = await startRedisServer(t)
  const probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 100 })
  probe.on('error', () => undefined)
  await probe.connect()
  t.teardown(() => probe.disconnect())

  const counts = new Map<string, number>([
    ['a', 0],
    ['b', 0],
  ])
  const nodes: ClusterNode[] = []
  const node = async (id: string): Promise<ClusterNode> => {
    const n = await startCluster(
      { redis: redis.url, node_id: id, lease_ms: LEASE_MS },
      { apiUrl: `http://127.0.0.1:1/${id}`, domains: () => [DOMAIN], localInUse: () => counts.get(id) ?? 0, apiPrefix: () => '/api', journal: nullJournal(), logger: silentLogger() },
    )
    nodes.push(n)
    return n
  }
  t.teardown(() => Promise.all(nodes.map((n) => n.close())))
  const a = await node('a')
  const b = await node('b')

  t.test('a node holds a lease, a registry entry and its counts', async (t) => {
    const pttl = await probe.pttl(keys.lease('a'))
    t.ok(pttl > 0 && pttl <= LEASE_MS, `lease expires within lease_ms (pttl ${pttl})`)
    t.equal(await probe.hget(keys.nodes, 'b'), 'http://127.0.0.1:1/b', 'registry: node id -> api url')
    counts.set('a', 3)
    await waitFor('the changed count published', async () => (await probe.hget(keys.inUse(DOMAIN), 'a')) === '3', 3000)
    counts.set('a', 0)
    await waitFor('published again', async () => (await probe.hget(keys.inUse(DOMAIN), 'a')) === '0', 3000)
    // Renewed every lease/3: after two leases it is still there.
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS))
    t.ok((await probe.pttl(keys.lease('a'))) > 0, 'still leased after two lease periods')
  })

  t.test('first admission of a fresh Redis waits one lease (the nodes republish meanwhile)', async (t) => {
    // `since` was set when the first node joined, more than a lease ago by now.
    const r = await a.sharedLimit.reserve(DOMAIN, 4, 2, 2)
    t.ok(r.ok, 'admitted')
    counts.set('a', 2)
  })

  t.test('the sum over the nodes is what is limited', async (t) => {
    const r1 = await b.sharedLimit.reserve(DOMAIN, 4, 2, 2)
    t.ok(r1.ok, 'b takes the last two: 2 + 2 = 4')
    counts.set('b', 2)
    const r2 = await b.sharedLimit.reserve(DOMAIN, 4, 1, 3)
    t.notOk(r2.ok, 'one more is refused')
    if (!r2.ok) t.equal(r2.error.reason, 'channel_limit_reached')
    t.equal(await probe.hget(keys.inUse(DOMAIN), 'b'), '2', 'the refused channel is not counted')
    const r3 = await a.sharedLimit.reserve(DOMAIN, 4, 1, 3)
    t.notOk(r3.ok, 'on the other node too')
    counts.set('a', 1)
    await waitFor('a published 1', async () => (await probe.hget(keys.inUse(DOMAIN), 'a')) === '1', 3000)
    t.ok((await b.sharedLimit.reserve(DOMAIN, 4, 1, 3)).ok, 'a slot freed on a is usable on b')
    counts.set('b', 3)
  })

  t.test("a dead node's count stops counting when its lease expires", async (t) => {
    // a stops renewing (as if killed) while holding 1: b (3) cannot take a 2nd until a's lease ends.
    await a.close()
    nodes.splice(nodes.indexOf(a), 1)
    const r = await b.sharedLimit.reserve(DOMAIN, 4, 1, 4)
    t.notOk(r.ok, "refused while a's lease lives")
    const since = Date.now()
    await waitFor("a's lease expired", async () => (await probe.exists(keys.lease('a'))) === 0, 3 * LEASE_MS)
    t.ok(Date.now() - since <= LEASE_MS + 1000, "within one lease (and the poll's slack)")
    t.ok((await b.sharedLimit.reserve(DOMAIN, 4, 1, 4)).ok, "admitted once a's lease expired")
    t.equal(await probe.hexists(keys.inUse(DOMAIN), 'a'), 0, "the dead node's count is removed")
    counts.set('b', 4)
  })

  t.test('Idempotency-Keys across nodes: new, pending elsewhere (waited for), replayed, reused, freed by an error reply', async (t) => {
    const c = await node('c')
    t.same(await c.idempotency.claim(DOMAIN, 'k1', 'digest-1', 'req-1'), { kind: 'new' })
    // b's repeat waits while c is still placing the first...
    const waiting = b.idempotency.claim(DOMAIN, 'k1', 'digest-1', 'req-2')
    await new Promise((r) => setTimeout(r, 300))
    c.idempotency.settle(DOMAIN, 'k1', 'digest-1', 'req-1', '{"result_code":0}')
    t.same(await waiting, { kind: 'replay', reply: '{"result_code":0}', requestId: 'req-1' }, '...and gets its reply')
    t.same(await b.idempotency.claim(DOMAIN, 'k1', 'digest-2', 'req-3'), { kind: 'conflict' }, 'another body: conflict')
    t.same(await b.idempotency.claim(DOMAIN.toUpperCase(), 'k1', 'digest-1', 'req-4'), { kind: 'replay', reply: '{"result_code":0}', requestId: 'req-1' }, 'domains compare without case')
    t.same(await b.idempotency.claim('other.test', 'k1', 'digest-2', 'req-5'), { kind: 'new' }, 'keys are per domain')
    t.same(await c.idempotency.claim(DOMAIN, 'k2', 'digest-1', 'req-6'), { kind: 'new' })
    c.idempotency.settle(DOMAIN, 'k2', 'digest-1', 'req-6', undefined)
    await waitFor('k2 freed', async () => (await b.idempotency.claim(DOMAIN, 'k2', 'digest-9', 'req-7')).kind === 'new', 3000)
    t.pass('an error reply frees the key: another request may use it')
  })

  t.test('Redis killed: admission refused at once with cluster_unavailable; back empty: refused for one lease, then true counts', async (t) => {
    await redis.kill()
    const started = Date.now()
    const r = await b.sharedLimit.reserve(DOMAIN, 10, 1, 5)
    t.notOk(r.ok)
    if (!r.ok) t.equal(r.error.reason, 'cluster_unavailable')
    t.equal((await b.idempotency.claim(DOMAIN, 'k3', 'digest-1', 'req-8')).kind, 'unavailable', 'an Idempotency-Key cannot be checked either')
    t.ok(Date.now() - started < 3000, 'answered without waiting for Redis')
    await redis.start()
    await waitFor('b renewed on the new Redis', async () => {
      try {
        return (await probe.hget(keys.inUse(DOMAIN), 'b')) === '4'
      } catch {
        return false
      }
    }, 10000)
    const warm = await b.sharedLimit.reserve(DOMAIN, 10, 1, 5)
    t.notOk(warm.ok, 'refused right after the restart: other nodes may not have republished yet')
    if (!warm.ok) t.equal(warm.error.reason, 'cluster_unavailable')
    await new Promise((r) => setTimeout(r, LEASE_MS + 200))
    t.ok((await b.sharedLimit.reserve(DOMAIN, 5, 1, 5)).ok, 'after one lease: admitted (4 + 1 <= 5)')
    t.notOk((await b.sharedLimit.reserve(DOMAIN, 5, 1, 6)).ok, 'and the limit holds (6 > 5)')
  })
})

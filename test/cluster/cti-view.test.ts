/**
 * The CTI view's seam on Redis (src/cluster/cti-view.ts, docs/cluster.md "One CTI view"), two
 * nodes in this process (startCluster, the daemon's own wiring) on a real redis-server, each
 * given a fake CTI (its channels, its command runner): a shared channel reaches the peer's view;
 * a lost message (a gap in a node's numbers) makes the peer re-read the node's hash, and a
 * message the hash does not back is not believed; a command reaches the owning node's CTI and
 * its answer comes back; a node that does not listen is answered `cluster_unavailable` at once; Redis killed: after a lease
 * the view holds this box's channels only; Redis back empty: the peers' channels come back; a
 * stopped node's channels leave once its lease expired.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { startCluster, type ClusterNode } from '../../src/cluster/index.js'
import { clusterKeys } from '../../src/cluster/keys.js'
import type { CommandSource, LocalCti, RemoteChange, SharedChannel } from '../../src/cti/peers.js'
import { silentLogger } from '../../src/util/logger.js'
import { nullJournal } from '../../src/journal/index.js'
import { redisServerBinary, SKIP_REASON, startRedisServer } from './redis-server.js'
import { waitFor } from '../faults/harness/stack.js'

const DOMAIN = 'd.test'
const LEASE_MS = 1000
const keys = clusterKeys()
t.setTimeout(120_000)

const channel = (uuid: string, state: string, parties: string[] = ['1']): SharedChannel => ({
  uuid,
  domain: DOMAIN,
  parties,
  userId: parties[0],
  view: JSON.stringify({ uuid, state, user_id: parties[0] ?? null }),
})

class FakeCti implements LocalCti {
  readonly mine = new Map<string, SharedChannel>()
  readonly changes: RemoteChange[] = []
  readonly commands: Array<{ source: CommandSource; frame: string }> = []
  channels(): Iterable<SharedChannel> {
    return this.mine.values()
  }
  async command(source: CommandSource, frame: string): Promise<string> {
    this.commands.push({ source, frame })
    return JSON.stringify({ type: 'result', done: JSON.parse(frame) as unknown })
  }
}

t.test('the CTI view between two nodes on a real redis-server', { skip: redisServerBinary() === undefined ? SKIP_REASON : false }, async (t) => {
  const redis = await startRedisServer(t)
  const probe = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => 100 })
  probe.on('error', () => undefined)
  t.teardown(() => probe.disconnect())
  const nodes: ClusterNode[] = []
  t.teardown(() => Promise.all(nodes.map((n) => n.close())))
  const node = async (id: string): Promise<{ node: ClusterNode; cti: FakeCti }> => {
    const n = await startCluster(
      { redis: redis.url, node_id: id, lease_ms: LEASE_MS },
      { apiUrl: `http://127.0.0.1:1/${id}`, domains: () => [DOMAIN], localInUse: () => 0, apiPrefix: () => '/api', journal: nullJournal(), logger: silentLogger() },
    )
    nodes.push(n)
    const cti = new FakeCti()
    n.ctiPeers.attach(cti, (c) => cti.changes.push(c))
    return { node: n, cti }
  }
  const share = (n: { node: ClusterNode; cti: FakeCti }, ch: SharedChannel, removed = false): void => {
    if (removed) n.cti.mine.delete(ch.uuid)
    else n.cti.mine.set(ch.uuid, ch)
    n.node.ctiPeers.share(ch, removed)
  }
  const seen = (n: { node: ClusterNode }, uuid: string): string | undefined => n.node.ctiPeers.channel(uuid)?.view

  const a = await node('a')
  // Shared before the peer exists: it reads a's hash when it starts.
  share(a, channel('early', 'ringing'))
  const b = await node('b')
  await waitFor("a's early channel in b's view", () => seen(b, 'early') !== undefined, 10000)
  t.equal(b.node.ctiPeers.channel('early')?.node, 'a', 'owned by a')

  share(b, channel('x1', 'calling', ['2']))
  await waitFor("b's channel in a's view", () => seen(a, 'x1') !== undefined, 5000)
  share(b, channel('x1', 'answered', ['2', '1']))
  await waitFor('its change', () => seen(a, 'x1')?.includes('answered') === true, 5000)
  t.same([...a.node.ctiPeers.channelsOf('D.TEST')].map((c) => c.uuid), ['x1'], 'channelsOf: the domain, case-insensitively')
  t.same(a.node.ctiPeers.channel('x1')?.parties, ['2', '1'], 'parties travel')
  share(b, channel('x1', 'answered', ['2', '1']))
  share(b, channel('x1', 'hangup', ['2', '1']), true)
  await waitFor('its end', () => seen(a, 'x1') === undefined, 5000)
  t.same(
    a.cti.changes.filter((c) => c.channel.uuid === 'x1').map((c) => [JSON.parse(c.channel.view).state as string, c.removed]),
    [['calling', false], ['answered', false], ['hangup', true]],
    'added, changed once (the same view again is not sent), removed with the view its node ended it with',
  )

  // A message five numbers ahead (as after lost ones): b re-reads a's hash, which does not have it.
  const [run = '', last = '0'] = ((await probe.hget(keys.ctiChannels('a'), '~seq')) ?? '').split(':')
  const forged = { node: 'a', run, seq: Number(last) + 5, uuid: 'forged', domain: DOMAIN, parties: [], user_id: null, removed: false, view: { uuid: 'forged' } }
  await probe.publish(keys.ctiEvents(DOMAIN), JSON.stringify(forged))
  share(a, channel('after-gap', 'ringing'))
  await waitFor('the next true change', () => seen(b, 'after-gap') !== undefined, 5000)
  t.equal(seen(b, 'forged'), undefined, 'a message after a gap is checked against the hash: the channel only it names is not in the view')
  await probe.publish(keys.ctiEvents(DOMAIN), '{"node":"a","garbage":true}')

  // Commands: to the owning node's CTI and back; to a node that does not listen, at once.
  const source: CommandSource = { domain: DOMAIN, userId: '1', credential: 'ticket', readOnly: false }
  const reply = await b.node.ctiPeers.command('a', source, '{"id":1,"cmd":"hangup","uuid":"early"}', (d) => `unreachable: ${d}`)
  t.same(JSON.parse(reply), { type: 'result', done: { id: 1, cmd: 'hangup', uuid: 'early' } }, "a's CTI answered")
  t.same(a.cti.commands, [{ source, frame: '{"id":1,"cmd":"hangup","uuid":"early"}' }], 'with the connection\'s identity')
  t.match(await b.node.ctiPeers.command('nobody', source, '{}', (d) => `unreachable: ${d}`), /^unreachable: .*does not listen/, 'no such node: unreachable, nothing done')

  // Redis killed: after a lease, b's view holds no channel of a; back empty: a republishes.
  const changesBefore = b.cti.changes.length
  await redis.kill()
  await waitFor("a's channels gone from b's view", () => seen(b, 'early') === undefined, 10000)
  t.ok(b.cti.changes.slice(changesBefore).every((c) => c.removed), 'only removals meanwhile')
  share(a, channel('while-down', 'ringing'))
  await redis.start()
  await waitFor("a's channels back in b's view", () => seen(b, 'early') !== undefined && seen(b, 'while-down') !== undefined, 15000)
  t.ok(await probe.hexists(keys.ctiChannels('a'), 'early'), 'a rewrote its hash into the empty Redis')

  // a's hash deleted behind its back (as a peer does while a's lease has lapsed): a writes it again.
  await probe.del(keys.ctiChannels('a'))
  await waitFor('a rewrote its hash', async () => (await probe.hexists(keys.ctiChannels('a'), 'early')) === 1, 5000)
  t.pass('a rewrote its hash, deleted behind its back')

  // a stops (its lease left to expire): its channels leave b's view, and its hash Redis.
  const stopping = nodes.shift()
  await stopping?.close()
  await waitFor("a's channels gone after its lease", () => seen(b, 'early') === undefined && seen(b, 'while-down') === undefined, 10000)
  await waitFor("a's hash deleted", async () => (await probe.exists(keys.ctiChannels('a'))) === 0, 5000)
  t.equal([...b.node.ctiPeers.channelsOf(DOMAIN)].length, 0, 'b sees no channel of a')
})
